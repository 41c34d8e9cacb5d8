/**
 * `apply`: parse → plan → validate → vault snapshot → render into staging → verify → receipt →
 * no-clobber publication of the fork → event → the resume command. The source is never written.
 */
import type * as T from '../../schemas/generated/types.js';
import type { ProviderClient } from '../plugins/host/clients.js';
import { GobstopperError } from '../errors.js';
import { formatAge } from '../text/human.js';
import { appendEvent, EVENTS_SCHEMA, hasAppliedEvent } from '../publish/events.js';
import { itemsCovered } from '../eval/plan-metrics.js';
import { failedApplyCode } from '../publish/failed-apply-code.js';
import { faultPoint, type FaultHook } from '../publish/faults.js';
import { controlWords } from '../policy/provider-controls.js';
import { deriveOutputSessionId, lockOperation, operationId, readReceipt, sha256OfJson } from '../publish/receipt.js';
import { finishOperation } from '../publish/reconcile.js';
import type { VaultLayout } from '../vault/layout.js';
import { reconstructSnapshot } from '../vault/reconstruct.js';
import { vaultExists, vaultLayout } from '../vault/layout.js';
import { canonicalSourcePath, snapshotFile } from '../vault/snapshot.js';
import { measureAppliedRetention, type EventRetention } from '../eval/applied-retention.js';
import { sourceFindings } from './findings.js';
import { neverFiresNote } from '../policy/explain.js';
import { planForSelector, type PlanOptions, type PlannedSession } from './plan.js';
import { endsWithFinishedLine, publishCandidate, unfinishedLastLine, type PublicationStep, type PublishedFork } from './publication.js';
import { assertNoUnrecordedFork } from './earlier-fork.js';
import type { Runtime } from './runtime.js';

export interface ApplyOptions extends PlanOptions {
  /** Rewrite a session updated within the last 180 s anyway (into a fork; the source is still untouched). */
  allowLive?: boolean;
  /** Runs on the verified candidate before publication; throwing stops the apply. */
  rehearse?: (stagingPath: string, planned: PlannedSession, outputSessionId: string) => Promise<T.RehearsalReport>;
  /** With rehearse: throws when the rehearsal could never run (no client), before anything is archived. */
  rehearsalReady?: (planned: PlannedSession) => void;
  /** Told as each long step begins, for a progress line. */
  onStep?: (step: ApplyStep) => void;
  fault?: FaultHook;
}

export type ApplyStep = 'planning' | PublicationStep;

const RETENTION_MEASURE_MAX_BYTES = 64 * 1024 * 1024;

export type ApplyResult =
  | { status: 'no_plan'; session: T.SessionHandle; outcome: T.PlanCommandNoPlan; warnings: string[] }
  /** A provider_compact plan: the control to run; nothing is written. (A cache_edit plan is refused.) */
  | { status: 'provider_control'; session: T.SessionHandle; plan: T.PlanCommandPlan; message: string; warnings: string[] }
  | {
      status: 'applied';
      session: T.SessionHandle;
      plan: T.PlanCommandPlan;
      receipt: T.OperationReceipt;
      reused: boolean;
      /** A repeated apply found the fork removed and published it again. */
      restored?: boolean;
      /** A repeated apply found the fork resumed since (a client appended to it). */
      resumed?: boolean;
      /** An earlier run stopped between its receipt and publishing; this one published its fork. */
      interrupted?: boolean;
      /** A repeated apply found the recovery snapshot unreadable: why (also among the warnings). */
      snapshot_unreadable?: string;
      warnings: string[];
      rehearsal?: T.RehearsalReport;
    };

export async function applySession(runtime: Runtime, selector: string, options: ApplyOptions = {}): Promise<ApplyResult> {
  const started = Date.now();
  options.onStep?.('planning');
  const planned = await planForSelector(runtime, selector, options).catch((error: unknown) => {
    // A file its client kept writing while it was read is live, whatever else is true of it.
    if (!options.allowLive && error instanceof GobstopperError && error.code === 'source_changed' && error.details?.live === true) throw sessionLive(selector, error);
    throw error;
  });
  const { session, transcript, outcome } = planned;
  // The plan's warnings (a session table that never applies) matter most when nothing happened.
  if (outcome.status === 'no_plan') {
    // Nothing was written: a trigger the client never lets the session reach is the likeliest why.
    const never = neverFiresNote(outcome, transcript.usage.model_context_window, session.session_id);
    return { status: 'no_plan', session, outcome, warnings: never === null ? planned.warnings : [...planned.warnings, never] };
  }
  // Refused before anything else, even a hand-off to the client's own compaction: a live session's
  // client owns it until told otherwise.
  if (planned.active && !options.allowLive) throw sessionLive(session.session_id, undefined, transcript.session.mtime_ms ?? session.mtime_ms);
  const cacheEdit = outcome.plan.edits.find((e) => e.op === 'cache_edit');
  if (cacheEdit) throw cacheEditRefused(outcome.plan.strategy, cacheEdit.tool_use_ids.length);
  const controlEdit = outcome.plan.edits.find((e) => e.op === 'provider_compact');
  if (controlEdit) {
    const message = `the plan asks the provider to compact with its own control (${controlWords(session.provider, controlEdit.control)}); run it in the session itself — no file is rewritten`;
    return { status: 'provider_control', session, plan: outcome, message, warnings: planned.warnings };
  }

  options.rehearsalReady?.(planned);

  const layout = vaultLayout(runtime.env);
  const { sourcePath, inputsSha256, operation } = await compactOperation({ ...planned, outcome });
  const outputSessionId = deriveOutputSessionId(operation);

  // Without a vault there is no receipt that could explain a file at the fork's place: a taken
  // target is refused before the lock below creates the vault's directories.
  if (!(await vaultExists(layout))) await assertNoUnrecordedFork({ provider: planned.provider, session, sourcePath, outputSessionId }, new Date());
  // The operation's lock comes first: a second apply of the same plan while this one runs is refused
  // before it archives, renders or logs anything.
  const lock = await lockOperation(layout, operation);
  try {
    return await applyLocked(runtime, planned, { outcome, layout, sourcePath, inputsSha256, operation, outputSessionId, started }, options);
  } finally {
    await lock.release();
  }
}

/**
 * What an apply of `planned` would meet before writing anything, read without writing, for a dry
 * run that must say what the real run says: a source ending in an unfinished line is refused, and
 * a plan already applied to these very bytes returns its fork. Null: it would compact.
 */
export async function applyVerdict(runtime: Runtime, planned: PlannedSession & { outcome: T.PlanCommandPlan }): Promise<{ refused: GobstopperError } | { reused: T.OperationReceipt } | null> {
  let operation: string;
  try {
    ({ operation } = await compactOperation(planned));
  } catch (error) {
    if (error instanceof GobstopperError && error.code === 'torn_final_line') return { refused: error };
    throw error;
  }
  const previous = await readReceipt(vaultLayout(runtime.env), operation);
  return previous?.completed ? { reused: previous } : null;
}

/**
 * The operation an apply of `planned` is: its source by canonical path, and the id that path, the
 * source's bytes and the plan's edits give it. Publication refuses a fork that ends unfinished
 * whatever the plan, so a source ending in an unfinished line is refused here, before anything is
 * archived or logged for a run that cannot publish.
 */
async function compactOperation(planned: PlannedSession & { outcome: T.PlanCommandPlan }): Promise<{ sourcePath: string; inputsSha256: string; operation: string }> {
  const sourcePath = await canonicalSourcePath(planned.session.path);
  if (!(await endsWithFinishedLine(sourcePath))) throw unfinishedLastLine(sourcePath, 'try again once the line is finished');
  const inputsSha256 = sha256OfJson(planned.outcome.plan.edits);
  const operation = operationId({ kind: 'compact', provider: planned.session.provider, source_path: sourcePath, source_sha256: planned.transcript.source_sha256, inputs_sha256: inputsSha256 });
  return { sourcePath, inputsSha256, operation };
}

/**
 * A cache edit drops tool results at Claude Code's API layer, and nothing hands Claude Code the
 * edits: reporting it as applied would claim a saving that never happens. plan still shows it.
 */
function cacheEditRefused(strategy: string, ids: number): GobstopperError {
  return new GobstopperError(
    'cache_edit_unsupported',
    `apply cannot carry out a cache edit (${strategy}: ${ids} tool result${ids === 1 ? '' : 's'} to drop at Claude Code's API layer): nothing hands the edits to Claude Code, so nothing was written; --strategy elide (or another file strategy) prepares a fork, --strategy sawtooth names the client's own compaction`,
    { details: { strategy, tool_use_ids: ids } },
  );
}

/** Past this, a file's time ahead of the clock was set by another clock or by hand (detect says so too). */
const AHEAD_SLACK_MS = 60_000;

function sessionLive(session: string, cause?: unknown, mtimeMs?: number): GobstopperError {
  const allow = "pass --allow-live (a file strategy then prepares a separate fork; a plan of the client's own compaction, such as sawtooth's, is named for you to run)";
  const ahead = mtimeMs === undefined ? 0 : mtimeMs - Date.now();
  // Waiting would not help for as long as the clock is behind the file: said, instead of "wait".
  const message =
    ahead > AHEAD_SLACK_MS
      ? `${session} was modified later than this machine's clock says it is now (${formatAge(Math.round(ahead / 1000))} ahead), so it reads as live until then; if no client is writing to it, ${allow}`
      : `${session} was updated within the last 180 s; a live session's client owns it. Wait until it is idle, or ${allow}`;
  return new GobstopperError('session_live', message, cause === undefined ? undefined : { cause });
}

/** An apply whose plan is known and whose operation's lock is held. */
interface LockedOperation {
  outcome: T.PlanCommandPlan;
  layout: VaultLayout;
  sourcePath: string;
  inputsSha256: string;
  operation: string;
  outputSessionId: string;
  started: number;
}

/**
 * Publication refuses only findings a candidate adds; errors the source already had are kept, and
 * a fork that carries them may not resume any better than its source: the answer says so.
 */
function inheritedErrors(sourceFindings: readonly T.Finding[], sourcePath: string): string[] {
  const errors = sourceFindings.filter((f) => f.severity === 'error');
  if (errors.length === 0) return [];
  const codes = [...new Set(errors.map((f) => f.code))].join(', ');
  return [`the source already had ${errors.length} verify error(s) (${codes}) and the fork keeps them, so it may not resume either; gobstopper verify ${sourcePath} lists them`];
}

/**
 * The source's errors that the fork a repeated apply answers with still has. Only codes both have
 * count: a client that resumed the fork may have written errors of its own (a tool call still
 * running), which are not the source's. The source's errors when the fork cannot be verified.
 */
async function errorsKeptByFork(provider: ProviderClient, forkPath: string, sourceFindingsOf: () => Promise<T.Finding[]>): Promise<T.Finding[]> {
  const source = (await sourceFindingsOf()).filter((f) => f.severity === 'error');
  if (source.length === 0) return [];
  try {
    const codes = new Set(source.map((f) => f.code));
    return (await provider.verify({ path: forkPath })).findings.filter((f) => f.severity === 'error' && codes.has(f.code));
  } catch {
    return source;
  }
}

/** A fork an earlier run published was never seen by this run's rehearsal. */
function notRehearsedNow(forkPath: string): string {
  return `the fork was published by an earlier apply and was not rehearsed now; gobstopper rehearse ${forkPath} resumes it with the client`;
}

async function applyLocked(runtime: Runtime, planned: PlannedSession, op: LockedOperation, options: ApplyOptions): Promise<ApplyResult> {
  const { session, transcript } = planned;
  const { outcome, layout, sourcePath, inputsSha256, operation, outputSessionId, started } = op;
  // A repeated apply finds its receipt and finishes (or returns) that operation: no second snapshot.
  const previous = await readReceipt(layout, operation);
  if (previous) {
    let restored = false;
    let resumed = false;
    let interrupted = false;
    const receipt = await finishOperation(layout, previous, {
      env: runtime.env,
      fault: options.fault,
      onRestored: () => (restored = true),
      onResumed: () => (resumed = true),
      onFinishedInterrupted: () => (interrupted = true),
    });
    // The fork stands either way, but the answer names the snapshot as the way back: say if it is not.
    // Every chunk is read back: a damaged chunk would make that way back fail only when needed.
    // Both only read; the fork's findings decide the warning about errors it kept from its source.
    const [damaged, kept] = await Promise.all([
      reconstructSnapshot(layout, receipt.snapshot_manifest_sha256, () => undefined, runtime.env).then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
      errorsKeptByFork(planned.provider, receipt.path, () => sourceFindings(planned.provider, transcript, sourcePath)),
    ]);
    const warnings = [...planned.warnings, ...inheritedErrors(kept, sourcePath)];
    if (restored) warnings.push(`${receipt.path} had been removed since this compaction published it; it is published again from the bytes the vault kept`);
    // Archiving the source again writes the damaged chunk again only once it is out of the way.
    if (damaged) warnings.push(`the recovery snapshot ${receipt.snapshot_manifest_sha256.slice(0, 16)} cannot be read (${damaged}); once that is repaired, gobstopper snapshot ${session.session_id} archives the source again`);
    if (options.rehearse) warnings.push(notRehearsedNow(receipt.path));
    // A run that crashed after publishing (or before completing the receipt) wrote no `applied`
    // event; the run that finds the fork standing writes it, once.
    if (!(await hasAppliedEvent(receipt.output_manifest_sha256, { env: runtime.env }))) {
      const written = await recordEvent(runtime, planned, 'applied', started, receipt.snapshot_manifest_sha256, null, receipt.output_manifest_sha256);
      if (written) warnings.push(written);
    }
    return {
      status: 'applied',
      session,
      plan: outcome,
      receipt,
      reused: true,
      ...(restored ? { restored } : {}),
      ...(resumed ? { resumed } : {}),
      ...(interrupted ? { interrupted } : {}),
      ...(damaged ? { snapshot_unreadable: damaged } : {}),
      warnings,
    };
  }

  const now = new Date();
  await assertNoUnrecordedFork({ provider: planned.provider, session, sourcePath, outputSessionId }, now);

  // The snapshot (kernel), the baseline findings (provider, unless it verified while it parsed)
  // and the render into private staging (provider) all only read the source, so they run at once;
  // nothing is retained or published before the snapshot has been read back.
  const snapshotting = snapshotFile(layout, {
    path: sourcePath,
    sessionId: session.session_id,
    provider: session.provider,
    strategy: outcome.plan.strategy,
    expectedSourceSha256: transcript.source_sha256,
    env: runtime.env,
    fault: options.fault,
  }).then((s) => {
    faultPoint('apply.after_snapshot', options.fault);
    return s;
  });
  snapshotting.catch(() => undefined);
  // Publication awaits these when it needs them, and may fail (or stop at the first rejection)
  // before it awaits both: each is marked handled here so a failed snapshot is reported once,
  // below, instead of surfacing as an unhandled rejection that kills the process mid-cleanup.
  const snapshotManifestSha256 = snapshotting.then((s) => s.entry.sha256);
  snapshotManifestSha256.catch(() => undefined);
  // The snapshot read the source after planning and matched its hash: no third read.
  const sourceRead = snapshotting.then((s) => ({ sha256: s.stored.sourceSha256, ...s.stored.file }));
  sourceRead.catch(() => undefined);
  const baselineFindings = sourceFindings(planned.provider, transcript, sourcePath);
  baselineFindings.catch(() => undefined);

  let retention: EventRetention | null = null;
  let rehearsal: T.RehearsalReport | undefined;
  let published: PublishedFork;
  try {
    published = await publishCandidate(layout, {
      provider: planned.provider,
      session,
      sourcePath,
      sourceSha256: transcript.source_sha256,
      sourceBytes: transcript.bytes,
      kind: 'compact',
      inputsSha256,
      outputSessionId,
      renderPath: sourcePath,
      renderSha256: transcript.source_sha256,
      edits: outcome.plan.edits,
      strategyLabel: outcome.plan.strategy,
      contextTokensAfter: outcome.plan.context_tokens_after,
      snapshotManifestSha256,
      baselineFindings,
      requireSmaller: true,
      recheckSource: true,
      sourceRead,
      beforeRetain: async (staging) => {
        // A plugin that broke the protocol since planning (an answer sent twice) is not acted on.
        await runtime.host.requireNoIdleBreach();
        if (options.rehearse) rehearsal = await options.rehearse(staging, planned, outputSessionId);
        // Retention is measured for the event when the source is small enough to hold in memory
        // (the study's replay bound); it never fails the apply.
        if (transcript.bytes <= RETENTION_MEASURE_MAX_BYTES) retention = await measureAppliedRetention(sourcePath, transcript.source_sha256, transcript.items, staging);
      },
      onStep: options.onStep,
      fault: options.fault,
      env: runtime.env,
      now,
      operationLocked: true,
    });
  } catch (error) {
    // Without a snapshot there is nothing to record against: the snapshot's own error is the answer.
    const snapshot = await snapshotting;
    await recordEvent(runtime, planned, 'failed', started, snapshot.entry.sha256, failedApplyCode(error));
    throw error;
  }
  // What the fork itself keeps: a fork under a new id may repair an error of its source.
  const kept = published.reused ? await baselineFindings : published.candidateFindings;
  const warnings = [...planned.warnings, ...inheritedErrors(kept, sourcePath)];
  if (published.reused && options.rehearse) warnings.push(notRehearsedNow(published.receipt.path));
  const snapshot = await snapshotting;
  if (!published.reused) {
    const written = await recordEvent(runtime, planned, 'applied', started, snapshot.entry.sha256, null, published.receipt.output_manifest_sha256, retention);
    if (written) warnings.push(written);
  }
  return { status: 'applied', session, plan: outcome, receipt: published.receipt, reused: published.reused, warnings, ...(rehearsal ? { rehearsal } : {}) };
}

async function recordEvent(
  runtime: Runtime,
  planned: PlannedSession,
  outcome: 'applied' | 'failed',
  started: number,
  snapshotBefore: string,
  errorCode: T.EventErrorCode | null,
  snapshotAfter?: string,
  retention?: EventRetention | null,
): Promise<string | undefined> {
  if (planned.outcome.status !== 'plan') return undefined;
  const plan = planned.outcome.plan;
  const after = outcome === 'applied' ? plan.context_tokens_after : plan.context_tokens_before;
  const event: T.CompactionEvent = {
    schema: EVENTS_SCHEMA,
    ts: Math.floor(Date.now() / 1000),
    provider: planned.session.provider,
    session_id: planned.session.session_id,
    strategy: plan.strategy,
    action: 'transcript_compact',
    outcome,
    trigger_tokens: planned.outcome.effective_trigger_tokens,
    context_tokens_before: plan.context_tokens_before,
    context_tokens_after: after,
    est_reclaimed_tokens: Math.max(0, plan.context_tokens_before - after),
    items_covered: itemsCovered(plan),
    duration_ms: Date.now() - started,
    error_code: errorCode,
    snapshot_before_sha256: snapshotBefore,
    ...(snapshotAfter ? { snapshot_after_sha256: snapshotAfter } : {}),
    ...(retention ?? {}),
  };
  const result = await appendEvent(event, { env: runtime.env });
  // A written event can still come with a warning (a log that could not be rotated).
  return result.warning;
}
