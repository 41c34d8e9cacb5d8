/**
 * The publication spine shared by apply, fork and undo: render into private staging, verify the
 * candidate (no new findings, smaller when compacting), retain its exact bytes in the vault, write
 * a pending receipt, re-check the source, publish without clobbering, complete the receipt.
 *
 * A crash at any step leaves the source untouched and nothing visible in the provider's store
 * until the final link; a retry with the same inputs finds the receipt and finishes the same
 * operation from the retained bytes instead of re-running anything.
 */
import { randomUUID } from 'node:crypto';
import { lstat, open } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import type * as T from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import type { ProviderClient } from '../plugins/host/clients.js';
import { faultPoint, type FaultHook } from '../publish/faults.js';
import { noteForStop } from '../exit-cleanup.js';
import { completedNote, publishNoted } from '../publish/published-note.js';
import { checkPublishTarget, hashRegularFile } from '../publish/publish.js';
import { discardPendingReceipt, listReceipts, lockOperation, markReceiptCompleted, operationId, readReceipt, writePendingReceipt, RECEIPT_SCHEMA_VERSION, type OperationKind } from '../publish/receipt.js';
import { finishOperation } from '../publish/reconcile.js';
import { createStagingFile, discardStaging, flushStaging, keepStagingDirs, withThrowawayStaging } from '../publish/staging.js';
import { shellWord } from '../text/shell-word.js';
import type { VaultLayout } from '../vault/layout.js';
import { storeRetained } from '../vault/snapshot.js';
import { newFindings } from './findings.js';

export interface Candidate {
  provider: ProviderClient;
  session: T.SessionHandle;
  /** The source whose identity the operation is bound to. */
  sourcePath: string;
  sourceSha256: string;
  sourceBytes: number;
  kind: OperationKind;
  inputsSha256: string;
  outputSessionId: string;
  /** What the provider renders from (the source, or a restored snapshot in staging). */
  renderPath: string;
  renderSha256: string;
  edits: T.Edit[];
  strategyLabel: string;
  /** A compaction's projected context after it, kept in the receipt (see publications.ts). */
  contextTokensAfter?: number;
  /**
   * The source's vault snapshot. A promise lets the caller archive the source while the provider
   * renders (both only read it); nothing is retained or published before it settles.
   */
  snapshotManifestSha256: string | Promise<string>;
  /** Findings of what was rendered from; the candidate may not add any. */
  baselineFindings: T.Finding[] | Promise<T.Finding[]>;
  /** Compactions must shrink the file; forks and restores keep its size. */
  requireSmaller: boolean;
  /**
   * Refuse a candidate with any verify error, not only added ones: a copy made to be resumed (fork)
   * is worth publishing only if it would resume. Errors the copy itself repairs (a file name that
   * disagrees with the session id it holds) do not count against it.
   */
  requireNoErrors?: boolean;
  /** Refuse to publish if the source changed since it was read (not for restores: the source may be gone). */
  recheckSource: boolean;
  /**
   * A read of the source made after planning that already matched `sourceSha256` (apply's
   * snapshot), with the file it read. When given, the source is not hashed again: only its identity
   * is compared right before publication.
   */
  sourceRead?: Promise<{ sha256: string; dev: number; ino: number; size: number; mtimeMs: number }>;
  /** Runs on the verified staging file before anything is retained (resume rehearsal). */
  beforeRetain?: (stagingPath: string, render: T.ProviderRenderResult) => Promise<void>;
  /** Told as the long steps begin, for a progress line. */
  onStep?: (step: PublicationStep) => void;
  fault?: FaultHook;
  env: NodeJS.ProcessEnv;
  now?: Date;
  /** The caller holds the operation's lock already (apply takes it before it snapshots). */
  operationLocked?: boolean;
}

/** The steps of a publication that take long enough on a large session to be worth showing. */
export type PublicationStep = 'rendering' | 'verifying' | 'publishing';

export interface PublishedFork {
  receipt: T.OperationReceipt;
  /** The operation had already been published (or was finished from its receipt). */
  reused: boolean;
  render: T.ProviderRenderResult | null;
  candidateFindings: T.Finding[];
}

/**
 * The command a person pastes to resume the fork. It starts with a `cd` when the provider names a
 * directory to run it from: Claude Code finds a session only from its project's directory.
 */
export function resumeCommandText(argv: string[], cwd?: string | null, env?: Record<string, string>): string {
  const assignments = Object.entries(env ?? {}).map(([name, value]) => `${name}=${shellWord(value)} `);
  const command = assignments.join('') + argv.map(shellWord).join(' ');
  // A directory that is not absolute means nothing where the user stands (and `-x` would read as an option).
  return cwd && isAbsolute(cwd) ? `cd ${shellWord(cwd)} && ${command}` : command;
}

export type ForkPlace = Pick<Candidate, 'provider' | 'session' | 'sourcePath' | 'outputSessionId'>;

/** Where the provider puts the fork of `c` made at `now`, and how it is resumed. */
export function forkTargetOf(c: ForkPlace, now: Date): Promise<T.ProviderForkTargetResult> {
  return c.provider.forkTarget({ path: c.sourcePath, session_id: c.session.session_id, new_session_id: c.outputSessionId, cwd: c.session.cwd ?? null, now: now.toISOString() });
}

/**
 * Refuses a fork target that is already taken (a file, a link, a missing directory) before the
 * caller archives anything; publication checks the same target again right before it links the
 * fork, so pass the same `now` to publishCandidate.
 */
export async function assertForkTargetFree(c: ForkPlace, now: Date): Promise<void> {
  await checkPublishTarget((await forkTargetOf(c, now)).target_path);
}

/**
 * The newest publication matching `which` whose receipt is still pending: a run that was stopped
 * after its receipt was written. fork and undo pick a fresh id each run, so they look for one of
 * these first and finish it under its own id (its operation is then the same one).
 */
export async function pendingPublication(layout: VaultLayout, which: (receipt: T.OperationReceipt) => boolean): Promise<T.OperationReceipt | null> {
  const pending = (await listReceipts(layout).catch(() => [] as T.OperationReceipt[])).filter((r) => !r.completed && which(r));
  return pending.sort((a, b) => b.ts - a.ts)[0] ?? null;
}

export async function publishCandidate(layout: VaultLayout, c: Candidate): Promise<PublishedFork> {
  const operation = operationId({ kind: c.kind, provider: c.session.provider, source_path: c.sourcePath, source_sha256: c.sourceSha256, inputs_sha256: c.inputsSha256 });
  const lock = c.operationLocked ? null : await lockOperation(layout, operation);
  try {
    const existing = await readReceipt(layout, operation);
    if (existing) {
      const receipt = await finishOperation(layout, existing, { env: c.env, fault: c.fault });
      return { receipt, reused: true, render: null, candidateFindings: [] };
    }
    return await renderAndPublish(layout, c, operation);
  } finally {
    await lock?.release();
  }
}

/** A copy of the session would keep `errors`, so it would not resume: nothing is published. */
export function copyKeepsErrors(sessionId: string, errors: readonly T.Finding[], sourcePath: string): GobstopperError {
  const codes = [...new Set(errors.map((f) => f.code))].join(', ');
  return new GobstopperError('source_invalid', `${sessionId} has ${errors.length} verify error(s) (${codes}) that a copy keeps, so a fork would not resume; nothing was published. See gobstopper verify ${shellWord(sourcePath)}`, {
    details: { findings: errors },
  });
}

/**
 * The verify errors a copy of the source under a new id would have, from a render into private
 * staging that is then thrown away: the source's own errors include some a new id repairs (a file
 * name that disagrees with the id inside), and a command that would refuse the copy learns so
 * before it archives anything.
 */
export async function errorsOfCopy(provider: ProviderClient, sourcePath: string, sourceSha256: string, env: NodeJS.ProcessEnv): Promise<T.Finding[]> {
  return withThrowawayStaging(env, async (staging) => {
    await provider.render({ path: sourcePath, source_sha256: sourceSha256, edits: [], staging_path: staging, new_session_id: randomUUID(), now: new Date().toISOString() });
    const { findings } = await provider.verify({ path: staging });
    return findings.filter((f) => f.severity === 'error');
  });
}

/** Whether the file at `path` is empty or ends with a newline (every line of it finished). */
export async function endsWithFinishedLine(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size === 0) return true;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    await handle.close();
  }
}

/**
 * A client resumes a session by appending records, each ending in a newline: after an unfinished
 * last line (a copy made while the client was writing it) its first record would be glued onto
 * that fragment and lost. `what` names the file, `then` what to do instead.
 */
export function unfinishedLastLine(what: string, then: string): GobstopperError {
  return new GobstopperError('torn_final_line', `${what} ends in an unfinished line (no newline after it: a write in progress?); the client would glue its next record onto it, so nothing was published; ${then}`);
}

/**
 * A provider that adds to the end finishes the last line or refuses; a plain copy would publish it
 * as it is, so a candidate that ends unfinished is refused here, whatever the provider. An archived
 * state never changes: waiting does not help it, reading its records does.
 */
async function requireFinishedLastLine(staging: string, c: Candidate): Promise<void> {
  if (await endsWithFinishedLine(staging)) return;
  throw c.kind === 'restore'
    ? unfinishedLastLine(`the archived state of ${c.sourcePath}`, 'gobstopper read-snapshot reads its records')
    : unfinishedLastLine(c.sourcePath, 'try again once the line is finished');
}

async function renderAndPublish(layout: VaultLayout, c: Candidate, operation: string): Promise<PublishedFork> {
  const now = c.now ?? new Date();
  const staging = await createStagingFile(c.env, { fault: c.fault });
  try {
    faultPoint('apply.before_render', c.fault);
    c.onStep?.('rendering');
    const render = await c.provider.render({
      path: c.renderPath,
      source_sha256: c.renderSha256,
      edits: c.edits,
      staging_path: staging,
      new_session_id: c.outputSessionId,
      now: now.toISOString(),
    });
    faultPoint('apply.after_render', c.fault);
    c.onStep?.('verifying');
    if (c.requireSmaller && render.bytes >= c.sourceBytes) {
      throw new GobstopperError('no_reduction', `the candidate is ${render.bytes} bytes, not smaller than the ${c.sourceBytes}-byte source; nothing was published`);
    }
    await requireFinishedLastLine(staging, c);
    // Written to disk while it is checked; publication waits for it below.
    const flushed = flushStaging(staging);
    flushed.catch(() => undefined);
    // Reads of settled files run at once: the provider verifies the candidate (its own process),
    // the vault stores the candidate's bytes, and the source is hashed again (unless a read made
    // after planning, apply's snapshot, is given). Nothing is referenced by a receipt until every
    // check below has passed; bytes stored for a candidate that then fails a check are referenced
    // by nothing (prune lists them, and deletes them with --include-unindexed).
    const checked = Promise.all([
      // A card appended to a source at the record limit must not fail verification for its size.
      c.provider.verify({ path: staging, max_records: Math.max(1, render.record_count) }),
      forkTargetOf(c, now),
    ]);
    checked.catch(() => undefined);
    const source = !c.recheckSource ? null : c.sourceRead ?? sourceIdentity(c.sourcePath);
    source?.catch(() => undefined);
    // Nothing of the candidate enters the vault until the source's snapshot is in it: a failed
    // snapshot (a damaged or unwritable vault) leaves the vault as it was. The snapshot ran beside
    // the render, so this rarely waits.
    const snapshotManifest = await c.snapshotManifestSha256;
    // What render claims it wrote is checked as the candidate is retained (the vault refuses bytes
    // that do not hash to output_sha256), so no separate hashing pass is spent here.
    const receipt = await storeRetained(layout, staging, { expectedSourceSha256: render.output_sha256, mismatch: (sha256) => renderMisreported(c, render.output_sha256, sha256), env: c.env, fault: c.fault }, async (stored) => {
      const [verified, target] = await checked;
      const added = newFindings(await c.baselineFindings, verified.findings);
      if (added.length) {
        const codes = [...new Set(added.map((f) => f.code))].join(', ');
        throw new GobstopperError('verification_failed', `the candidate adds ${added.length} verify finding(s) the source does not have (${codes}); nothing was published`, {
          details: { findings: added },
        });
      }
      const errors = c.requireNoErrors ? verified.findings.filter((f) => f.severity === 'error') : [];
      if (errors.length) throw copyKeepsErrors(c.session.session_id, errors, c.sourcePath);
      if (c.requireSmaller && stored.bytes >= c.sourceBytes) {
        throw new GobstopperError('no_reduction', `the candidate is ${stored.bytes} bytes, not smaller than the ${c.sourceBytes}-byte source; nothing was published`);
      }
      await checkPublishTarget(target.target_path);
      if (source) sourceUnchanged(c, await source);
      if (c.beforeRetain) await c.beforeRetain(staging, render);
      const pending: T.OperationReceipt = {
        schema_version: RECEIPT_SCHEMA_VERSION,
        operation,
        kind: c.kind,
        provider: c.session.provider,
        source_path: c.sourcePath,
        source_session_id: c.session.session_id,
        source_sha256: c.sourceSha256,
        inputs_sha256: c.inputsSha256,
        output_session_id: c.outputSessionId,
        path: target.target_path,
        output_sha256: render.output_sha256,
        bytes_before: c.sourceBytes,
        bytes_after: stored.bytes,
        reclaimed_bytes: Math.max(0, c.sourceBytes - stored.bytes),
        snapshot_sha256: c.sourceSha256,
        snapshot_manifest_sha256: snapshotManifest,
        output_manifest_sha256: stored.manifestSha256,
        strategy: c.strategyLabel,
        resume_command: resumeCommandText(target.resume_command, target.resume_cwd, target.resume_env),
        ...(target.resume_note ? { resume_note: target.resume_note } : {}),
        ...(c.contextTokensAfter !== undefined ? { context_tokens_after: c.contextTokensAfter } : {}),
        completed: false,
        ts: Math.floor(now.getTime() / 1000),
      };
      await writePendingReceipt(layout, pending, { fault: c.fault });
      return { receipt: pending, findings: verified.findings };
    });
    faultPoint('apply.after_receipt', c.fault);
    c.onStep?.('publishing');

    // The staged fork reaches the disk first, so that the source's identity is checked last, right
    // before the link: a turn appended during the flush (a large fork takes a while) is caught.
    await flushed;
    faultPoint('apply.after_flush', c.fault);
    // The hash above proved the source unchanged when it was read; its identity proves it still is.
    if (source) {
      try {
        sourceUnchanged(c, await source, await currentIdentity(c.sourcePath));
      } catch (error) {
        // Nothing was published, and no run can finish this operation (the source it names is gone):
        // a pending receipt left behind would stand for an operation that can never complete.
        await discardPendingReceipt(layout, receipt.receipt);
        throw error;
      }
    }
    await publishNoted(staging, receipt.receipt.path, { expectedSha256: receipt.receipt.output_sha256, expectedBytes: receipt.receipt.bytes_after, fault: c.fault });
    keepStagingDirs();
    faultPoint('apply.after_publish', c.fault);
    const completed = await markReceiptCompleted(layout, receipt.receipt, { fault: c.fault });
    // Its record is finished: an interrupt from here on has nothing to finish, but the resume
    // command the answer prints may not get out. A watch clears this as it takes up its next session.
    noteForStop(completedNote(completed.path, completed.resume_command));
    faultPoint('apply.after_complete', c.fault);
    return { receipt: completed, reused: false, render, candidateFindings: receipt.findings };
  } finally {
    await discardStaging(staging);
  }
}

/**
 * Only the provider writes the staging file, so bytes that do not hash to what its render answered
 * are its answer's fault: not a change of the source, and not one that running again would mend.
 */
function renderMisreported(c: Candidate, reported: string, actual: string): GobstopperError {
  const pluginId = c.provider.running.bundle.manifest.id;
  return new GobstopperError('invalid_provider_render', `provider ${c.provider.id} (plugin ${pluginId}) answered its render with sha256 ${reported.slice(0, 16)}…, but the file it wrote hashes to ${actual.slice(0, 16)}…; nothing was published`, {
    details: { provider: c.provider.id, plugin_id: pluginId },
  });
}

interface SourceIdentity {
  sha256: string | null;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The source's identity (taken first) and its hash; null hash when it cannot be read. */
async function sourceIdentity(path: string): Promise<SourceIdentity | null> {
  const before = await currentIdentity(path);
  if (!before) return null;
  const hashed = await hashRegularFile(path).catch(() => null);
  return { ...before, sha256: hashed?.sha256 ?? null };
}

async function currentIdentity(path: string): Promise<SourceIdentity | null> {
  const st = await lstat(path).catch(() => null);
  return st?.isFile() ? { sha256: null, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } : null;
}

/** Throws source_changed unless the re-hash matched and (when given) the file is still the one hashed. */
function sourceUnchanged(c: Candidate, hashed: SourceIdentity | null, now?: SourceIdentity | null): void {
  const same = hashed !== null && hashed.sha256 === c.sourceSha256 && (now === undefined || (now !== null && now.dev === hashed.dev && now.ino === hashed.ino && now.size === hashed.size && now.mtimeMs === hashed.mtimeMs));
  if (same) return;
  // Gone is not changed: "run it again" would only meet a missing file.
  if (hashed === null || now === null) throw new GobstopperError('source_changed', `${c.sourcePath} was removed (or replaced by something that is not a file) after it was read; nothing was published`, { details: { gone: true } });
  throw new GobstopperError('source_changed', `${c.sourcePath} changed after it was read; nothing was published. Run the command again to work from the new content`);
}
