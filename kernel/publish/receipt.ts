/**
 * Operation receipts `vault/operations/<operation>.json`. An operation is named by the sha256 of
 * what determines its output (kind, provider, source path and bytes, inputs), so running the same
 * compaction twice finds the first run's receipt instead of producing a second fork.
 */
import { createHash } from 'node:crypto';
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { validateOperationReceipt } from '../../schemas/generated/validators.js';
import type { OperationKind, OperationReceipt, VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { vaultDamaged } from '../vault/errors.js';
import { ensureVault, type VaultLayout } from '../vault/layout.js';
import { MAX_RECEIPT_BYTES } from '../vault/limits.js';
import { FileLock, LockBusyError } from '../vault/lock.js';
import { holderText, removalAdvice } from '../vault/process-stamp.js';
import { checkPrivateDir, FileTooLargeError, fsyncDir, publishNewPrivateFile, readPrivateFile, replacePrivateFile, type WriteAll } from '../vault/private-fs.js';
import { faultPoint, type FaultHook } from './faults.js';

export type { OperationKind, OperationReceipt };

export const RECEIPT_SCHEMA_VERSION = 3;

export interface OperationIdentity {
  kind: OperationKind;
  provider: string;
  source_path: string;
  source_sha256: string;
  inputs_sha256: string;
}

/** JSON with object keys sorted at every level and no whitespace: one spelling per value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sha256OfJson(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export function operationId(identity: OperationIdentity): string {
  const { kind, provider, source_path, source_sha256, inputs_sha256 } = identity;
  return sha256OfJson({ kind, provider, source_path, source_sha256, inputs_sha256 });
}

/**
 * A UUID-v4-shaped session id derived from the operation, so a retried compaction publishes under
 * the same new id: h[0..8]-h[8..12]-4h[13..16]-ah[17..20]-h[20..32].
 */
export function deriveOutputSessionId(operation: string): string {
  const h = operation;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function receiptPath(layout: VaultLayout, operation: string): string {
  return join(layout.operations, `${operation}.json`);
}

/** Why a receipt is not acceptable, or null. Beyond the schema: ids and derived numbers agree. */
export function receiptProblem(value: unknown): string | null {
  if (!validateOperationReceipt(value)) {
    const first = validateOperationReceipt.errors?.[0];
    return first ? `${first.instancePath || 'receipt'} ${first.message ?? 'is invalid'}` : 'does not match the receipt schema';
  }
  const r = value as OperationReceipt;
  if (operationId(r) !== r.operation) return 'operation id does not match its identity fields';
  if (r.snapshot_sha256 !== r.source_sha256) return 'snapshot_sha256 differs from source_sha256';
  if (r.reclaimed_bytes !== Math.max(0, r.bytes_before - r.bytes_after)) return 'reclaimed_bytes is not bytes_before - bytes_after';
  return null;
}

function repairReceipt(file: string): string {
  // A damaged receipt cannot say where its fork went: when one was published, the run that starts
  // over meets it at the same target and names it then.
  return `move ${file} aside to start this operation over (its snapshots stay in the vault; a fork it already published is then named as the next file to move aside)`;
}

/** The receipt of `operation`, or null when there is none. A damaged receipt fails closed. */
export async function readReceipt(layout: VaultLayout, operation: string): Promise<OperationReceipt | null> {
  const file = receiptPath(layout, operation);
  let data: Buffer | null;
  try {
    data = await readPrivateFile(file, MAX_RECEIPT_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw vaultDamaged(file, `receipt is over ${MAX_RECEIPT_BYTES} bytes`, repairReceipt(file));
    throw error;
  }
  if (data === null) return null;
  return parseReceipt(file, data, operation);
}

function parseReceipt(file: string, data: Buffer, operation: string): OperationReceipt {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw vaultDamaged(file, 'receipt is not JSON', repairReceipt(file));
  }
  const problem = receiptProblem(value);
  if (problem) throw vaultDamaged(file, `receipt is invalid (${problem})`, repairReceipt(file));
  if ((value as OperationReceipt).operation !== operation) throw vaultDamaged(file, 'receipt is filed under another operation id', repairReceipt(file));
  return value as OperationReceipt;
}

/**
 * The operations whose receipts `operations/` holds, sorted: every `<operation>.json` file, damaged
 * ones included (locks and temp files are not receipts). Throws when the directory is not private.
 */
export async function receiptOperations(layout: VaultLayout): Promise<string[]> {
  // Never read receipts through a link: prune decides what to keep from them.
  if (!(await checkPrivateDir(layout.operations))) return [];
  const names = await readdir(layout.operations);
  return names
    .sort()
    .map((name) => /^([0-9a-f]{64})\.json$/.exec(name)?.[1])
    .filter((operation): operation is string => operation !== undefined);
}

/**
 * Every receipt that can be read, for the answers a damaged receipt should cost only its own fork:
 * each damaged one goes to `onDamaged` and is left out. The operations folder itself unreadable
 * still throws.
 */
export async function readableReceipts(layout: VaultLayout, onDamaged: (error: unknown) => void = () => undefined): Promise<OperationReceipt[]> {
  const receipts: OperationReceipt[] = [];
  for (const operation of await receiptOperations(layout)) {
    try {
      const receipt = await readReceipt(layout, operation);
      if (receipt) receipts.push(receipt);
    } catch (error) {
      onDamaged(error);
    }
  }
  return receipts;
}

/** Every receipt in the vault; any damaged one fails the whole read (prune must not guess). */
export function listReceipts(layout: VaultLayout): Promise<OperationReceipt[]> {
  return readableReceipts(layout, (error) => {
    throw error;
  });
}

function serialize(receipt: OperationReceipt): Buffer {
  return Buffer.from(JSON.stringify(receipt, null, 2) + '\n', 'utf8');
}

function assertValid(receipt: OperationReceipt): void {
  const problem = receiptProblem(receipt);
  if (problem) throw new GobstopperError('invalid_receipt', `refusing to write an invalid receipt: ${problem}`);
}

/** Writes the first form of a receipt (completed:false). Refuses if one exists. */
export async function writePendingReceipt(layout: VaultLayout, receipt: OperationReceipt, options: { writeAll?: WriteAll; fault?: FaultHook } = {}): Promise<void> {
  if (receipt.completed) throw new GobstopperError('invalid_receipt', 'a new receipt must be written with completed:false before publication');
  assertValid(receipt);
  await ensureVault(layout);
  const file = receiptPath(layout, receipt.operation);
  const outcome = await publishNewPrivateFile(layout.operations, `${receipt.operation}.json`, serialize(receipt), options.writeAll);
  if (outcome === 'exists') throw new GobstopperError('receipt_exists', `a receipt for this operation already exists (${file}); reconcile it instead of starting over`);
  await fsyncDir(layout.operations);
  faultPoint('receipt.after_pending', options.fault);
}

/** Atomically replaces a pending receipt with its completed form. */
export async function markReceiptCompleted(layout: VaultLayout, receipt: OperationReceipt, options: { fault?: FaultHook; now?: number } = {}): Promise<OperationReceipt> {
  const completed: OperationReceipt = { ...receipt, completed: true, ts: options.now ?? Math.floor(Date.now() / 1000) };
  assertValid(completed);
  const existing = await readReceipt(layout, receipt.operation);
  if (!existing) throw new GobstopperError('receipt_missing', `the receipt of operation ${receipt.operation.slice(0, 16)} disappeared before it was completed`);
  faultPoint('receipt.before_complete', options.fault);
  await replacePrivateFile(receiptPath(layout, receipt.operation), serialize(completed));
  return completed;
}

/**
 * Removes the receipt of a publication that was refused after it was written and before anything
 * was published (the source changed meanwhile). Only a pending receipt, exactly as written, goes;
 * the caller holds the operation lock.
 */
export async function discardPendingReceipt(layout: VaultLayout, receipt: OperationReceipt): Promise<void> {
  if (receipt.completed) throw new GobstopperError('invalid_receipt', 'a completed receipt is never discarded');
  const existing = await readReceipt(layout, receipt.operation);
  if (!existing || existing.completed || existing.output_sha256 !== receipt.output_sha256) return;
  await unlink(receiptPath(layout, receipt.operation));
  await fsyncDir(layout.operations);
}

/**
 * A second run refused because the lock of the same work is held: who holds it, the lock file, and
 * that the file may go when no gobstopper runs (a run killed on another boot, or on another machine
 * sharing the vault, leaves one that only a person can judge).
 */
function alreadyRunning(code: string, what: string, error: LockBusyError, details: Record<string, unknown>): GobstopperError {
  const by = error.holder ? ` as ${holderText(error.holder)}` : '';
  const advice = removalAdvice([error.holder], { wait: 'wait for it to finish, then run the command again' });
  return new GobstopperError(code, `${what} is already running${by} (${error.lockPath}); ${advice}`, { details: { ...details, lock: error.lockPath } });
}

/**
 * Takes the per-operation lock without waiting: a second run of the same operation at the same
 * time gets a clear "already running" error instead of racing the first.
 */
export async function lockOperation(layout: VaultLayout, operation: string): Promise<FileLock> {
  await ensureVault(layout);
  try {
    return await FileLock.acquire(join(layout.operations, `${operation}.lock`), { waitMs: 0, what: `operation ${operation.slice(0, 16)}` });
  } catch (error) {
    if (error instanceof LockBusyError) throw alreadyRunning('operation_running', `operation ${operation.slice(0, 16)}`, error, { operation });
    throw error;
  }
}

/** How long an undo waits for another undo of the same file: a restore takes seconds, not minutes. */
export const RESTORE_LOCK_WAIT_MS = 30_000;

/**
 * Serialises the restores of one file. Each restore gets a fresh id, so two undos started together
 * would each find no earlier restore and publish one apiece; the second waits for the first instead
 * and then finds its copy. One still running after the wait is refused like a second apply.
 */
export async function lockRestores(layout: VaultLayout, provider: string, sourcePath: string, waitMs = RESTORE_LOCK_WAIT_MS): Promise<FileLock> {
  await ensureVault(layout);
  const key = sha256OfJson({ kind: 'restore', provider, source_path: sourcePath });
  const what = `an undo of ${sourcePath}`;
  try {
    return await FileLock.acquire(join(layout.operations, `restore-${key}.lock`), { waitMs, what });
  } catch (error) {
    if (error instanceof LockBusyError) throw alreadyRunning('undo_running', what, error, { path: sourcePath });
    throw error;
  }
}

/**
 * The vault entry a published file would have had: its retained bytes (kept without an index entry),
 * under its own id and path. Its record count is not kept, so it reads 0.
 */
export function publishedEntry(r: OperationReceipt): VaultEntry {
  return {
    ts: r.ts,
    sha256: r.output_manifest_sha256,
    path: r.path,
    session_id: r.output_session_id,
    provider: r.provider,
    bytes: r.bytes_after,
    record_count: 0,
    strategy: r.strategy,
    source_sha256: r.output_sha256,
  };
}

/**
 * The vault entry of the state a receipt names as its source's snapshot, for a snapshot whose index
 * line was lost: its session, file and bytes, under the receipt's label. Its record count is not
 * kept, so it reads 0.
 */
export function sourceEntry(r: OperationReceipt): VaultEntry {
  return {
    ts: r.ts,
    sha256: r.snapshot_manifest_sha256,
    path: r.source_path,
    session_id: r.source_session_id,
    provider: r.provider,
    bytes: r.bytes_before,
    record_count: 0,
    strategy: r.strategy,
    source_sha256: r.source_sha256,
  };
}
