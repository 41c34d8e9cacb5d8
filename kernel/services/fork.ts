/** `fork`: the same session under a fresh id, beside the source, after a vault snapshot. */
import { randomUUID } from 'node:crypto';
import type * as T from '../../schemas/generated/types.js';
import { requireResumableSession } from '../policy/context.js';
import { faultPoint, type FaultHook } from '../publish/faults.js';
import { hashRegularFile } from '../publish/publish.js';
import { sha256OfJson } from '../publish/receipt.js';
import { resolveSession } from '../sessions/selector.js';
import { vaultLayout } from '../vault/layout.js';
import { canonicalSourcePath, snapshotFile } from '../vault/snapshot.js';
import { assertForkTargetFree, copyKeepsErrors, endsWithFinishedLine, errorsOfCopy, pendingPublication, publishCandidate, unfinishedLastLine, type PublicationStep } from './publication.js';
import type { Runtime } from './runtime.js';

export interface ForkResult {
  session: T.SessionHandle;
  receipt: T.OperationReceipt;
}

export interface ForkOptions {
  onStep?: (step: PublicationStep) => void;
  /** Raised at `fork.after_hash` (tests change the source there). */
  fault?: FaultHook;
}

export async function forkSession(runtime: Runtime, selector: string, options: ForkOptions = {}): Promise<ForkResult> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  // A copy under a new id is no more resumable than the sub-agent thread or composite it copies.
  requireResumableSession(session);
  const provider = await runtime.provider(session.provider);
  const sourcePath = await canonicalSourcePath(session.path);
  // Hashed before anything else reads it: the snapshot must match this hash, so a client that
  // writes between the reads below is caught there, before anything is archived, instead of
  // leaving findings of one version to be compared with a fork of another.
  const { sha256, bytes } = await hashRegularFile(sourcePath);
  faultPoint('fork.after_hash', options.fault);
  // Refused before anything is archived; publication checks the copy itself as well.
  if (!(await endsWithFinishedLine(sourcePath))) throw unfinishedLastLine(sourcePath, 'try again once the line is finished');
  const baseline = await provider.verify({ path: sourcePath });
  // A source with errors is forked only if its copy would be free of them (a new id repairs some):
  // found out on a throwaway copy, so that a refused fork archives nothing.
  if (baseline.findings.some((f) => f.severity === 'error')) {
    const kept = await errorsOfCopy(provider, sourcePath, sha256, runtime.env);
    if (kept.length) throw copyKeepsErrors(session.session_id, kept, sourcePath);
  }
  const layout = vaultLayout(runtime.env);
  // A fork of these bytes that was interrupted (its receipt still pending) is finished under its
  // own id rather than left half done beside a second one.
  const interrupted = await pendingPublication(layout, (r) => r.kind === 'fork' && r.source_path === sourcePath && r.source_sha256 === sha256);
  const newId = interrupted?.output_session_id ?? randomUUID();
  // Where the provider puts the fork is checked before the source is archived: a target that is
  // taken or not beside the source fails with nothing written.
  const now = new Date();
  if (!interrupted) await assertForkTargetFree({ provider, session, sourcePath, outputSessionId: newId }, now);
  const snapshot = await snapshotFile(layout, { path: sourcePath, sessionId: session.session_id, provider: session.provider, strategy: 'fork', expectedSourceSha256: sha256, env: runtime.env });
  const published = await publishCandidate(layout, {
    now,
    provider,
    session,
    sourcePath,
    sourceSha256: sha256,
    sourceBytes: bytes,
    kind: 'fork',
    inputsSha256: sha256OfJson(newId),
    outputSessionId: newId,
    renderPath: sourcePath,
    renderSha256: sha256,
    edits: [],
    strategyLabel: 'fork',
    snapshotManifestSha256: snapshot.entry.sha256,
    baselineFindings: baseline.findings,
    requireSmaller: false,
    // A source's errors refuse the fork only if the copy keeps them: a fork under a new id repairs
    // a file name that disagrees with the id inside.
    requireNoErrors: true,
    recheckSource: true,
    onStep: options.onStep,
    env: runtime.env,
  });
  return { session, receipt: published.receipt };
}
