/**
 * Forks gobstopper published that nobody has resumed yet. A fork keeps its source's records, so the
 * client's last usage report in it was made before the compaction: until the client answers again,
 * the context a provider reads from the file is the source's. Commands that show a context say so,
 * with the plan's projection from the events log. A fork whose size is still the published one has
 * not been appended to (sessions only grow), so it has not been resumed.
 */
import type { OperationReceipt } from '../../schemas/generated/types.js';
import { vaultLayout } from '../vault/layout.js';
import { readEvents } from './events.js';
import { listReceipts } from './receipt.js';

export interface UnresumedFork {
  receipt: OperationReceipt;
  /** The plan's projected context after the compaction, when the events log recorded it. */
  projectedContext: number | null;
}

/** Published forks by path. Best effort: an unreadable vault or log means none are known. */
export async function unresumedForks(env: NodeJS.ProcessEnv): Promise<Map<string, UnresumedFork>> {
  const forks = new Map<string, UnresumedFork>();
  try {
    const receipts = (await listReceipts(vaultLayout(env))).filter((r) => r.completed && r.kind === 'compact');
    if (receipts.length === 0) return forks;
    const { events } = await readEvents({ env });
    const after = new Map(events.filter((e) => e.outcome === 'applied' && e.snapshot_after_sha256).map((e) => [e.snapshot_after_sha256!, e.context_tokens_after]));
    for (const receipt of receipts) forks.set(receipt.path, { receipt, projectedContext: after.get(receipt.output_manifest_sha256) ?? null });
  } catch {
    return new Map();
  }
  return forks;
}

/** The fork published at `path`, if the file still has the size it was published with. */
export function stillUnresumed(forks: Map<string, UnresumedFork>, path: string, bytes: number | null | undefined): UnresumedFork | null {
  const fork = forks.get(path);
  return fork && bytes === fork.receipt.bytes_after ? fork : null;
}

/**
 * Files gobstopper published (forks, restores) that are still exactly as published, by path. Their
 * modification time is the publication's, not a client's: until a client writes to one, it is not
 * live, whatever its age. Best effort: an unreadable vault means none are known.
 */
export async function untouchedPublications(env: NodeJS.ProcessEnv): Promise<Map<string, OperationReceipt>> {
  try {
    const receipts = await listReceipts(vaultLayout(env));
    return new Map(receipts.filter((r) => r.completed).map((r) => [r.path, r]));
  } catch {
    return new Map();
  }
}

/** Whether the file at `path`, of `bytes` (and `sha256` when known), is a publication nobody has touched since. */
export function isUntouchedPublication(published: Map<string, OperationReceipt>, path: string, bytes: number | null | undefined, sha256?: string): boolean {
  const receipt = published.get(path);
  if (!receipt || bytes !== receipt.bytes_after) return false;
  return sha256 === undefined || sha256 === receipt.output_sha256;
}

/** Live: updated within the live window by someone other than gobstopper's own publication. */
export async function isLiveSession(env: NodeJS.ProcessEnv, active: boolean, path: string, bytes: number | null | undefined, sha256?: string): Promise<boolean> {
  if (!active) return false;
  return !isUntouchedPublication(await untouchedPublications(env), path, bytes, sha256);
}
