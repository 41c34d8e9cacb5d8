/**
 * `undo`: restore an archived snapshot into a brand-new fork. Nothing existing is overwritten: the
 * current file (if any) is snapshotted as `pre-undo` first, and the restored bytes get a new id.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type * as T from '../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../errors.js';
import { vaultDamaged } from '../vault/errors.js';
import { listReceipts, lockRestores, publishedEntry, receiptPath, sha256OfJson, sourceEntry } from '../publish/receipt.js';
import { createStagingFile, discardStaging, restoreSnapshotToStaging } from '../publish/staging.js';
import { vaultLayout, type VaultLayout } from '../vault/layout.js';
import { appendLostIndexEntry, readIndex } from '../vault/index-file.js';
import { LineCounter } from '../vault/line-count.js';
import { sessionHistory } from '../vault/list.js';
import { isHexPrefix, looksLikePath, looksLikeSnapshotId, MIN_SHA_PREFIX, pathForms, refuseOverlongSnapshotId, resolveShaPrefix, SNAPSHOT_TARGET_MIN_HEX } from '../vault/selectors.js';
import { snapshotSettled } from '../vault/snapshot.js';
import { reconstructSnapshot } from '../vault/reconstruct.js';
import { manifestOfEntry } from '../vault/indexed-manifest.js';
import { loadManifest } from '../vault/manifest.js';
import { withSharedCustody } from '../vault/custody.js';
import { PRE_UNDO_LABEL } from '../vault/labels.js';
import { unresumableKind } from '../policy/context.js';
import { faultPoint, type FaultHook } from '../publish/faults.js';
import { hashRegularFile } from '../publish/publish.js';
import { assertForkTargetFree, pendingPublication, publishCandidate, type PublicationStep } from './publication.js';
import type { Runtime } from './runtime.js';

export interface UndoResult {
  restored: T.VaultEntry;
  receipt: T.OperationReceipt;
  pre_undo_snapshot: string | null;
  /** An earlier restore of the same snapshot, its copy unchanged, was returned; nothing was written. */
  reused?: boolean;
  /** The index has no line for the restored snapshot: this operation's receipt tied it to its session. */
  named_by_operation?: string;
  /** This undo put the restored state's lost index line back (`restored` is that line). */
  indexed_again?: true;
  /** The restore was published but its lost index line could not be written back: why. */
  index_line_not_written?: string;
}

/**
 * `--sha` picks among the snapshots of `target`, so a snapshot of another session is refused: the
 * user named a session and would otherwise get a fork of a different one.
 */
async function requireSnapshotOf(layout: VaultLayout, target: string, entry: T.VaultEntry, forks: T.OperationReceipt[]): Promise<void> {
  if (target.toLowerCase() === entry.sha256) return;
  if (forks.some((r) => r.source_session_id === entry.session_id && r.provider === entry.provider)) return;
  // A published fork's own retained bytes are a state of the fork, though no index line names them.
  if (forks.some((r) => r.completed && r.output_manifest_sha256 === entry.sha256)) return;
  const history = await sessionHistory(layout, target).catch((error: unknown) => {
    if (error instanceof GobstopperError && error.code === 'session_not_archived') return [];
    throw error;
  });
  const line = history.find((e) => e.sha256 === entry.sha256);
  if (line) {
    // The target's own line must describe that snapshot, or another session's would be restored.
    await manifestOfEntry(layout, line);
    return;
  }
  // A snapshot whose line was lost is tied to its session by a receipt: it is the target's when the
  // target names that file (by path, or by id with no other file's states archived under it).
  const named = looksLikePath(target) ? (await pathForms(target)).has(entry.path) : entry.session_id.toLowerCase() === target.toLowerCase();
  if (named && history.every((e) => e.provider === entry.provider && e.path === entry.path)) return;
  // Which session a snapshot belongs to is the vault's answer, not a mistake in how it was asked:
  // an error (exit 1), as a snapshot that is not there is.
  throw new GobstopperError('snapshot_not_of_session', `snapshot ${entry.sha256.slice(0, 16)} is of ${entry.provider} ${entry.session_id}, not of '${target}' (gobstopper history ${target} lists its snapshots)`);
}

/**
 * One snapshot a short `--sha` prefix matched, checked as the target's: its state, or why it cannot
 * be restored when the target's own index line or receipt names it (it may be the state the user
 * means, so that is the answer), or null for a candidate that cannot be tied to the target (another
 * session's, or one no line or receipt names), whose troubles do not concern a restore of another.
 */
type Candidate = { state: ChosenState } | { failure: GobstopperError } | null;

async function candidateOfTarget(check: Promise<ChosenState>, claimed: boolean): Promise<Candidate> {
  try {
    return { state: await check };
  } catch (error) {
    if (!(error instanceof GobstopperError)) throw error;
    return claimed ? { failure: error } : null;
  }
}

/** Labels of snapshots that are not a state a user would undo to. */
const NOT_UNDO_TARGETS = new Set([PRE_UNDO_LABEL]);

/** An archived state to restore, and the receipt that ties it to its session when no index line does. */
interface ChosenState {
  entry: T.VaultEntry;
  namedBy?: T.OperationReceipt;
  /** Choosing it read the manifest it names already and found the same bytes: not read again. */
  manifestChecked?: true;
}

/**
 * The session a snapshot with no index line was taken of, from a receipt naming it as its source's
 * snapshot: an index repaired by deleting a damaged line loses that line, not the receipts. A
 * receipt counts only when the snapshot holds the very bytes it records; otherwise nothing
 * verifiable ties the snapshot to a session, and undo restores nothing.
 */
async function stateNamedByReceipt(layout: VaultLayout, id: string, receipts: readonly T.OperationReceipt[]): Promise<ChosenState> {
  // A compaction's or fork's label is the one its snapshot was archived under; a restore's is not.
  const naming = receipts
    .filter((r) => r.snapshot_manifest_sha256 === id)
    .sort((a, b) => Number(a.kind === 'restore') - Number(b.kind === 'restore') || b.ts - a.ts);
  const unindexed = `snapshot ${id.slice(0, 16)} is in the vault but has no line in its index (${layout.index})`;
  if (naming.length === 0) {
    throw new GobstopperError('snapshot_not_indexed', `${unindexed}, and no receipt names it, so it cannot be tied to a session; gobstopper show ${id} reads it`);
  }
  const { manifest } = await loadManifest(layout, id);
  const verified = naming.find((r) => r.source_sha256 === manifest.source_sha256 && r.bytes_before === manifest.bytes);
  if (!verified) {
    const r = naming[0]!;
    throw new GobstopperError(
      'snapshot_not_indexed',
      `${unindexed}, and the receipt that names it (${receiptPath(layout, r.operation)}) records ${r.bytes_before} bytes of ${r.provider} ${r.source_session_id} (source ${r.source_sha256.slice(0, 16)}), not the ${manifest.bytes} bytes (source ${manifest.source_sha256.slice(0, 16)}) it holds; nothing was restored`,
    );
  }
  return { entry: sourceEntry(verified), namedBy: verified, manifestChecked: true };
}

/**
 * Which archived state `target` means: a snapshot id (full or unique prefix), a fork made by apply
 * (its source's snapshot), or a session (its newest snapshot).
 */
async function chooseState(layout: VaultLayout, target: string, sha?: string): Promise<ChosenState> {
  refuseOverlongSnapshotId(target, 'undo target');
  const index = await readIndex(layout);
  const allReceipts = await listReceipts(layout);
  const byManifest = async (id: string): Promise<ChosenState> => {
    const entry = [...index].reverse().find((e) => e.sha256 === id);
    if (entry) return { entry };
    // A published fork's own bytes are retained without an index entry; its receipt ties them to
    // the fork, which is restored beside where it was.
    const published = allReceipts.find((r) => r.output_manifest_sha256 === id && r.completed);
    if (published) return { entry: publishedEntry(published) };
    return stateNamedByReceipt(layout, id, allReceipts);
  };
  const wanted = target.toLowerCase();
  // A fork is named as any session is: its id, a unique prefix of it, or its path.
  const forms = looksLikePath(target) ? await pathForms(target) : null;
  const receipts = allReceipts.filter((r) =>
    forms ? forms.has(r.path) : r.output_session_id.toLowerCase() === wanted || (target.length >= MIN_SHA_PREFIX && r.output_session_id.toLowerCase().startsWith(wanted)),
  );
  if (sha) {
    const ofTarget = async (id: string): Promise<ChosenState> => {
      const chosen = await byManifest(id);
      await requireSnapshotOf(layout, target, chosen.entry, receipts);
      return chosen;
    };
    let id: string;
    try {
      id = await resolveShaPrefix(layout, sha);
    } catch (error) {
      // --sha picks among the target's snapshots, so a short prefix that other sessions' snapshots
      // share still names one state when only one of them is the target's.
      if (!(error instanceof GobstopperError) || error.code !== 'ambiguous_sha') throw error;
      const candidates = (error.details as { candidates: string[] }).candidates;
      const history = await sessionHistory(layout, target).catch((notOne: unknown) => {
        if (notOne instanceof GobstopperError) return [];
        throw notOne;
      });
      // Named as the target's by its index line, by a receipt of the target fork, or (its line
      // lost) by a receipt whose source is the target.
      const claimed = (id: string) =>
        history.some((e) => e.sha256 === id) ||
        allReceipts.some((r) => r.snapshot_manifest_sha256 === id && (receipts.includes(r) || (forms ? forms.has(r.source_path) : r.source_session_id.toLowerCase() === wanted)));
      const own = (await Promise.all(candidates.map((c) => candidateOfTarget(ofTarget(c), claimed(c))))).filter((c) => c !== null);
      // Two of the target's own states (one of them damaged, say) are still two: restoring the
      // intact one could restore a state the user did not mean.
      const only = own.length === 1 ? own[0]! : null;
      if (only) {
        if ('state' in only) return only.state;
        throw only.failure;
      }
      throw error;
    }
    return ofTarget(id);
  }
  if (/^[0-9a-f]{64}$/i.test(target)) return byManifest(await resolveShaPrefix(layout, target));
  if (receipts.length === 1) return byManifest(receipts[0]!.snapshot_manifest_sha256);
  try {
    const history = await sessionHistory(layout, target);
    const chosen = history.find((e) => !NOT_UNDO_TARGETS.has(e.strategy));
    if (chosen) return { entry: chosen };
    if (history.length > 0) {
      throw new GobstopperError(
        'nothing_to_undo',
        `'${target}' has only ${PRE_UNDO_LABEL} snapshots (what undo archived before restoring another state), which undo does not pick by itself; pass one with --sha to restore it (gobstopper history ${target} lists them)`,
      );
    }
  } catch (error) {
    if (!(error instanceof GobstopperError && error.code === 'session_not_archived') || !isHexPrefix(target)) throw error;
    // A hex word may be a session id prefix or a snapshot prefix; when it is neither, say both,
    // under the code any other word that matches nothing gets here and in show and history. A
    // short one is a mistyped session far more often than a snapshot, so it is a snapshot only from
    // the length show takes one at: a typo must not restore some other session.
    if (!looksLikeSnapshotId(target)) {
      throw new GobstopperError('session_not_archived', `no archived session matches '${target}' (gobstopper vault lists them); a snapshot id as the target needs ${SNAPSHOT_TARGET_MIN_HEX}+ hex characters, or pass it with --sha`);
    }
    const sha = await resolveShaPrefix(layout, target).catch((notFound: unknown) => {
      if (notFound instanceof GobstopperError && notFound.code === 'snapshot_not_found') {
        throw new GobstopperError('session_not_archived', `nothing archived matches '${target}': no archived session nor snapshot has that prefix (gobstopper vault lists them; gobstopper snapshot <session> archives one)`);
      }
      throw notFound;
    });
    return byManifest(sha);
  }
  throw new GobstopperError('nothing_to_undo', `no archived state of '${target}' to restore (gobstopper history ${target} lists them)`);
}

/** The archived state `target` (and `sha`) name; see chooseState. */
export async function chooseSnapshot(layout: VaultLayout, target: string, sha?: string): Promise<T.VaultEntry> {
  return (await chooseState(layout, target, sha)).entry;
}

/** chooseState, with the chosen state checked against the manifest it names. */
async function chooseCheckedState(layout: VaultLayout, target: string, sha?: string): Promise<ChosenState> {
  const chosen = await chooseState(layout, target, sha);
  if (!chosen.manifestChecked) await manifestOfEntry(layout, chosen.entry);
  return chosen;
}

/** chooseSnapshot, with the chosen line checked against the manifest it names. */
export async function chooseCheckedSnapshot(layout: VaultLayout, target: string, sha?: string): Promise<T.VaultEntry> {
  return (await chooseCheckedState(layout, target, sha)).entry;
}

export interface UndoOptions {
  sha?: string;
  onStep?: (step: PublicationStep) => void;
  /** Fault points of the vault and publication steps (tests). */
  fault?: FaultHook;
}

export async function undo(runtime: Runtime, target: string, options: UndoOptions = {}): Promise<UndoResult> {
  // An empty --sha is a mistake, not "the newest": restoring the wrong state would publish a fork.
  if (options.sha !== undefined && options.sha.trim() === '') throw usageError('invalid_sha', '--sha is empty; give a snapshot id (gobstopper history lists them), or leave --sha out to restore the newest');
  const layout = vaultLayout(runtime.env);
  // Chosen once outside custody for its errors (no vault, no such snapshot), then again inside it:
  // prune is held off from the choice until the restore's receipt names the snapshot.
  await chooseCheckedState(layout, target, options.sha);
  return withSharedCustody(layout, async () => {
    const chosen = await chooseCheckedState(layout, target, options.sha);
    const result = await restore(runtime, layout, chosen.entry, options);
    if (!chosen.namedBy) return result;
    // A receipt records no line count: until the bytes are counted, `restored` says 0 lines.
    let named = { ...result, named_by_operation: chosen.namedBy.operation };
    // The fork is published by now: a vault that cannot take one more line must not turn that into
    // a failure the user would retry blindly. It is said instead, and the same undo writes it later.
    try {
      named = { ...named, restored: await lineOfRestored(layout, result, runtime.env) };
      faultPoint('undo.before_reindex', options.fault, runtime.env);
      const put = await appendLostIndexEntry(layout, named.restored);
      return put.written ? { ...named, restored: put.entry, indexed_again: true } : named;
    } catch (error) {
      return { ...named, index_line_not_written: error instanceof Error ? error.message : String(error) };
    }
  });
}

/**
 * The index line of a state restored through a receipt, as snapshot writes one: a receipt keeps no
 * record count, so it is the restored bytes' own (counted by the restore, or read again when an
 * earlier restore is the answer). Written only once the restore is published: a failed undo leaves
 * the index as it was.
 */
async function lineOfRestored(layout: VaultLayout, result: UndoResult, env: NodeJS.ProcessEnv): Promise<T.VaultEntry> {
  if (!result.reused) return result.restored;
  const lines = new LineCounter();
  await reconstructSnapshot(layout, result.restored.sha256, (chunk) => lines.push(chunk), env);
  return { ...result.restored, record_count: lines.count };
}

/**
 * The newest completed restore of `entry` whose copy is still where it was published, byte for byte:
 * undoing again returns it, as a repeated apply returns its fork, rather than publishing a second
 * identical session. A copy that was resumed (changed) or removed does not count.
 */
async function unchangedRestore(layout: VaultLayout, entry: T.VaultEntry): Promise<T.OperationReceipt | null> {
  const earlier = (await listReceipts(layout))
    .filter((r) => r.completed && r.kind === 'restore' && r.source_path === entry.path && r.snapshot_manifest_sha256 === entry.sha256)
    .sort((a, b) => b.ts - a.ts);
  for (const receipt of earlier) {
    const copy = await hashRegularFile(receipt.path).catch(() => null);
    if (copy?.sha256 === receipt.output_sha256) return receipt;
  }
  return null;
}

/**
 * The snapshot id of the file at `path` as it is now, when the vault holds those bytes intact; null
 * otherwise. Every chunk is read back: undo names this snapshot as the way back to the current file,
 * and a damaged one is no way back (archiving the file again then meets the damage and says so).
 */
async function archivedAsIs(layout: VaultLayout, path: string, env: NodeJS.ProcessEnv, restoring: T.VaultEntry, readBack: ReadonlySet<string> = new Set()): Promise<string | null> {
  const { sha256 } = await hashRegularFile(path);
  // Newest first, each snapshot once (the same bytes archived again share one manifest).
  const ids = new Set([...(await readIndex(layout))].reverse().flatMap((e) => (e.path === path && e.source_sha256 === sha256 ? [e.sha256] : [])));
  // The snapshot being restored may be the file as it is (a published fork's own retained bytes,
  // which no index line names): those bytes are in the vault already, not a state to archive again.
  if (restoring.path === path && restoring.source_sha256 === sha256) ids.add(restoring.sha256);
  for (const id of ids) {
    // `readBack`: snapshots this undo has already read back whole (the one it restores).
    const intact =
      readBack.has(id) ||
      (await reconstructSnapshot(layout, id, () => undefined, env).then(
        (loaded) => loaded.manifest.source_sha256 === sha256,
        () => false,
      ));
    if (intact) return id;
  }
  return null;
}

async function restore(runtime: Runtime, layout: VaultLayout, entry: T.VaultEntry, options: UndoOptions): Promise<UndoResult> {
  // Another undo of the same file publishes its copy first; this one then finds it below.
  const lock = await lockRestores(layout, entry.provider, entry.path);
  try {
    return await restoreLocked(runtime, layout, entry, options);
  } finally {
    await lock.release();
  }
}

async function restoreLocked(runtime: Runtime, layout: VaultLayout, entry: T.VaultEntry, options: UndoOptions): Promise<UndoResult> {
  // Only while the current file is archived too (or gone): a changed one is archived by a new restore.
  const earlier = await unchangedRestore(layout, entry);
  if (earlier) {
    const gone = !existsSync(entry.path);
    const current = gone ? null : await archivedAsIs(layout, entry.path, runtime.env, entry);
    if (gone || current !== null) return { restored: entry, receipt: earlier, pre_undo_snapshot: current, reused: true };
  }
  const provider = await runtime.provider(entry.provider);
  const restoredPath = await createStagingFile(runtime.env);
  try {
    const restored = await restoreSnapshotToStaging(layout, entry.sha256, restoredPath, { env: runtime.env });
    // The line that named this snapshot is what undo reports and publishes under: it must describe
    // the bytes it names, or the answer would be about some other state.
    if (restored.bytes !== entry.bytes || restored.sourceSha256 !== entry.source_sha256) {
      throw vaultDamaged(
        layout.index,
        `the line for snapshot ${entry.sha256.slice(0, 16)} records ${entry.bytes} bytes (sha256 ${entry.source_sha256.slice(0, 16)}), the snapshot holds ${restored.bytes} bytes (sha256 ${restored.sourceSha256.slice(0, 16)})`,
        `set that line's bytes and source_sha256 to the snapshot's (gobstopper show ${entry.sha256} prints them), or delete the line`,
      );
    }
    const identity = await provider.identify({ path: restoredPath });
    const what = unresumableKind(identity.session?.kind);
    if (what !== null) {
      throw new GobstopperError(
        'not_a_session',
        `snapshot ${entry.sha256.slice(0, 16)} is ${what}, not a session the client can resume, so nothing was published; gobstopper export ${entry.sha256} --output <new file> writes its bytes as they are`,
        { details: { session_kind: identity.session!.kind } },
      );
    }
    const verified = await provider.verify({ path: restoredPath });
    const errors = verified.findings.filter((f) => f.severity === 'error');
    if (errors.length) {
      // Which errors, and where else to go: a state archived mid-write (a cut tool call) stays so,
      // and the other states of the session, or this one's bytes as they are, are what is left to the user.
      const codes = [...new Set(errors.map((f) => f.code))].join(', ');
      throw new GobstopperError(
        'snapshot_invalid',
        `snapshot ${entry.sha256.slice(0, 16)} has ${errors.length} verify error(s) (${codes}); restoring it would not resume, so nothing was published. gobstopper history ${entry.session_id} lists the other archived states (undo --sha restores one), and gobstopper export ${entry.sha256} --output <new file> writes this one's bytes as they are`,
        { details: { findings: errors } },
      );
    }
    // A restore of this snapshot that was interrupted (its receipt still pending) is finished under
    // its own id rather than left half done beside a second one; its fork may already be in place.
    const interrupted = await pendingPublication(layout, (r) => r.kind === 'restore' && r.source_path === entry.path && r.snapshot_manifest_sha256 === entry.sha256);
    const newId = interrupted?.output_session_id ?? randomUUID();
    const session: T.SessionHandle = { provider: entry.provider, session_id: entry.session_id, path: entry.path, cwd: identity.session?.cwd ?? null };
    // Checked before the current file is archived: a moved project directory or a taken name fails
    // with nothing written.
    const now = new Date();
    if (!interrupted) await assertForkTargetFree({ provider, session, sourcePath: entry.path, outputSessionId: newId }, now);
    let preUndo: string | null = null;
    if (existsSync(entry.path)) {
      // The current bytes, archived already (an earlier apply or undo of the same file), are not
      // archived again: a second index line would only relabel the same snapshot. A session its
      // client is still appending to is read again until one read finds it whole, as `snapshot`
      // does: what is archived is only the way back, and the restore does not depend on it.
      preUndo =
        (await archivedAsIs(layout, entry.path, runtime.env, entry, new Set([entry.sha256]))) ??
        (await snapshotSettled(layout, { path: entry.path, sessionId: entry.session_id, provider: entry.provider, strategy: PRE_UNDO_LABEL, env: runtime.env, fault: options.fault })).entry.sha256;
    }
    const published = await publishCandidate(layout, {
      provider,
      session,
      sourcePath: entry.path,
      sourceSha256: restored.sourceSha256,
      sourceBytes: restored.bytes,
      kind: 'restore',
      inputsSha256: sha256OfJson(newId),
      outputSessionId: newId,
      renderPath: restoredPath,
      renderSha256: restored.sourceSha256,
      edits: [],
      strategyLabel: 'restore',
      snapshotManifestSha256: entry.sha256,
      baselineFindings: verified.findings,
      requireSmaller: false,
      recheckSource: false,
      onStep: options.onStep,
      env: runtime.env,
      now,
    });
    // The count is the bytes' own: a state named by a receipt has none recorded.
    return { restored: { ...entry, record_count: restored.recordCount }, receipt: published.receipt, pre_undo_snapshot: preUndo };
  } catch (error) {
    throw aboutTheSnapshot(error, restoredPath, entry.sha256);
  } finally {
    await discardStaging(restoredPath);
  }
}

/**
 * What a provider says about the private copy the snapshot was restored into is said about the
 * snapshot: the copy is a name nobody can look up once undo is over.
 */
function aboutTheSnapshot(error: unknown, copy: string, sha: string): unknown {
  if (!(error instanceof GobstopperError) || !error.message.includes(copy)) return error;
  return new GobstopperError(error.code, error.message.replaceAll(copy, `snapshot ${sha.slice(0, 16)}`), { exit: error.exit, details: error.details, cause: error });
}
