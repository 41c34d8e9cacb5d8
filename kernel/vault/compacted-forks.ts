/**
 * The forks compaction published from a session: the state card a compaction writes lands in its
 * fork, under the fork's own id, so a search by the compacted session's id finds none of them.
 */
import { readableReceipts } from '../publish/receipt.js';
import type { VaultLayout } from './layout.js';

/** Output session ids of completed compactions of sessions whose id starts with `prefix`, sorted. */
export async function compactedForksOf(layout: VaultLayout, prefix: string): Promise<string[]> {
  const lower = prefix.toLowerCase();
  const receipts = await readableReceipts(layout).catch(() => []);
  const forks = receipts.filter((r) => r.completed && r.kind === 'compact' && r.source_session_id.toLowerCase().startsWith(lower)).map((r) => r.output_session_id);
  return [...new Set(forks)].sort();
}
