/**
 * Pending receipts that no run will ever finish. A compaction or a fork is named by its source's
 * bytes: a run killed after writing its pending receipt is finished by the next run of the same
 * operation, but once the source has changed no run asks for that operation again, and its receipt
 * would stay pending, keeping its snapshot from being pruned, forever. Such a receipt whose fork was
 * never published is abandoned and `prune --apply` removes it, so its snapshot falls under the
 * keep-newest rule again; one whose fork is in place (only the mark was lost) is completed, as its own
 * run would have done. A restore names an archived state, which does not change: the next undo of
 * that state finishes it, so it is never abandoned.
 */
import { lstat } from 'node:fs/promises';
import type { OperationReceipt } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import type { VaultLayout } from '../vault/layout.js';
import type { FileLock } from '../vault/lock.js';
import { hashRegularFile } from './publish.js';
import { discardPendingReceipt, lockOperation, markReceiptCompleted, readReceipt } from './receipt.js';
import { reconcile } from './reconcile.js';

/**
 * Whether the receipt's source is still the file it was made from. Only a certain answer counts as
 * changed (gone, not a regular file, another size or digest); a file that cannot be read now may be
 * unchanged, so its receipt stays.
 */
async function sourceChanged(receipt: OperationReceipt): Promise<boolean> {
  let st;
  try {
    st = await lstat(receipt.source_path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  if (!st.isFile() || st.size !== receipt.bytes_before) return true;
  const hashed = await hashRegularFile(receipt.source_path).catch(() => null);
  return hashed !== null && hashed.sha256 !== receipt.source_sha256;
}

/**
 * What to do with a pending receipt whose source has changed: complete it when its fork is in
 * place with the published bytes, remove it when nothing is at the fork's path, else nothing
 * (something else at its path, which a person decides about).
 */
async function settlement(layout: VaultLayout, receipt: OperationReceipt): Promise<'complete' | 'remove' | null> {
  const decision = await reconcile(layout, receipt);
  if (decision.state === 'confirm') return 'complete';
  if (decision.state === 'republish') return 'remove';
  return null;
}

export interface Settlement {
  /** The receipts that stop referencing their snapshots: removed by `settle`. */
  abandoned: OperationReceipt[];
  /** Removes the abandoned receipts and completes those whose fork is in place. */
  settle(): Promise<void>;
  /** Releases the operations' locks. */
  release(): Promise<void>;
}

/**
 * Judges the pending receipts without changing anything, so a prune can decide and check all it
 * keeps before it touches a file. With `lock`, each receipt with something to do is judged under its
 * operation's lock, held until `release`: a run of that operation going on now is never overtaken
 * (a lock that is held skips its receipt until the next prune), and what `settle` does later is
 * what was decided. Without it (a preview) nothing is locked, and `settle` is not to be called.
 */
export async function judgeReceipts(layout: VaultLayout, receipts: readonly OperationReceipt[], options: { lock: boolean }): Promise<Settlement> {
  const actions: { receipt: OperationReceipt; action: 'complete' | 'remove' }[] = [];
  const locks: FileLock[] = [];
  const release = async () => {
    for (const lock of locks.splice(0)) await lock.release();
  };
  try {
    for (const candidate of receipts) {
      if (candidate.completed || candidate.kind === 'restore') continue;
      // Once changed, a source stays unlike the bytes the receipt names; checked once, before any lock,
      // as most pending receipts belong to a source that is unchanged (a run still to be finished).
      if (!(await sourceChanged(candidate))) continue;
      if (!options.lock) {
        const action = await settlement(layout, candidate);
        if (action) actions.push({ receipt: candidate, action });
        continue;
      }
      let lock: FileLock;
      try {
        lock = await lockOperation(layout, candidate.operation);
      } catch (error) {
        if (error instanceof GobstopperError && error.code === 'operation_running') continue;
        throw error;
      }
      let held = false;
      try {
        // Under the lock the receipt is read again: a run that ended meanwhile may have completed it.
        const receipt = await readReceipt(layout, candidate.operation);
        const action = receipt && !receipt.completed ? await settlement(layout, receipt) : null;
        if (receipt && action) {
          actions.push({ receipt, action });
          locks.push(lock);
          held = true;
        }
      } finally {
        if (!held) await lock.release();
      }
    }
  } catch (error) {
    await release();
    throw error;
  }
  return {
    abandoned: actions.filter((a) => a.action === 'remove').map((a) => a.receipt),
    settle: async () => {
      for (const { receipt, action } of actions) {
        if (action === 'complete') await markReceiptCompleted(layout, receipt);
        else await discardPendingReceipt(layout, receipt);
      }
    },
    release,
  };
}
