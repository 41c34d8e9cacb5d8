/**
 * Forks gobstopper published that nobody has resumed yet. A fork keeps its source's records, so the
 * client's last usage report in it was made before the compaction: until the client answers again,
 * the context a provider reads from the file is the source's. Commands that show a context say so,
 * with the plan's projection from the events log. A fork whose size is still the published one has
 * not been appended to (sessions only grow), so it has not been resumed.
 */
import type { OperationReceipt, UsageSample } from '../../schemas/generated/types.js';
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

/** What a parsed session is once gobstopper's own publications are told apart. */
export interface PublicationView {
  /** Updated within the live window by a client (a file gobstopper just wrote is not live). */
  active: boolean;
  /** The usage to count: a compaction nobody has resumed carries its source's last report, which no longer counts. */
  usage: UsageSample;
  /** The usage's context is the projection the fork's plan recorded, not a client's report. */
  projected: boolean;
}

/**
 * A compaction gobstopper published keeps its source's records, usage reports included: until a
 * client resumes it, its last report describes the context before the compaction. Every decision
 * then counts what its plan projected (the events log has it), as detect shows it: the report's
 * basis less what the plan reclaimed, which covers the system prompt and tools a record estimate
 * leaves out. Without a recorded projection the report is marked `rewritten`, and the fork's own
 * estimate counts.
 */
export async function viewOfPublication(env: NodeJS.ProcessEnv, recent: boolean, file: { path: string; bytes: number; sha256: string; usage: UsageSample }): Promise<PublicationView> {
  const published = await untouchedPublications(env);
  const untouched = isUntouchedPublication(published, file.path, file.bytes, file.sha256);
  const active = recent && !untouched;
  const stale = untouched && published.get(file.path)!.kind === 'compact' && file.usage.context_state === 'reported' && file.usage.context_reason == null;
  if (!stale) return { active, usage: file.usage, projected: false };
  const projected = (await unresumedForks(env)).get(file.path)?.projectedContext ?? null;
  if (projected === null) return { active, usage: { ...file.usage, context_reason: 'rewritten' }, projected: false };
  return { active, usage: { ...file.usage, context_tokens: projected, context_components: null }, projected: true };
}
