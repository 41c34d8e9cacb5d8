/**
 * Normalisation: one TranscriptItem per physical record. Live records that reach the model cost
 * ceil(bytes/4) of what the client sends for them (sent-bytes.ts), at least 1; dead branches,
 * records behind a compaction, bookkeeping and unreadable lines cost 0 and are never elidable. Only
 * a live tool result's payload text is elidable.
 */
import type { TranscriptItem } from '../../../schemas/generated/types.js';
import { estimateTokens } from '../../../sdk/tokens.js';
import { isLive, type LiveBranch } from './branch.js';
import { FLAG_COUNTED, type RecordTable } from './record-table.js';

const MAX_TOOL_IDS = 64;
const MAX_ID_CHARS = 256;
const MAX_RECORD_TYPE_CHARS = 64;

function idOrNull(id: string | null): string | null {
  return id !== null && id.length <= MAX_ID_CHARS ? id : null;
}

/**
 * Members without a value are left out rather than written as null, 0 or []: the schema makes them
 * optional, and a 100,000-record transcript is encoded by this process and parsed by the host and
 * by every strategy and scorer that reads it (a fifth fewer bytes on the bench session).
 */
export function toItem(t: RecordTable, i: number, branch: LiveBranch): TranscriptItem {
  const live = t.has(i, FLAG_COUNTED) && isLive(branch, t, i);
  const kind = t.kind(i);
  const elidable = live && kind === 'tool_result' && t.elidableBytes[i]! > 0;
  const toolIds = t.toolUseIds[i] ?? t.toolResultIds[i];
  const type = t.type[i];
  const item: TranscriptItem = { line_index: i, kind, est_tokens: live ? estimateTokens(t.sentBytes[i]!) : 0, label: t.label[i]! };
  if (elidable) {
    item.elidable_bytes = t.elidableBytes[i]!;
    item.elidable_parts = t.elidableParts[i]!;
    const sha = t.payloadSha256[i];
    if (sha) item.payload_sha256 = sha;
  }
  const summary = t.summary[i];
  if (summary != null) item.summary = summary;
  const uuid = idOrNull(t.uuid[i] ?? null);
  if (uuid !== null) item.uuid = uuid;
  const parent = idOrNull(t.parentUuid[i] ?? null);
  if (parent !== null) item.parent_uuid = parent;
  if (toolIds && toolIds.length > 0) item.tool_use_ids = toolIds.length <= MAX_TOOL_IDS ? toolIds : toolIds.slice(0, MAX_TOOL_IDS);
  if (type != null && type.length <= MAX_RECORD_TYPE_CHARS) item.record_type = type;
  return item;
}

export function toItems(t: RecordTable, branch: LiveBranch): TranscriptItem[] {
  const items = new Array<TranscriptItem>(t.length);
  for (let i = 0; i < t.length; i += 1) items[i] = toItem(t, i, branch);
  return items;
}
