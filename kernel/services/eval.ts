/**
 * `eval`: every strategy measured side by side on one frozen snapshot of a session. The source is
 * read and hashed once and copied into a private temporary directory; every strategy plans through
 * the plan pipeline against that copy with the same policy, and each rewrite is rendered by the
 * provider into a private staging file, verified, scored and discarded. The source, the vault and
 * the provider's store are only read.
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type * as T from '../../schemas/generated/types.js';
import { maxTranscriptBytes } from '../../sdk/limits.js';
import type { ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import { removeOnExit } from '../exit-cleanup.js';
import { errorCode, evaluateSession, type EvalBaseline, type RenderedCandidate, type StrategyOutcome } from '../eval/index.js';
import { contextSeriesFromSource } from '../eval/context-series.js';
import { rewritesFile } from '../eval/plan-metrics.js';
import type { JobProgress } from '../eval/parallel-runner.js';
import { Slots } from '../eval/slots.js';
import type { SessionTimeline } from '../eval/report-html.js';
import { bindManifest, prepareManifest, type BoundCheck } from '../eval/study-manifest.js';
import { scoreRetention } from '../eval/study-score.js';
import { messageShapeSlots, type TextSlot } from '../eval/study-slots.js';
import { transcriptSample } from '../policy/adaptive.js';
import { contextTokens, reportedContext, requireReadableContext, requireResumableSession } from '../policy/context.js';
import { effectivePolicy } from '../policy/effective-policy.js';
import { planSession } from '../policy/plan-pipeline.js';
import { discardStaging } from '../publish/staging.js';
import { viewOfPublication } from '../publish/publications.js';
import { sourceFindings } from './findings.js';
import { isActive } from '../sessions/detect.js';
import { resolveSession } from '../sessions/selector.js';
import { recentYields, resolveSessionConfig, strategyRunner, type ParsedSession, type PlanOptions } from './plan.js';
import { requireStrategyParams } from './policy-params.js';
import type { Runtime } from './runtime.js';

// ---------------------------------------------------------------- private copies

/**
 * A private temporary directory (0700, in the system temp dir) for the copies one command works
 * on. Each copy sits in its own subdirectory under the source's own file name, because providers
 * read identity from the name (a Codex rollout's id, a Claude session file's stem).
 */
export class PrivateWorkspace {
  private copies = 0;

  private constructor(readonly dir: string) {}

  static async create(prefix = 'gobstopper-eval-'): Promise<PrivateWorkspace> {
    // mkdtemp creates the directory 0700.
    return new PrivateWorkspace(await mkdtemp(join(tmpdir(), prefix)));
  }

  /** Creates a new 0600 file named `name` in a subdirectory of its own, exclusively. */
  private async create(kind: string, name: string) {
    const sub = join(this.dir, `${kind}-${++this.copies}`);
    await mkdir(sub, { mode: 0o700 });
    const path = join(sub, name);
    const handle = await open(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
    return { path, handle };
  }

  /** Writes `bytes` to a new 0600 file named `name`; `mtimeMs` carries the source's age over. */
  async writeCopy(name: string, bytes: Buffer, mtimeMs?: number): Promise<string> {
    const { path, handle } = await this.create('copy', name);
    try {
      let written = 0;
      while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written, null)).bytesWritten;
    } finally {
      await handle.close();
    }
    if (mtimeMs !== undefined) await utimes(path, new Date(mtimeMs), new Date(mtimeMs));
    return path;
  }

  /**
   * A new empty private staging file for a provider to render into. Unlike apply's staging (which
   * is published under a name the provider picks), it carries the source's own file name, so the
   * provider verifies the candidate under the identity the source has (a Codex rollout's id).
   */
  async stagingFile(name: string): Promise<string> {
    const { path, handle } = await this.create('stage', name);
    await handle.close();
    return path;
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

export async function withWorkspace<R>(prefix: string, body: (ws: PrivateWorkspace) => Promise<R>): Promise<R> {
  const ws = await PrivateWorkspace.create(prefix);
  const kept = removeOnExit(ws.dir);
  try {
    return await body(ws);
  } finally {
    await ws.dispose();
    kept();
  }
}

export interface FrozenSource {
  path: string;
  bytes: Buffer;
  sha256: string;
  mtimeMs: number;
}

/**
 * Reads a transcript once, whole, without following a symlink, within the transcript size limit.
 * A file that vanished keeps the ENOENT code so a bench reports it as gone rather than broken.
 */
export async function freezeSource(path: string, limit = maxTranscriptBytes()): Promise<FrozenSource> {
  let handle;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw Object.assign(new Error(`${path} no longer exists`), { code: 'ENOENT' });
    if (code === 'ELOOP') throw new GobstopperError('symlink_refused', `${path} is a symbolic link; pass the real path`);
    throw new GobstopperError('source_unreadable', `cannot read ${path} (${code ?? 'error'})`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new GobstopperError('not_a_transcript', `${path} is not a regular file`);
    if (st.size > limit) throw new GobstopperError('transcript_too_large', `${path} is ${st.size} bytes; at most ${limit} are read (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)`);
    const bytes = await handle.readFile();
    return { path, bytes, sha256: createHash('sha256').update(bytes).digest('hex'), mtimeMs: st.mtimeMs };
  } finally {
    await handle.close();
  }
}

/**
 * The session's policy could not be resolved (a bad config layer for it, bounds broken after
 * layering). Same code and message as the cause, so `eval` reports it unchanged; the bench files it
 * under its own failure kind.
 */
export class PolicyResolutionError extends GobstopperError {
  constructor(cause: unknown) {
    const known = cause instanceof GobstopperError ? cause : null;
    super(known?.code ?? 'policy_resolution_failed', known?.message ?? (cause as Error)?.message ?? String(cause), { exit: known?.exit ?? 1, details: known?.details, cause });
  }
}

/**
 * What the provider says about the private copy is said about the user's file: the copy is a
 * name nobody can look up once the eval is over.
 */
function aboutTheSource(error: unknown, copy: string, source: string): unknown {
  if (!(error instanceof GobstopperError) || !error.message.includes(copy)) return error;
  return new GobstopperError(error.code, error.message.replaceAll(copy, source), { exit: error.exit, details: error.details, cause: error });
}

// ---------------------------------------------------------------- strategies

/** The strategies to measure: the requested ones (each must exist), else every one a bundle provides. */
export async function resolveEvalStrategies(runtime: Runtime, requested?: readonly string[]): Promise<string[]> {
  if (requested && requested.length > 0) {
    const unique = [...new Set(requested)];
    for (const id of unique) runtime.host.registry.requireKnown('strategy', id);
    return unique;
  }
  // From the manifests: one bundle that cannot start costs its own rows, not the whole eval.
  return runtime.host.strategyIds();
}

/**
 * The configuration one strategy runs with: the same policy for every row, the strategy swapped in.
 * Parameters belong to the configured strategy only, and a configured external proposer is not a
 * strategy the eval compares.
 */
function configFor(config: ResolvedConfig, strategy: string): ResolvedConfig {
  const params = strategy === config.values.strategy ? config.values.strategy_params : {};
  return { ...config, values: { ...config.values, strategy, strategy_params: params }, external: null };
}

// ---------------------------------------------------------------- what an applied compaction would record

interface RetentionBaseline {
  checks: BoundCheck[];
  /** Byte range of each source line. */
  lines: Array<[number, number]>;
  slotsByLine: Map<number, TextSlot[]>;
}

function lineRanges(bytes: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    out.push([start, end]);
    start = end + 1;
  }
  return out;
}

/**
 * The heuristic checks an applied compaction is measured against (the same candidates
 * `eval-study --prepare-manifest` picks), bound to the source; null when the source has none.
 */
export function retentionBaseline(source: Buffer, items: readonly T.TranscriptItem[]): RetentionBaseline | null {
  // Preparing the manifest parses every live record once; its slots are kept rather than parsed again.
  const slots: TextSlot[] = [];
  const keepSlots = (record: unknown, index: number) => {
    const found = messageShapeSlots(record, index);
    for (const s of found) slots.push(s);
    return found;
  };
  let manifest: T.RetentionManifest;
  try {
    manifest = prepareManifest(source, items, keepSlots);
  } catch (error) {
    if (error instanceof GobstopperError && error.code === 'no_retention_candidates') return null;
    throw error;
  }
  const slotsByLine = new Map<number, TextSlot[]>();
  for (const s of slots) (slotsByLine.get(s.record) ?? slotsByLine.set(s.record, []).get(s.record)!).push(s);
  return { checks: bindManifest(manifest, source, items, slots), lines: lineRanges(source), slotsByLine };
}

/**
 * The candidate's live text slots. Renders edit records in place and append new ones, so a line
 * byte-identical to the source line at the same index keeps that line's slots and liveness; only
 * changed and appended lines are parsed (and count as live: a render only edits live records).
 */
export function candidateSlots(baseline: RetentionBaseline, source: Buffer, candidate: Buffer): TextSlot[] {
  const out: TextSlot[] = [];
  let index = 0;
  for (const [start, end] of lineRanges(candidate)) {
    const at = baseline.lines[index];
    if (at && end - start === at[1] - at[0] && candidate.compare(source, at[0], at[1], start, end) === 0) {
      for (const s of baseline.slotsByLine.get(index) ?? []) out.push(s);
    } else {
      try {
        for (const s of messageShapeSlots(JSON.parse(candidate.toString('utf8', start, end)), index)) out.push(s);
      } catch {
        // A line that is not JSON carries no slot; verify reports it.
      }
    }
    index += 1;
  }
  return out;
}

function itemsCovered(edits: readonly T.Edit[]): number {
  let n = 0;
  for (const e of edits) {
    if (e.op === 'elide') n += e.line_indexes.length;
    else if (e.op === 'inject_digest') n += e.digest.covers_items;
  }
  return n;
}

export function eventRecord(plan: T.CompactionPlan, retention: T.RetentionScore | null): T.EvalEventRecord {
  return {
    action: 'transcript_compact',
    context_tokens_before: plan.context_tokens_before,
    context_tokens_after: plan.context_tokens_after,
    est_reclaimed_tokens: Math.max(0, plan.context_tokens_before - plan.context_tokens_after),
    items_covered: itemsCovered(plan.edits),
    retention_total: retention ? retention.total : null,
    retention_retained: retention ? retention.source_bound_retained : null,
    retention_lexical: retention ? retention.lexical_retained : null,
  };
}

export type EventRetention = Pick<T.CompactionEvent, 'retention_total' | 'retention_retained' | 'retention_lexical'>;

/**
 * The retention fields of an applied compaction's event: the source's heuristic checks scored on
 * the verified candidate (source-bound and lexical tiers). Best-effort, like the event itself: a
 * source that changed, has no candidates or cannot be read gives null, never an error.
 */
export async function measureAppliedRetention(sourcePath: string, sourceSha256: string, items: readonly T.TranscriptItem[], candidatePath: string): Promise<EventRetention | null> {
  try {
    const source = await readFile(sourcePath);
    if (createHash('sha256').update(source).digest('hex') !== sourceSha256) return null;
    const baseline = retentionBaseline(source, items);
    if (!baseline) return null;
    const score = scoreRetention(baseline.checks, candidateSlots(baseline, source, await readFile(candidatePath)));
    return { retention_total: score.total, retention_retained: score.source_bound_retained, retention_lexical: score.lexical_retained };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- rehearsal

export interface RehearsalSource {
  /** The private copy of the source. */
  path: string;
  sessionId: string;
  cwd: string | null;
  items: readonly T.TranscriptItem[];
}

type RehearseModule = typeof import('../rehearse/index.js');

export interface ClientBins {
  claude_code?: string;
  codex?: string;
}

/**
 * `--rehearse`: the real client resumes each rewritten copy offline. As apply's rehearsal does, the
 * source is rehearsed first (once) and each candidate is compared with what the client rebuilt from
 * it, moved by the difference the plan predicts: item estimates count whole stored records, which
 * the client never sends as such. A missing client, an unsupported provider or a source the client
 * will not resume gives one note and no rehearsal, never a failed eval.
 */
export class CandidateRehearsal {
  note: string | null = null;
  private baseline: Promise<{ rebuilt: T.RebuiltContext; predicted: T.RehearsalPrediction } | null> | null = null;

  private constructor(
    private readonly runtime: Runtime,
    private readonly provider: 'claude_code' | 'codex',
    private readonly source: RehearsalSource,
    private readonly mod: RehearseModule,
    private readonly clientBin: string | undefined,
  ) {}

  /** null with a note when the client cannot run at all. */
  static async prepare(runtime: Runtime, provider: string, source: RehearsalSource, bins: ClientBins = {}): Promise<{ rehearsal: CandidateRehearsal | null; note: string | null }> {
    if (provider !== 'claude_code' && provider !== 'codex') {
      return { rehearsal: null, note: `resume rehearsal supports claude_code and codex sessions, not ${provider}; rows show the projected context only` };
    }
    // Loaded only when asked for: it is the one part that runs real clients.
    const mod = await import('../rehearse/index.js');
    const clientBin = bins[provider];
    try {
      mod.resolveClientBin(provider, clientBin, runtime.env);
    } catch (error) {
      if (error instanceof GobstopperError && error.code === 'client_missing') return { rehearsal: null, note: `${error.message}; rows show the projected context only` };
      throw error;
    }
    return { rehearsal: new CandidateRehearsal(runtime, provider, source, mod, clientBin), note: null };
  }

  private async rehearseSource() {
    const predicted = this.mod.predictionFromItems(this.source.items);
    const report = await this.mod.rehearse({ provider: this.provider, path: this.source.path, sessionId: this.source.sessionId, cwd: this.source.cwd, predicted, env: this.runtime.env, clientBin: this.clientBin });
    if (!report.accepted || !report.session_matches || !report.rebuilt) {
      this.note = `the client did not resume the source itself (${report.status}): ${report.reason}; rows show the projected context only`;
      return null;
    }
    return { rebuilt: report.rebuilt, predicted };
  }

  /** The client's verdict on one rendered candidate, or null when the source could not be rehearsed. */
  async candidate(stagingPath: string, items: readonly T.TranscriptItem[]): Promise<T.EvalRehearsal | null> {
    const base = await (this.baseline ??= this.rehearseSource());
    if (!base) return null;
    const predicted = this.mod.predictionFromBaseline(base.rebuilt, base.predicted, this.mod.predictionFromItems(items));
    const report = await this.mod.rehearse({ provider: this.provider, path: stagingPath, sessionId: this.source.sessionId, cwd: this.source.cwd, predicted, env: this.runtime.env, clientBin: this.clientBin });
    return {
      status: report.status,
      ok: report.ok,
      client_context_tokens: report.rebuilt?.est_tokens ?? null,
      client_total_tokens: report.rebuilt?.total_est_tokens ?? null,
      predicted_context_tokens: predicted.est_tokens,
      reason: report.reason,
    };
  }
}

// ---------------------------------------------------------------- one session

export interface EvalOptions extends Omit<PlanOptions, 'strategy'> {
  /** Strategy ids to measure (default: every one the plugin host lists). */
  strategies?: readonly string[];
  rehearse?: boolean;
  /** The client executables a rehearsal runs (default: their environment variables, then PATH). */
  clientBins?: ClientBins;
  /** Timeline for the bench report. */
  timeline?: boolean;
  /** Told as each strategy's row is done: rows done, error rows among them, and how many in all. */
  onProgress?: (progress: JobProgress) => void;
}

export interface EvalTarget {
  provider: string;
  path: string;
}

export interface EvalReport {
  result: T.EvalCommandResult;
  timeline: SessionTimeline | null;
}

interface CandidateMeasure {
  candidate: RenderedCandidate;
  retention: T.RetentionScore | null;
  rehearsal: T.EvalRehearsal | null;
}

/** Candidates are cached by their edits: several strategies often propose the same rewrite. */
const CACHE_SOURCE_LIMIT = 64 * 1024 * 1024;
/**
 * Strategies in flight at once: one proposing, two with the provider, one being scored. Candidates
 * stay in the cache above until the eval ends; a source over the cache limit is measured one row
 * at a time, so one candidate of it is held at a time.
 */
const EVAL_ROWS_IN_FLIGHT = 4;

/** Measures every strategy on the session file at `target.path` (its provider already known). */
export async function evaluateFile(runtime: Runtime, target: EvalTarget, options: EvalOptions = {}): Promise<EvalReport> {
  const strategies = options.strategies && options.strategies.length > 0 ? [...options.strategies] : await resolveEvalStrategies(runtime);
  const provider = await runtime.provider(target.provider);
  const frozen = await freezeSource(target.path, maxTranscriptBytes(runtime.env));
  return withWorkspace('gobstopper-eval-', async (ws) => {
    const copy = await ws.writeCopy(basename(target.path), frozen.bytes, frozen.mtimeMs);
    const read = await provider.parse({ path: copy, expected_sha256: frozen.sha256 }).catch((error: unknown) => {
      throw aboutTheSource(error, copy, target.path);
    });
    requireResumableSession({ ...read.session, path: target.path });
    requireReadableContext({ ...read, session: { ...read.session, path: target.path } });
    const view = await viewOfPublication(runtime.env, isActive(frozen.mtimeMs), { path: target.path, bytes: read.bytes, sha256: read.source_sha256, usage: read.usage });
    const transcript = view.usage === read.usage ? read : { ...read, usage: view.usage };
    const parsed: ParsedSession = { session: transcript.session, provider, transcript, active: view.active, staleReport: view.staleReport };
    // When the parse's findings are not complete, the provider verifies in its own process while
    // this one resolves the policy.
    const sourceVerify = sourceFindings(provider, transcript, copy);
    sourceVerify.catch(() => undefined);
    const recent = await recentYields(runtime, transcript.session);
    const before = contextTokens(transcript);
    let config: ResolvedConfig;
    let policy: T.ResolvedPolicy;
    try {
      config = await resolveSessionConfig(runtime, transcript.session, { ...options, strategy: undefined });
      await requireStrategyParams(runtime, config);
      policy = effectivePolicy(config.values, transcriptSample(transcript, before, recent));
    } catch (error) {
      throw new PolicyResolutionError(error);
    }
    // Sampled on first need: by then the strategies are proposing and the provider is rendering.
    let retention: RetentionBaseline | null | undefined;
    const retentionChecks = () => (retention === undefined ? (retention = retentionBaseline(frozen.bytes, transcript.items)) : retention);
    const baselineFindings = await sourceVerify;
    const rehearsal = options.rehearse
      ? await CandidateRehearsal.prepare(runtime, target.provider, { path: copy, sessionId: transcript.session.session_id, cwd: transcript.session.cwd ?? null, items: transcript.items }, options.clientBins)
      : { rehearsal: null, note: null };
    const now = new Date().toISOString();
    const cache = new Map<string, Promise<CandidateMeasure>>();
    // Strategies run side by side, so the host scores one candidate while the provider renders the
    // next. Proposals take turns, so each is timed on its own. Provider calls are queued two deep:
    // the channel sends one at a time (PluginChannel.takeTurn) and the next goes out the moment the
    // provider answers, before the host turns to scoring; a render or verify may so be timed with
    // the wait for one call of another row.
    const proposing = new Slots(1);
    const providerCalls = new Slots(2);
    const clients = new Slots(1);
    let failedRows = 0;
    const extras = new Map<string, { event: T.EvalEventRecord | null; rehearsal: T.EvalRehearsal | null }>();

    /** Runs `work` and adds the time it took to `clock`: a row's time is its own steps, not its waits. */
    const timed = async <R>(clock: { ms: number }, work: () => Promise<R> | R): Promise<R> => {
      const start = performance.now();
      try {
        return await work();
      } finally {
        clock.ms += performance.now() - start;
      }
    };

    /** The measured candidate; a row that shares one another row rendered adds no time to `clock`. */
    const measure = async (plan: T.CompactionPlan, clock: { ms: number }): Promise<CandidateMeasure> => {
      // Projections stay each plan's own; only what the rendered bytes show is shared.
      // Only file edits reach the file; provider and API-layer controls cannot be rendered.
      const edits = plan.edits.filter((e) => e.op === 'elide' || e.op === 'inject_digest');
      const render = async (): Promise<CandidateMeasure> => {
        const staging = await ws.stagingFile(basename(target.path));
        try {
          await providerCalls.run(() => timed(clock, () => provider.render({ path: copy, source_sha256: frozen.sha256, edits, staging_path: staging, new_session_id: null, now })));
          // The provider verifies the candidate in its process while this one scores it.
          const verifying = providerCalls.run(() => timed(clock, () => provider.verify({ path: staging })));
          verifying.catch(() => undefined);
          const bytes = await readFile(staging);
          const checks = retentionChecks();
          const score = checks ? await timed(clock, () => scoreRetention(checks.checks, candidateSlots(checks, frozen.bytes, bytes))) : null;
          const findings = (await verifying).findings;
          let rehearsed: T.EvalRehearsal | null = null;
          if (rehearsal.rehearsal) {
            const rehearsing = rehearsal.rehearsal;
            const items = (await providerCalls.run(() => timed(clock, () => provider.parse({ path: staging })))).items;
            // One real client at a time: each runs a whole session resume.
            rehearsed = await clients.run(() => timed(clock, () => rehearsing.candidate(staging, items)));
          }
          return { candidate: { bytes, findings }, retention: score, rehearsal: rehearsed };
        } finally {
          await discardStaging(staging);
        }
      };
      if (frozen.bytes.length > CACHE_SOURCE_LIMIT) return render();
      const key = createHash('sha256').update(JSON.stringify(edits)).digest('hex');
      let pending = cache.get(key);
      if (!pending) {
        pending = render();
        cache.set(key, pending);
      }
      return pending;
    };

    const runStrategy = async (strategy: string, _baseline: EvalBaseline): Promise<StrategyOutcome> => {
      const nested = configFor(config, strategy);
      const clock = { ms: 0 };
      const outcome = await proposing.run(() =>
        timed(clock, () =>
          planSession({
            transcript,
            config: nested,
            active: parsed.active,
            recentYields: recent,
            runStrategy: strategyRunner(runtime, parsed, nested, recent),
            provider: provider.info,
          }),
        ),
      );
      if (outcome.status === 'no_plan') return { status: 'no_plan', reason_code: outcome.reason_code, duration_ms: clock.ms };
      const plan = outcome.plan;
      if (!rewritesFile(plan)) return { status: 'plan', plan, candidate: null, duration_ms: clock.ms };
      try {
        const measured = await measure(plan, clock);
        extras.set(strategy, { event: eventRecord(plan, measured.retention), rehearsal: measured.rehearsal });
        return { status: 'plan', plan, candidate: measured.candidate, duration_ms: clock.ms };
      } catch (error) {
        return { status: 'error', message: (error as Error)?.message ?? String(error), code: errorCode(error), plan, duration_ms: clock.ms };
      }
    };

    const result = await evaluateSession(
      {
        provider: transcript.session.provider,
        session_id: transcript.session.session_id,
        source: frozen.bytes,
        source_sha256: frozen.sha256,
        transcript,
        context_tokens: before,
        token_basis: view.staleReport === 'projected' ? 'projected' : reportedContext(transcript.usage) === null ? 'estimated' : 'reported',
        effective_trigger_tokens: policy.effective_trigger_tokens,
        floor_tokens: policy.floor_tokens,
        keep_recent_tool_outputs: policy.keep_recent_tool_outputs,
        source_findings: baselineFindings,
        strategies,
      },
      runStrategy,
      {
        // A candidate of a large source is held one at a time, as the cache is skipped for it.
        concurrency: frozen.bytes.length > CACHE_SOURCE_LIMIT ? 1 : EVAL_ROWS_IN_FLIGHT,
        onRow: options.onProgress
          ? (row, built, total) => {
              if (row.status === 'error') failedRows += 1;
              options.onProgress!({ done: built, failed: failedRows, running: 0, total });
            }
          : undefined,
      },
    );
    for (const row of result.rows) {
      const extra = row.execution_state === 'rendered' ? extras.get(row.strategy) : undefined;
      row.event_record = extra?.event ?? null;
      row.rehearsal = extra?.rehearsal ?? null;
    }
    result.rehearsal_note = rehearsal.rehearsal?.note ?? rehearsal.note;
    const timeline: SessionTimeline | null = options.timeline
      ? {
          provider: transcript.session.provider,
          session: transcript.session.session_id,
          points: contextSeriesFromSource(frozen.bytes, transcript.items),
          compactions: [],
          trigger_tokens: policy.effective_trigger_tokens,
          context_tokens: result.context_tokens,
          token_basis: result.token_basis,
        }
      : null;
    return { result, timeline };
  });
}

/** `eval <session>`: resolves the selector (path, id or prefix), then measures the file. */
export async function evaluateSelector(runtime: Runtime, selector: string, options: EvalOptions = {}): Promise<EvalReport> {
  const strategies = await resolveEvalStrategies(runtime, options.strategies);
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  return evaluateFile(runtime, { provider: session.provider, path: session.path }, { ...options, strategies });
}
