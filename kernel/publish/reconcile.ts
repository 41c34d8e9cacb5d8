/**
 * What to do with an operation that already has a receipt. The answer depends only on the receipt
 * and on what is at its output path; a strategy is never re-run, because the exact output bytes are
 * retained in the vault (`output_manifest_sha256`).
 */
import { lstat } from 'node:fs/promises';
import type { OperationReceipt } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import type { PathEnv } from '../paths.js';
import type { VaultLayout } from '../vault/layout.js';
import type { FaultHook } from './faults.js';
import { noteForStop } from '../exit-cleanup.js';
import { completedNote, publishNoted } from './published-note.js';
import { hashRegularFile, hashRegularFilePrefix } from './publish.js';
import { markReceiptCompleted, receiptPath } from './receipt.js';
import { createStagingFile, discardStaging, restoreSnapshotToStaging } from './staging.js';

export type Reconciliation =
  /**
   * Completed, and the output is there with the recorded bytes; `resumed` when a client has since
   * appended to it (the published bytes are still its beginning).
   */
  | { state: 'done'; resumed?: boolean }
  /** Published but not yet marked completed (a crash in between): mark it. */
  | { state: 'confirm' }
  /**
   * Never published, or published and since removed: publish the retained output bytes at the
   * recorded path. A run of the same operation asks for exactly that file; giving it back under its
   * own id is what that run would have produced.
   */
  | { state: 'republish'; gone: boolean }
  /** Something else is at the output: a person must decide. */
  | { state: 'repair'; message: string };

type OutputState = 'missing' | 'match' | 'continued' | 'differs' | 'not_regular';

async function outputState(receipt: OperationReceipt): Promise<OutputState> {
  let st;
  try {
    st = await lstat(receipt.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  if (!st.isFile()) return 'not_regular';
  // A resumed fork grows: the client appends to what was published and never rewrites it.
  if (st.size > receipt.bytes_after) return (await hashRegularFilePrefix(receipt.path, receipt.bytes_after)) === receipt.output_sha256 ? 'continued' : 'differs';
  if (st.size !== receipt.bytes_after) return 'differs';
  const { sha256 } = await hashRegularFile(receipt.path);
  return sha256 === receipt.output_sha256 ? 'match' : 'differs';
}

export async function reconcile(layout: VaultLayout, receipt: OperationReceipt): Promise<Reconciliation> {
  const state = await outputState(receipt);
  const file = receiptPath(layout, receipt.operation);
  if (state === 'match') return receipt.completed ? { state: 'done' } : { state: 'confirm' };
  if (state === 'continued') return receipt.completed ? { state: 'done', resumed: true } : { state: 'confirm' };
  if (state === 'missing') return { state: 'republish', gone: receipt.completed };
  const what = state === 'not_regular' ? 'is not a regular file' : `no longer begins with the bytes that were published there (sha256 ${receipt.output_sha256.slice(0, 16)}…)`;
  return {
    state: 'repair',
    message: `repair required: ${receipt.path} ${what}; move that file aside (gobstopper never overwrites it) and run the command again, or move ${file} aside to start over`,
  };
}

export interface FinishOptions {
  env?: PathEnv & NodeJS.ProcessEnv;
  fault?: FaultHook;
  stagingDir?: string;
  /** Told when a completed output that had been removed was published again. */
  onRestored?: (receipt: OperationReceipt) => void;
  /** Told when a client has appended to the output since it was published. */
  onResumed?: (receipt: OperationReceipt) => void;
  /** Told when the output of a run that stopped before publishing it is published now. */
  onFinishedInterrupted?: (receipt: OperationReceipt) => void;
}

/**
 * Brings an existing operation to completion if that is safe, returning its completed receipt;
 * throws `repair_required` with the reconcile message otherwise. The caller holds the operation lock.
 */
export async function finishOperation(layout: VaultLayout, receipt: OperationReceipt, options: FinishOptions = {}): Promise<OperationReceipt> {
  const decision = await reconcile(layout, receipt);
  switch (decision.state) {
    case 'done':
      if (decision.resumed) options.onResumed?.(receipt);
      return receipt;
    case 'confirm':
      return markReceiptCompleted(layout, receipt, { fault: options.fault });
    case 'republish': {
      const env = options.env ?? process.env;
      const staging = await createStagingFile(env, { dir: options.stagingDir, fault: options.fault });
      try {
        const restored = await restoreSnapshotToStaging(layout, receipt.output_manifest_sha256, staging, { env });
        if (restored.sourceSha256 !== receipt.output_sha256 || restored.bytes !== receipt.bytes_after) {
          throw new GobstopperError('repair_required', `repair required: the retained output ${receipt.output_manifest_sha256.slice(0, 16)} does not hold the bytes receipt ${receipt.operation.slice(0, 16)} records`);
        }
        await publishNoted(staging, receipt.path, { expectedSha256: receipt.output_sha256, expectedBytes: receipt.bytes_after, fault: options.fault });
      } finally {
        await discardStaging(staging);
      }
      if (decision.gone) options.onRestored?.(receipt);
      else options.onFinishedInterrupted?.(receipt);
      const completed = await markReceiptCompleted(layout, receipt, { fault: options.fault });
      noteForStop(completedNote(completed.path, completed.resume_command));
      return completed;
    }
    case 'repair':
      throw new GobstopperError('repair_required', decision.message, { details: { operation: receipt.operation, path: receipt.path } });
  }
}
