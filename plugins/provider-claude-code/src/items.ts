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

/** One shared empty list: most records carry no tool ids. */
const NO_IDS: string[] = [];

function idOrNull(id: string | null): string | null {
  return id !== null && id.length <= MAX_ID_CHARS ? id : null;
}

export function toItem(t: RecordTable, i: number, branch: LiveBranch): TranscriptItem {
  const live = t.has(i, FLAG_COUNTED) && isLive(branch, t, i);
  const kind = t.kind(i);
  const elidable = live && kind === 'tool_result' && t.elidableBytes[i]! > 0;
  const toolIds = t.toolUseIds[i] ?? t.toolResultIds[i];
  const type = t.type[i];
  const parent = t.parentUuid[i];
  return {
    line_index: i,
    kind,
    est_tokens: live ? estimateTokens(t.sentBytes[i]!) : 0,
    elidable_bytes: elidable ? t.elidableBytes[i]! : null,
    elidable_parts: elidable ? t.elidableParts[i]! : 0,
    label: t.label[i]!,
    summary: t.summary[i] ?? null,
    uuid: idOrNull(t.uuid[i] ?? null),
    parent_uuid: idOrNull(parent ?? null),
    tool_use_ids: !toolIds ? NO_IDS : toolIds.length <= MAX_TOOL_IDS ? toolIds : toolIds.slice(0, MAX_TOOL_IDS),
    payload_sha256: elidable ? t.payloadSha256[i] ?? null : null,
    record_type: type != null && type.length <= MAX_RECORD_TYPE_CHARS ? type : null,
  };
}

export function toItems(t: RecordTable, branch: LiveBranch): TranscriptItem[] {
  const items = new Array<TranscriptItem>(t.length);
  for (let i = 0; i < t.length; i += 1) items[i] = toItem(t, i, branch);
  return items;
}
