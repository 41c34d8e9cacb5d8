/**
 * Whether the file `eval-study --against` names comes from the session it is scored against. A
 * smaller file of another session parses and scores just as well, and its numbers would read like a
 * compaction's; so the file must be the session itself (one of its archived states), share its
 * first record id, or be the output of a chain of publications (apply's forks, plain forks,
 * restores) whose receipts lead back to the session. Pure: the caller reads the receipts.
 */
import type { OperationReceipt, TranscriptItem } from '../../schemas/generated/types.js';

export interface LineageSide {
  /** The session id as the provider reads it from the file. */
  session_id: string;
  /** sha256 of the file's bytes. */
  sha256: string;
  /** The vault id the file was rebuilt from (`vault:<sha256>`), when it was. */
  vault_id?: string | null;
  items: readonly TranscriptItem[];
}

/** Receipts can chain (a fork of a fork of a compaction); the walk stops well before any real chain would. */
const MAX_HOPS = 64;

/** The first record id the provider reports; providers without record ids have none. */
function firstRecordId(items: readonly TranscriptItem[]): string | null {
  for (const item of items) if (typeof item.uuid === 'string' && item.uuid.length > 0) return item.uuid;
  return null;
}

const producedBy = (receipt: OperationReceipt, side: { session_id: string; sha256: string; vault_id?: string | null }) =>
  receipt.output_session_id === side.session_id || receipt.output_sha256 === side.sha256 || (!!side.vault_id && receipt.output_manifest_sha256 === side.vault_id);

/** How `after` is tied to `source`, or null when nothing ties it. */
export function againstLineage(source: LineageSide, after: LineageSide, receipts: readonly OperationReceipt[]): 'same_session' | 'shared_records' | 'receipt' | null {
  if (after.session_id === source.session_id || after.sha256 === source.sha256) return 'same_session';
  const first = firstRecordId(after.items);
  if (first !== null && first === firstRecordId(source.items)) return 'shared_records';
  const completed = receipts.filter((r) => r.completed);
  let frontier = completed.filter((r) => producedBy(r, after));
  const seen = new Set<string>();
  for (let hops = 0; frontier.length > 0 && hops < MAX_HOPS; hops += 1) {
    const next: OperationReceipt[] = [];
    for (const receipt of frontier) {
      if (seen.has(receipt.operation)) continue;
      seen.add(receipt.operation);
      if (receipt.source_session_id === source.session_id || receipt.source_sha256 === source.sha256) return 'receipt';
      next.push(...completed.filter((r) => producedBy(r, { session_id: receipt.source_session_id, sha256: receipt.source_sha256 })));
    }
    frontier = next;
  }
  return null;
}
