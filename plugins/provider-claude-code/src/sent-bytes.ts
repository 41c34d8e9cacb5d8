/**
 * How many bytes of a record reach the model: the message as a Messages API request carries it,
 * `{"role":…,"content":[…]}`, not the stored line. The stored line adds the envelope (uuids, cwd,
 * timestamps), usage, and for tool results the `toolUseResult` UI copy of the same output; none of
 * it is sent, and on real 2.1.x sessions it is half to three quarters of the bytes.
 *
 * What Claude Code 2.1.197 was seen to change on the way (kernel/rehearse/context, docs/rehearsal.md):
 * string content becomes one text block; whitespace-only text blocks are dropped; `caller` is
 * removed from tool_use blocks; a local-command `system` record becomes a user text block; an
 * attachment becomes a reminder built from it. Records of one response are merged into one message,
 * which saves their framing; a per-record estimate keeps it (a few bytes over, never under).
 *
 * The content is measured on the raw line (its bytes as written are the bytes the client re-sends),
 * so no record is serialized again: the parse stays one JSON.parse per line. A key the line repeats
 * (no client writes one) is measured from its first occurrence.
 */
import { rawMemberSpan, rawMemberStart } from '../../../sdk/raw-json.js';
import { isObject, type RawRecord } from './records.js';

/** `{"role":` + `,"content":` + `}` around a message. */
const MESSAGE_FRAME = 8 + 11 + 1;
/** `[{"type":"text","text":` + `}]`: a string content sent as one text block. */
const TEXT_BLOCK_FRAME = 23 + 2;
/** `,"caller":` in front of a tool_use block's caller value. */
const CALLER_KEY = 10;
/** `"user"`: local commands and attachments are sent on the user side. */
const USER_ROLE_BYTES = 6;

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

function isBlankText(block: Record<string, unknown>): boolean {
  return block.type === 'text' && typeof block.text === 'string' && block.text.trim() === '';
}

/**
 * Bytes the client does not send of a content array (blank text blocks, tool_use callers), or -1
 * when it sends none of the blocks.
 */
function droppedBytes(blocks: readonly unknown[]): number {
  let bytes = 0;
  let kept = 0;
  for (const b of blocks) {
    if (!isObject(b)) {
      kept += 1;
      continue;
    }
    if (isBlankText(b)) {
      // The block and the comma that separates it from a neighbour.
      bytes += jsonBytes(b) + 1;
      continue;
    }
    kept += 1;
    if (b.type === 'tool_use' && b.caller !== undefined) bytes += CALLER_KEY + jsonBytes(b.caller);
  }
  return kept === 0 ? -1 : bytes;
}

/** `"user"` and `"assistant"` are nearly every role: no need to serialize them each time. */
function roleBytes(role: string): number {
  return role === 'user' ? 6 : role === 'assistant' ? 11 : jsonBytes(role);
}

function messageBytes(r: RawRecord, line: Uint8Array): number {
  const message = r.message as RawRecord;
  const content = message.content;
  // The first of each, found without stepping over the rest of the message (usage) or the record
  // (the UI copy) after it.
  const messageStart = rawMemberStart(line, 0, line.length, 'message');
  const contentSpan = messageStart === -1 ? null : rawMemberSpan(line, messageStart, line.length, 'content', 'first');
  // The line parsed, so a missing span is a layout this walk does not follow: count the line.
  if (!contentSpan) return line.length;
  const raw = contentSpan.end - contentSpan.start;
  const role = typeof message.role === 'string' ? message.role : typeof r.type === 'string' ? r.type : 'user';
  const frame = MESSAGE_FRAME + roleBytes(role);
  if (typeof content === 'string') return content.trim() === '' ? 0 : frame + TEXT_BLOCK_FRAME + raw;
  const dropped = droppedBytes(content as unknown[]);
  return dropped === -1 ? 0 : frame + raw - dropped;
}

/** A record that is not a message but reaches the model as user text: its `content` string. */
function textRecordBytes(line: Uint8Array, key: string): number | null {
  const span = rawMemberSpan(line, 0, line.length, key, 'first');
  if (!span) return null;
  return MESSAGE_FRAME + USER_ROLE_BYTES + TEXT_BLOCK_FRAME + (span.end - span.start);
}

/**
 * Bytes of `r` as sent to the model, for a record that is counted as context. 0 when the client
 * drops everything in it. Records whose sent form is unknown count their whole line.
 */
export function sentBytes(r: RawRecord, line: Uint8Array): number {
  switch (r.type) {
    case 'user':
    case 'assistant':
      return messageBytes(r, line);
    case 'system':
      return (typeof r.content === 'string' ? textRecordBytes(line, 'content') : null) ?? line.length;
    case 'attachment':
      // Rendered by the client into a reminder; the attachment's own JSON is the closest measure.
      return (isObject(r.attachment) ? textRecordBytes(line, 'attachment') : null) ?? line.length;
    default:
      return line.length;
  }
}
