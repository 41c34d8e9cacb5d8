/**
 * `eval-study`: the typed-retention study on private copies. It prepares a heuristic manifest,
 * replays the three masking arms with the provider plugin's own parse/render/verify and the elide
 * strategy's proposal (through the plan pipeline), or scores an already-compacted file (a path, or
 * a vault snapshot rebuilt into a private file) without replaying. Every byte it works on is a copy
 * in a private temporary directory: the session, the vault and the homes are only read, and no
 * model or provider service is called.
 */
import { readFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type * as T from '../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../errors.js';
import { prepareManifestFile } from '../eval/study-output.js';
import { assertNewOutputPath } from '../eval/output-file.js';
import { assertRounds, assertStudySourceSize, parseManifest, readManifestFile } from '../eval/study-manifest.js';
import { againstLineage, type LineageSide } from '../eval/study-lineage.js';
import { auditRetention, runRetentionStudy, type StudyDeps } from '../eval/study-replay.js';
import type { JobProgress } from '../eval/parallel-runner.js';
import type { ProviderClient } from '../plugins/host/clients.js';
import type { ResolvedConfig } from '../config/resolve-config.js';
import { effectivePolicy } from '../policy/effective-policy.js';
import { listReceipts, readableReceipts } from '../publish/receipt.js';
import { discardStaging } from '../publish/staging.js';
import { planSession } from '../policy/plan-pipeline.js';
import { resolveSession } from '../sessions/selector.js';
import { admitEdits } from '../validate/edit-rules.js';
import { readIndex } from '../vault/index-file.js';
import { vaultExists, vaultLayout } from '../vault/layout.js';
import { loadManifest } from '../vault/manifest.js';
import { streamManifestChunks } from '../vault/reconstruct.js';
import { estimatedContext } from '../policy/context.js';
import { checkShaPrefix, resolveShaPrefix } from '../vault/selectors.js';
import { freezeSource, type FrozenSource } from './frozen-source.js';
import { PrivateWorkspace, withWorkspace } from './private-workspace.js';
import { resolveSessionConfig, strategyRunner, type PlanOptions } from './plan.js';
import type { Runtime } from './runtime.js';
import { sha256Hex } from '../digest.js';
import { formatInt } from '../text/numbers.js';

export interface EvalStudyOptions extends Omit<PlanOptions, 'strategy'> {
  /** Write a heuristic manifest to this new file and stop. */
  prepareManifest?: string;
  manifest?: string;
  /** Replay rounds, 1-10 (default 10). */
  rounds?: number;
  /** Score this already-compacted file, or `vault:<sha256>`, instead of replaying. */
  against?: string;
  /** Told as the replay goes: rounds done out of arms × rounds. */
  onProgress?: (progress: JobProgress) => void;
}

export const DEFAULT_STUDY_ROUNDS = 10;
const VAULT_PREFIX = 'vault:';

interface LoadedCopy {
  frozen: FrozenSource;
  /** The file name providers see (identity lives in it). */
  name: string;
  copy: string;
  /** The provider recorded with a vault snapshot: by its index line, or for a fork's retained bytes by its receipt. */
  provider: string | null;
  /** The vault id it was rebuilt from, for `vault:<sha256>`. */
  vault_id?: string;
}

/** Rebuilds a vault snapshot into memory (verified chunk by chunk and whole) for a private copy. */
async function vaultSnapshot(runtime: Runtime, selector: string): Promise<{ frozen: FrozenSource; name: string; provider: string | null; session_id: string | null; vault_id: string }> {
  const layout = vaultLayout(runtime.env);
  // A malformed id is the command line's fault with a vault or without one, as diff and show say.
  checkShaPrefix(selector.slice(VAULT_PREFIX.length));
  if (!(await vaultExists(layout))) throw new GobstopperError('snapshot_not_found', `there is no vault yet, so ${selector} cannot be found`);
  const id = await resolveShaPrefix(layout, selector.slice(VAULT_PREFIX.length), 'snapshot');
  const loaded = await loadManifest(layout, id, runtime.env);
  assertStudySourceSize(loaded.manifest.bytes, 'audit');
  const bytes = Buffer.allocUnsafe(loaded.manifest.bytes);
  await streamManifestChunks(layout, loaded, (chunk, offset) => {
    chunk.copy(bytes, offset);
  });
  const entry = (await readIndex(layout)).find((e) => e.sha256 === id) ?? null;
  // A fork's retained bytes have no index line; the receipt of the publication that made them
  // records its provider. A damaged receipt costs only its own fork, as elsewhere.
  const published = entry ? undefined : (await readableReceipts(layout)).find((r) => r.output_manifest_sha256 === id);
  return {
    frozen: { path: selector, bytes, sha256: loaded.manifest.source_sha256, mtimeMs: (entry?.ts ?? 0) * 1000 },
    // Retained outputs are not indexed; a name without an id keeps providers from reading one into it.
    name: entry ? basename(entry.path) : `snapshot-${id.slice(0, 16)}.jsonl`,
    provider: entry?.provider ?? published?.provider ?? null,
    session_id: entry?.session_id ?? null,
    vault_id: id,
  };
}

async function loadSession(runtime: Runtime, ws: PrivateWorkspace, selector: string): Promise<LoadedCopy & { client: ProviderClient }> {
  if (selector.startsWith(VAULT_PREFIX)) {
    const snap = await vaultSnapshot(runtime, selector);
    if (!snap.provider) throw new GobstopperError('snapshot_provider_unknown', `${selector} is not an indexed session snapshot, so its provider is unknown; pass the session's path or id instead`);
    const client = await runtime.provider(snap.provider);
    return { ...snap, copy: await ws.writeCopy(snap.name, snap.frozen.bytes, undefined, selector), client };
  }
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  const frozen = await freezeSource(session.path);
  const name = basename(session.path);
  return { frozen, name, copy: await ws.writeCopy(name, frozen.bytes, frozen.mtimeMs, session.path), provider: session.provider, client: await runtime.provider(session.provider) };
}

/** The compacted file `--against` names, copied privately; it must be the session's provider's. */
async function loadAgainst(runtime: Runtime, ws: PrivateWorkspace, against: string, provider: ProviderClient): Promise<LoadedCopy> {
  if (against.startsWith(VAULT_PREFIX)) {
    const snap = await vaultSnapshot(runtime, against);
    if (snap.provider && snap.provider !== provider.id) {
      throw new GobstopperError('provider_mismatch', `${against} is a ${snap.provider} snapshot but the session is ${provider.id}; the providers must match`);
    }
    return { ...snap, copy: await ws.writeCopy(snap.name, snap.frozen.bytes, undefined, against) };
  }
  // The provider runs in its own directory: it is handed the path this command was given, resolved.
  const path = resolve(against);
  const frozen = await freezeSource(path).catch((error: unknown) => {
    // Every other session argument takes an id, so an id here is the likely slip: say what it takes.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new GobstopperError('against_not_found', `--against ${against} does not exist; it takes the path of a compacted transcript or vault:<sha256> of an archived one, not a session id`);
    }
    throw error;
  });
  const identified = await provider.identify({ path: frozen.path });
  if (!identified.matches) throw new GobstopperError('provider_mismatch', `${against} is not a ${provider.id} transcript; --against needs a file of the session's provider`);
  return { frozen, name: basename(against), copy: await ws.writeCopy(basename(against), frozen.bytes, frozen.mtimeMs, path), provider: provider.id };
}

/**
 * The study's injected parts, all on private copies: the provider's parse, render and verify, the
 * elide strategy's proposal through the plan pipeline, and the kernel's edit admission.
 */
function studyDeps(runtime: Runtime, ws: PrivateWorkspace, provider: ProviderClient, session: LoadedCopy, initial: T.Transcript, config: ResolvedConfig): StudyDeps {
  const paths = new Map<string, string>([[session.frozen.sha256, session.copy]]);
  const parsed = new Map<string, T.Transcript>([[session.frozen.sha256, initial]]);
  const verified = new Map<string, T.Finding[]>();
  const now = new Date().toISOString();
  const pathOf = async (bytes: Buffer, sha: string): Promise<string> => {
    let path = paths.get(sha);
    if (!path) {
      path = await ws.writeCopy(session.name, bytes);
      paths.set(sha, path);
    }
    return path;
  };
  return {
    async parse(bytes) {
      const sha = sha256Hex(bytes);
      const known = parsed.get(sha);
      if (known) return known;
      const transcript = await provider.parse({ path: await pathOf(bytes, sha), expected_sha256: sha });
      parsed.set(sha, transcript);
      return transcript;
    },
    async verify(bytes) {
      const sha = sha256Hex(bytes);
      const known = verified.get(sha);
      if (known) return known;
      const findings = (await provider.verify({ path: await pathOf(bytes, sha) })).findings;
      verified.set(sha, findings);
      return findings;
    },
    async render(bytes, edits) {
      const sha = sha256Hex(bytes);
      const staging = await ws.stagingFile(session.name);
      try {
        await provider.render({ path: await pathOf(bytes, sha), source_sha256: sha, edits, staging_path: staging, new_session_id: null, now });
        return await readFile(staging);
      } finally {
        await discardStaging(staging);
      }
    },
    async proposeElide({ transcript, policy }) {
      // The arms select with elide's own proposal; the study passes floor 0 and re-walks to the real floor.
      const params = config.values.strategy === 'elide' ? config.values.strategy_params : {};
      const nested: ResolvedConfig = {
        ...config,
        values: { ...config.values, strategy: 'elide', trigger_tokens: policy.trigger_tokens, floor_tokens: policy.floor_tokens, adaptive: false, strategy_params: params },
        external: null,
      };
      const parsedSession = { session: transcript.session, provider, transcript, active: false };
      const outcome = await planSession({
        transcript,
        config: nested,
        active: false,
        recentYields: [],
        runStrategy: strategyRunner(runtime, parsedSession, nested, []),
        provider: provider.info,
      });
      return outcome.status === 'plan' ? outcome.plan : null;
    },
    validate(transcript, policy, edits) {
      admitEdits(edits, { items: transcript.items, keep_recent_tool_outputs: policy.keep_recent_tool_outputs, provider: transcript.session.provider });
    },
  };
}

/**
 * Refuses an `--against` file that is not the session, a state of it, or a publication the vault's
 * receipts trace back to it. The receipts are read best effort, like every view of publications: an
 * unreadable vault only means fewer files are recognised.
 */
async function assertDerived(runtime: Runtime, against: string, source: LineageSide, after: LineageSide): Promise<void> {
  const receipts = await listReceipts(vaultLayout(runtime.env)).catch(() => [] as T.OperationReceipt[]);
  if (againstLineage(source, after, receipts) !== null) return;
  throw new GobstopperError(
    'against_unrelated',
    `--against ${against} is session ${after.session_id}, which is neither session ${source.session_id} nor a fork of it that the vault's receipts record; it is not a compaction of this session`,
    { details: { session_id: source.session_id, against_session_id: after.session_id } },
  );
}

/** A path flag that was passed, even as an empty string (which is then refused, not ignored). */
const given = (value: string | undefined): value is string => value !== undefined;

export async function evalStudy(runtime: Runtime, selector: string, options: EvalStudyOptions): Promise<T.EvalStudyCommandResult> {
  for (const [flag, value] of [['--manifest', options.manifest], ['--against', options.against]] as const) {
    if (value !== undefined && value.trim() === '') throw usageError('empty_path', `${flag} is empty; name a file`);
  }
  if (given(options.prepareManifest) && (given(options.manifest) || given(options.against))) throw usageError('conflicting_flags', '--prepare-manifest cannot be combined with --manifest or --against');
  // An audit scores the file as it is, and preparing a manifest replays nothing: replay rounds and a
  // policy would change nothing there, and accepting them would let a reader believe they did.
  const noReplay = given(options.against) ? { flag: '--against', does: 'scores the file as it is' } : given(options.prepareManifest) ? { flag: '--prepare-manifest', does: 'only writes the manifest' } : null;
  if (noReplay) {
    const replayOnly = ([['--rounds', options.rounds], ['--trigger', options.trigger], ['--floor', options.floor], ['--preset', options.preset], ['--config', options.configPath]] as const)
      .filter(([, v]) => v !== undefined)
      .map(([flag]) => flag);
    if (replayOnly.length > 0) {
      const shape = replayOnly.length === 1 ? 'it shapes' : 'they shape';
      throw usageError('conflicting_flags', `${replayOnly.join(', ')} cannot be combined with ${noReplay.flag}: ${shape} the replay, and ${noReplay.flag} ${noReplay.does}`);
    }
  }
  if (!given(options.prepareManifest) && !given(options.manifest)) throw usageError('manifest_required', '--manifest <file> is required (write one first with --prepare-manifest <new file>)');
  const replay = !given(options.prepareManifest) && !given(options.against);
  const rounds = options.rounds ?? DEFAULT_STUDY_ROUNDS;
  if (replay) assertRounds(rounds);
  if (given(options.prepareManifest)) assertNewOutputPath(options.prepareManifest);
  // A bad manifest is refused before the session is even read.
  const manifestFile = given(options.manifest) ? readManifestFile(options.manifest) : null;
  const manifest = manifestFile ? parseManifest(manifestFile.bytes) : null;

  return withWorkspace('gobstopper-study-', async (ws) => {
    const session = await loadSession(runtime, ws, selector);
    const provider = session.client;
    if (replay) assertStudySourceSize(session.frozen.bytes.length, 'replay');
    const transcript = await provider.parse({ path: session.copy, expected_sha256: session.frozen.sha256 });

    if (given(options.prepareManifest)) return prepareManifestFile(options.prepareManifest, session.frozen.bytes, transcript.items).result;

    if (given(options.against)) {
      const after = await loadAgainst(runtime, ws, options.against, provider);
      const afterTranscript = await provider.parse({ path: after.copy, expected_sha256: after.frozen.sha256 });
      await assertDerived(runtime, options.against, { session_id: transcript.session.session_id, sha256: session.frozen.sha256, items: transcript.items }, {
        session_id: afterTranscript.session.session_id,
        sha256: after.frozen.sha256,
        vault_id: after.vault_id ?? null,
        items: afterTranscript.items,
      });
      // No compaction holds more context than its source: such a file is another session (or a
      // later one), and scoring it would report convincing numbers about the wrong file.
      const before = estimatedContext(transcript.items);
      const grown = estimatedContext(afterTranscript.items);
      if (grown > before) {
        throw new GobstopperError('against_not_a_compaction', `--against ${options.against} holds more context than the session (~${formatInt(grown)} tokens against ~${formatInt(before)}); it is not a compaction of this session`, {
          details: { context_before: before, context_after: grown },
        });
      }
      return auditRetention({
        provider: provider.id,
        source: session.frozen.bytes,
        source_transcript: transcript,
        source_findings: (await provider.verify({ path: session.copy })).findings,
        after: after.frozen.bytes,
        after_transcript: afterTranscript,
        after_findings: (await provider.verify({ path: after.copy })).findings,
        manifest: manifest!,
        manifest_sha256: manifestFile!.sha256,
      });
    }

    const config = await resolveSessionConfig(runtime, transcript.session, { ...options, strategy: undefined });
    const policy: T.ResolvedPolicy = { ...effectivePolicy(config.values, null), strategy: 'elide' };
    return runRetentionStudy(studyDeps(runtime, ws, provider, session, transcript, config), {
      provider: provider.id,
      source: session.frozen.bytes,
      manifest: manifest!,
      manifest_sha256: manifestFile!.sha256,
      policy,
      rounds,
      onRound: options.onProgress ? (done, total) => options.onProgress!({ done, failed: 0, running: done < total ? 1 : 0, total }) : undefined,
    });
  });
}
