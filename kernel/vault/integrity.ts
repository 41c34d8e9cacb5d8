/**
 * `vault --verify`: every snapshot read back as undo reads it (the manifest, each index line against
 * it, every chunk against its name, the whole against its size and source digest), and its records
 * counted on that same pass against each line's record_count, so damage left by a disk fault, a
 * restored backup, a copy to another machine or a hand edit of the index is found before a restore
 * or a listing relies on it. Nothing is written, not even a lock: the check takes no custody, as
 * show and diff take none (a hold file is a write, and a read-only vault must be checkable). A
 * prune running meanwhile removes a snapshot's index line, then its manifest, and only then the
 * chunks no remaining manifest uses; so a snapshot that failed and is by then gone from both the
 * index and manifests/ was pruned under the check, not damaged, and is left out of the answer.
 *
 * Every operation receipt is read as prune, apply and undo read it (one damaged receipt makes them
 * refuse), each on its own so that one damaged receipt hides neither the others' damage nor the
 * retained copies they name, and the snapshots a readable receipt names must be in manifests/.
 *
 * Every card file is read as recall reads it (card-file-check.ts): one recall would pass over, or
 * one left from a snapshot that is gone, is reported with its repair (deleting it is always safe).
 */
import { lstat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DamagedReceipt, DamagedSnapshot, OperationReceipt, VaultEntry, VaultVerifyCommandOutput } from '../../schemas/generated/types.js';
import { readReceipt, receiptOperations, receiptPath } from '../publish/receipt.js';
import { MAX_TRANSCRIPT_LIMIT_BYTES } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';
import { damagedCardFiles } from './card-file-check.js';
import { checkProblem } from './check-problem.js';
import { vaultDamaged, VaultDamagedError } from './errors.js';
import { withForkHint } from './fork-hint.js';
import { readIndex, streamOf } from './index-file.js';
import { manifestOfEntry } from './indexed-manifest.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { CardScanner, type CardLine } from './card-scan.js';
import { listSnapshots } from './list.js';
import { loadManifest, type LoadedManifest } from './manifest.js';
import { numberNewestFirst, recordCountDamage, type NumberedLine } from './record-count-check.js';
import { streamManifestChunks } from './reconstruct.js';
import { filterBySession, listManifestIds } from './selectors.js';

export type { VaultVerifyCommandOutput };

type Problem = DamagedSnapshot['problem'];
/** What is wrong with one snapshot: the first problem met, and for a wrong record count its lines. */
type Damage = Pick<DamagedSnapshot, 'problem' | 'record_counts'>;

export interface VerifyProgress {
  /** Snapshots finished before this one. */
  done: number;
  total: number;
  sha256: string;
  /** Bytes of this snapshot read back so far, of `bytes` (0 until its manifest is read). */
  read: number;
  bytes: number;
}

export interface VerifyRequest {
  /** A session-id prefix or path: only that session's indexed snapshots are checked. */
  session?: string;
  onProgress?: (progress: VerifyProgress) => void;
  env?: NodeJS.ProcessEnv;
}

/**
 * Why a snapshot is checked: a listing shows it, a published fork's receipt names it (undo reaches
 * it through the fork), or nothing does.
 */
type Reach = 'listed' | 'retained' | 'unindexed';

interface Target {
  sha256: string;
  reach: Reach;
  /** The index lines naming it, newest first; empty for a snapshot without one. */
  lines: NumberedLine[];
}

/** Each snapshot once, in listing order, with every line that names it. */
function indexedTargets(lines: readonly NumberedLine[]): Target[] {
  const bySha = new Map<string, Target>();
  for (const line of lines) {
    const target = bySha.get(line.entry.sha256) ?? { sha256: line.entry.sha256, reach: 'listed' as const, lines: [] };
    target.lines.push(line);
    bySha.set(line.entry.sha256, target);
  }
  return [...bySha.values()];
}

/** The lines that make different claims about a snapshot (a line archived again repeats one). */
function distinctClaims(lines: readonly NumberedLine[]): VaultEntry[] {
  const seen = new Map<string, VaultEntry>();
  for (const { entry: line } of lines) {
    const claim = `${streamOf(line)}\0${line.bytes}\0${line.source_sha256}`;
    if (!seen.has(claim)) seen.set(claim, line);
  }
  return [...seen.values()];
}

function manifestProblem(error: unknown, target: Target): Problem {
  if (error instanceof GobstopperError && error.code === 'snapshot_not_found') {
    return { code: 'manifest_missing', message: `manifest missing: ${target.lines.length > 0 ? 'the index lists the snapshot, ' : ''}manifests/ does not hold it` };
  }
  if (error instanceof VaultDamagedError) return { code: 'manifest_unreadable', message: `manifest unreadable: ${error.problem}` };
  return checkProblem(error);
}

function lineProblem(error: unknown): Problem {
  if (error instanceof VaultDamagedError) return { code: 'index_mismatch', message: `index line does not match the manifest: ${error.problem}` };
  return checkProblem(error);
}

async function contentProblem(error: unknown, layout: VaultLayout): Promise<Problem> {
  if (!(error instanceof VaultDamagedError)) return checkProblem(error);
  if (dirname(error.file) !== layout.chunks) return { code: 'content_mismatch', message: `size or hash mismatch: ${error.problem}` };
  const chunk = basename(error.file);
  if (!(await present(error.file))) return { code: 'chunk_missing', message: `missing chunk ${chunk}` };
  return { code: 'chunk_damaged', message: `chunk ${chunk} is damaged: ${error.problem}` };
}

const present = (path: string) => lstat(path).then(
  () => true,
  () => false,
);

/**
 * The first problem reading `target` back, or null when every byte of it is intact and every line
 * naming it counts its records right. The records are counted as the chunks stream past: a count
 * is only known once the whole snapshot was read, and reading it twice would double the check.
 */
async function damageOf(
  layout: VaultLayout,
  target: Target,
  env: NodeJS.ProcessEnv,
  onRead: (loaded: LoadedManifest, read: number) => void,
  onCards: (lines: CardLine[]) => void,
): Promise<Damage | null> {
  let loaded: LoadedManifest;
  try {
    loaded = await loadManifest(layout, target.sha256, env);
  } catch (error) {
    return { problem: manifestProblem(error, target) };
  }
  for (const line of distinctClaims(target.lines)) {
    try {
      await manifestOfEntry(layout, line, env);
    } catch (error) {
      return { problem: lineProblem(error) };
    }
  }
  let read = 0;
  // The same pass finds the records holding a card, for the card file to be checked against.
  const records = new CardScanner();
  onRead(loaded, read);
  try {
    await streamManifestChunks(layout, loaded, (chunk) => {
      records.push(chunk);
      read += chunk.length;
      onRead(loaded, read);
    });
  } catch (error) {
    return { problem: await contentProblem(error, layout) };
  }
  onCards(records.finish());
  return recordCountDamage(layout.index, target.lines, records.recordCount);
}

interface ReceiptCheck {
  /** The receipts read whole. */
  readable: OperationReceipt[];
  /** Receipt files checked, the damaged ones included. */
  checked: number;
  damaged: DamagedReceipt[];
}

/** Every receipt read as the commands that refuse a damaged one read it, each on its own. */
async function readEveryReceipt(layout: VaultLayout): Promise<ReceiptCheck> {
  const check: ReceiptCheck = { readable: [], checked: 0, damaged: [] };
  let operations: string[];
  try {
    operations = await receiptOperations(layout);
  } catch (error) {
    check.damaged.push({ file: layout.operations, operation: null, session_id: null, problem: checkProblem(error) });
    return check;
  }
  for (const operation of operations) {
    let receipt: OperationReceipt | null;
    try {
      receipt = await readReceipt(layout, operation);
    } catch (error) {
      check.checked++;
      check.damaged.push({ file: receiptPath(layout, operation), operation, session_id: null, problem: checkProblem(error) });
      continue;
    }
    // Gone since the directory was read: a prune settled it.
    if (receipt === null) continue;
    check.checked++;
    check.readable.push(receipt);
  }
  return check;
}

/**
 * A readable receipt naming a snapshot manifests/ does not hold: prune refuses such a vault, and
 * undo cannot restore through it. A prune removes a receipt before the snapshots only it names, so
 * a receipt gone or changed when read again was settled under the check, not damaged.
 */
async function missingManifestOf(layout: VaultLayout, receipt: OperationReceipt): Promise<DamagedReceipt | null> {
  const named = [
    { field: 'snapshot_manifest_sha256', sha: receipt.snapshot_manifest_sha256, path: receipt.source_path },
    { field: 'output_manifest_sha256', sha: receipt.output_manifest_sha256, path: receipt.path },
  ] as const;
  for (const { field, sha, path } of named) {
    const manifest = join(layout.manifests, sha);
    if (await present(manifest)) continue;
    const again = await readReceipt(layout, receipt.operation).catch(() => null);
    if (again === null || again[field] !== sha) return null;
    const file = receiptPath(layout, receipt.operation);
    const error = vaultDamaged(
      file,
      `its ${field} ${sha} names a snapshot manifests/ does not hold`,
      `restore ${manifest} from a backup, or, if ${path} is unchanged since, run gobstopper snapshot ${path} to write it again (prune refuses while a receipt names a snapshot that is gone)`,
    );
    return { file, operation: receipt.operation, session_id: receipt.source_session_id, problem: { code: 'manifest_missing', message: error.message } };
  }
  return null;
}

/**
 * The receipts to check: all of them, or for one session those whose source or fork is one of
 * `sessions` and every one that cannot be read (its session cannot be told).
 */
async function checkReceipts(layout: VaultLayout, sessions?: ReadonlySet<string>): Promise<ReceiptCheck> {
  const all = await readEveryReceipt(layout);
  const ours = (r: OperationReceipt) => sessions === undefined || sessions.has(r.source_session_id) || sessions.has(r.output_session_id);
  const readable = all.readable.filter(ours);
  const damaged = [...all.damaged];
  for (const receipt of readable) {
    const missing = await missingManifestOf(layout, receipt);
    if (missing) damaged.push(missing);
  }
  damaged.sort((a, b) => (a.operation ?? '').localeCompare(b.operation ?? ''));
  return { readable: sessions === undefined ? all.readable : readable, checked: all.checked - all.readable.length + readable.length, damaged };
}

/**
 * The snapshots a session selector names, newest first; a selector naming none is refused. The whole
 * index is read so that each line keeps its number in the file, which the repair of a line names.
 */
async function sessionTargets(layout: VaultLayout, session: string): Promise<Target[]> {
  return withForkHint(layout, session, async () => {
    const lines = numberNewestFirst(await listSnapshots(layout));
    const chosen = new Set(await filterBySession(lines.map((l) => l.entry), session));
    if (chosen.size === 0) throw new GobstopperError('session_not_archived', `no snapshots of sessions matching '${session}' (gobstopper vault lists them)`);
    return indexedTargets(lines.filter((l) => chosen.has(l.entry)));
  });
}

/**
 * Damage whose snapshot a prune removed while it was checked: its manifest is gone, and so is every
 * line naming it from the index as it is now.
 */
async function prunedMeanwhile(layout: VaultLayout, damaged: readonly DamagedSnapshot[]): Promise<Set<string>> {
  const gone = new Set<string>();
  for (const d of damaged) if (!(await present(join(layout.manifests, d.sha256)))) gone.add(d.sha256);
  if (gone.size === 0) return gone;
  for (const entry of await readIndex(layout)) gone.delete(entry.sha256);
  return gone;
}

/**
 * GOBSTOPPER_MAX_TRANSCRIPT_BYTES bounds what a parse holds in memory; this check holds one chunk at
 * a time, so a snapshot archived under a higher limit than the one set now is read back rather than
 * called damaged. Only a size no limit could have let in is still refused.
 */
function anySizeAllowed(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GOBSTOPPER_MAX_TRANSCRIPT_BYTES: String(MAX_TRANSCRIPT_LIMIT_BYTES) };
}

export async function verifyVault(layout: VaultLayout, request: VerifyRequest = {}): Promise<VaultVerifyCommandOutput> {
  const env = anySizeAllowed(request.env ?? process.env);
  let targets: Target[];
  let unindexed: string[] = [];
  let indexProblem: Problem | null = null;
  let receipts: ReceiptCheck;
  if (request.session !== undefined) {
    targets = await sessionTargets(layout, request.session);
    receipts = await checkReceipts(layout, new Set(targets.flatMap((t) => t.lines.map((line) => line.entry.session_id))));
  } else {
    // A damaged index is the damage this check most often meets: said, with the repair, and every
    // stored snapshot still read back (none listed, so all as ones no line names).
    const listing = await listSnapshots(layout).then(
      (entries) => ({ entries, problem: null }),
      (error: unknown) => {
        if (error instanceof VaultDamagedError && error.file === layout.index) return { entries: [] as VaultEntry[], problem: { code: error.code, message: error.message } };
        throw error;
      },
    );
    const entries = listing.entries;
    indexProblem = listing.problem;
    targets = indexedTargets(numberNewestFirst(entries));
    receipts = await checkReceipts(layout);
    if (await vaultExists(layout)) {
      const indexed = new Set(entries.map((e) => e.sha256));
      const withoutLine = (await listManifestIds(layout)).filter((sha) => !indexed.has(sha)).sort();
      // A receipt that cannot be read names no publication: its output then counts as unindexed.
      const outputs = new Set(receipts.readable.map((r) => r.output_manifest_sha256));
      unindexed = withoutLine.filter((sha) => !outputs.has(sha));
      // A publication's retained output first (undo reaches it through its fork), then the rest.
      targets.push(...withoutLine.filter((sha) => outputs.has(sha)).map((sha) => ({ sha256: sha, reach: 'retained' as const, lines: [] })));
      targets.push(...unindexed.map((sha) => ({ sha256: sha, reach: 'unindexed' as const, lines: [] })));
    }
  }

  const damaged: DamagedSnapshot[] = [];
  const cardLines = new Map<string, CardLine[]>();
  for (const [done, target] of targets.entries()) {
    const report = (loaded: LoadedManifest | null, read: number) =>
      request.onProgress?.({ done, total: targets.length, sha256: target.sha256, read, bytes: loaded?.manifest.bytes ?? 0 });
    report(null, 0);
    const damage = await damageOf(layout, target, env, report, (lines) => cardLines.set(target.sha256, lines));
    if (damage === null) continue;
    const newest = target.lines[0]?.entry;
    damaged.push({ sha256: target.sha256, session_id: newest?.session_id ?? null, provider: newest?.provider ?? null, indexed: newest !== undefined, ...damage });
  }

  // prune reads the index first and refuses a damaged one, so none can have run under this check.
  const pruned = indexProblem === null ? await prunedMeanwhile(layout, damaged) : new Set<string>();
  const stillThere = (sha: string) => !pruned.has(sha);
  const checked = targets.filter((t) => stillThere(t.sha256));
  const reached = (reach: Reach) => checked.filter((t) => t.reach === reach).length;
  const cardFiles = await damagedCardFiles(layout, env, cardLines, request.session === undefined ? undefined : new Set(targets.map((t) => t.sha256)));
  return {
    verified: checked.length,
    listed: reached('listed'),
    retained: reached('retained'),
    damaged: damaged.filter((d) => stillThere(d.sha256)),
    unindexed: unindexed.filter(stillThere).length,
    unindexed_snapshots: unindexed.filter(stillThere),
    index_problem: indexProblem,
    receipts: receipts.checked,
    damaged_receipts: receipts.damaged,
    damaged_card_files: cardFiles,
  };
}
