/**
 * How many bytes of a rollout record reach the model: a `response_item`'s payload is one item of
 * the Responses API `input` array, and a `compacted` record's replacement history is the items it
 * stands for. The envelope (timestamp, ordinal, type) is never sent. Codex 0.171.0 sends the
 * payload as written (verified against every real rollout, docs/rehearsal.md) except for the
 * bookkeeping it attaches to messages, which is the client's, not the conversation's.
 *
 * Measured on the raw line: the bytes as written are the bytes re-sent, and nothing is serialized
 * again, so the parse stays one JSON.parse per line.
 */
import { rawMemberSpan, type ByteSpan } from '../../../sdk/raw-json.js';
import type { JsonObject } from './records.js';

/** Fields the client keeps on an item for itself; they ride along in the request but are not context. */
export const CLIENT_ITEM_FIELDS = ['internal_chat_message_metadata_passthrough'] as const;

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** Bytes of an item's client bookkeeping: `"key":value` and the comma before it. */
function bookkeepingBytes(item: JsonObject): number {
  let bytes = 0;
  for (const field of CLIENT_ITEM_FIELDS) if (Object.hasOwn(item, field)) bytes += field.length + 3 + jsonBytes(item[field]) + 1;
  return bytes;
}

/** The envelope's payload: the last member of the record, as the client writes it. */
function payloadSpan(line: Uint8Array): ByteSpan | null {
  return rawMemberSpan(line, 0, line.length, 'payload', 'first');
}

/** A response item: its payload, less the client's bookkeeping. The whole line if the payload cannot be located. */
export function payloadSentBytes(line: Uint8Array, payload: JsonObject): number {
  const span = payloadSpan(line);
  if (span === null) return line.length;
  return span.end - span.start - bookkeepingBytes(payload);
}

/** A compaction: the replacement history it puts back into context, less the bookkeeping on its items. */
export function historySentBytes(line: Uint8Array, history: readonly JsonObject[]): number {
  const span = payloadSpan(line);
  const items = span && rawMemberSpan(line, span.start, span.end, 'replacement_history', 'first');
  if (!items) return line.length;
  let bookkeeping = 0;
  for (const entry of history) bookkeeping += bookkeepingBytes(entry);
  return items.end - items.start - bookkeeping;
}
