/**
 * Usage from a rollout's tail, with the same rules as the full parse. Lines are read newest first
 * and only until every usage fact is known, usually one report and one turn context. A line's
 * opening (where the client writes the envelope and payload types) says whether it can carry
 * usage; only those lines are decoded and parsed. The estimate used when nothing is reported
 * needs one more pass over line openings.
 */
import { estimateTokens, type UsageSample } from '../../../sdk/index.js';
import { rawMemberSpan } from '../../../sdk/raw-json.js';
import { OPENING_BYTES, forEachLine, lineOpening, type FileEnds } from './ends.js';
import { DEFAULT_OUTPUT_TOKEN_LIMIT, keptOutputBytes, sentAfterTruncation } from './output-truncation.js';
import { RecordType, isObject, isReadableCompaction, isSummaryCompaction } from './records.js';
import { UsageTracker, usageFacts } from './usage.js';
import { CHARS_PER_TOKEN } from '../../../sdk/tokens.js';

export interface TailUsage {
  usage: UsageSample;
  /** Tokens of the live records seen, extrapolated over unread bytes; null when usage is reported. */
  estimatedContextTokens: number | null;
}

const RESPONSE_ITEM = /"type"\s*:\s*"response_item"/;
const COMPACTED = /"type"\s*:\s*"compacted"/;

function parseLine(buf: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(buf.toString('utf8', start, end));
  } catch {
    return undefined;
  }
}

/** `"type":"` as bytes: the key the client writes before the envelope and payload type tags. */
const TYPE_KEY = [0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22];

/** Index just past the next `"type":"` in [from, limit), or -1. A plain loop: no binding call per line. */
function afterTypeKey(buf: Buffer, from: number, limit: number): number {
  const last = limit - TYPE_KEY.length;
  outer: for (let i = from; i <= last; i += 1) {
    for (let k = 0; k < TYPE_KEY.length; k += 1) if (buf[i + k] !== TYPE_KEY[k]) continue outer;
    return i + TYPE_KEY.length;
  }
  return -1;
}

function tagEnd(buf: Buffer, from: number, limit: number): number {
  for (let i = from; i < limit; i += 1) if (buf[i] === 0x22) return i;
  return -1;
}

/** What a line's opening says it is, as far as usage is concerned. */
type Opening = 'unknown' | 'token_count' | 'task_started' | 'thread_rolled_back' | 'event_other' | 'token_usage_record' | 'compacted' | 'turn_context' | 'other';

const bytesOf = (s: string) => [...Buffer.from(s, 'latin1')];
const EVENT_MSG = bytesOf(RecordType.eventMsg);
const ENVELOPE_TAGS: Array<[number[], Opening]> = [
  [bytesOf(RecordType.tokenUsageRecord), 'token_usage_record'],
  [bytesOf(RecordType.compacted), 'compacted'],
  [bytesOf(RecordType.turnContext), 'turn_context'],
];
const EVENT_TAGS: Array<[number[], Opening]> = [
  [bytesOf('token_count'), 'token_count'],
  [bytesOf('task_started'), 'task_started'],
  [bytesOf('thread_rolled_back'), 'thread_rolled_back'],
];

function tagIs(buf: Buffer, from: number, to: number, tag: number[]): boolean {
  if (to - from !== tag.length) return false;
  for (let k = 0; k < tag.length; k += 1) if (buf[from + k] !== tag[k]) return false;
  return true;
}

/**
 * Reads the envelope type tag (and for `event_msg` the payload type tag) from a line's opening,
 * where the client writes them, by comparing bytes: no string is made for lines that do not matter.
 */
function classifyOpening(buf: Buffer, start: number, end: number): Opening {
  const limit = Math.min(end, start + OPENING_BYTES);
  const at = afterTypeKey(buf, start, limit);
  const close = at === -1 ? -1 : tagEnd(buf, at, limit);
  if (close === -1) return 'unknown';
  if (tagIs(buf, at, close, EVENT_MSG)) {
    const subAt = afterTypeKey(buf, close, limit);
    const subClose = subAt === -1 ? -1 : tagEnd(buf, subAt, limit);
    if (subClose === -1) return 'unknown';
    for (const [tag, kind] of EVENT_TAGS) if (tagIs(buf, subAt, subClose, tag)) return kind;
    return 'event_other';
  }
  for (const [tag, kind] of ENVELOPE_TAGS) if (tagIs(buf, at, close, tag)) return kind;
  return 'other';
}

type Need = ReturnType<UsageTracker['missing']>;

/** Whether a record of this kind can supply a fact still missing. Unknown openings are parsed. */
function worthParsing(opening: Opening, need: Need): boolean {
  switch (opening) {
    case 'unknown':
      return true;
    case 'token_count':
    case 'token_usage_record':
      return need.context || need.lifetime || need.window;
    case 'task_started':
      return need.window;
    case 'compacted':
    case 'thread_rolled_back':
      return need.context;
    case 'turn_context':
      return need.model;
    default:
      return false;
  }
}

/**
 * Lines walked past the newest report while only the model is still unknown. The model is for
 * display; when the tail's recent turns do not name it, the head's first turn context does.
 */
const MODEL_LOOKBACK_LINES = 64;

/**
 * Newest first, parsing only lines whose opening names a record that can still teach something.
 * `headModel` is the model the head names, used when the tail's recent lines name none.
 */
export function usageFromTail(ends: FileEnds, headModel: string | null = null): TailUsage {
  const tracker = new UsageTracker();
  const tail = ends.tail;
  let end = tail.length;
  if (end > 0 && tail[end - 1] === 0x0a) end -= 1;
  let onlyModelMissingFor = 0;
  while (end > 0) {
    const nl = tail.lastIndexOf(0x0a, end - 1);
    const start = nl + 1;
    const need = tracker.missing();
    if (end > start && worthParsing(classifyOpening(tail, start, end), need)) {
      const value = parseLine(tail, start, end);
      if (isObject(value) && tracker.applyOlder(usageFacts(value.type, value.payload))) break;
    }
    // A whole file is walked to its start, so its usage equals the full parse's exactly.
    if (!ends.wholeFile && !need.context && !need.lifetime && !need.window && ++onlyModelMissingFor > MODEL_LOOKBACK_LINES) break;
    end = nl === -1 ? 0 : nl;
  }
  if (headModel !== null) tracker.applyOlder({ model: headModel });
  return { usage: tracker.sample(), estimatedContextTokens: tracker.contextReported ? null : estimateFromTail(ends) };
}

const TOOL_OUTPUT = /"type"\s*:\s*"(?:function_call_output|custom_tool_call_output)"/;
const DEFAULT_KEPT_BYTES = keptOutputBytes(DEFAULT_OUTPUT_TOKEN_LIMIT);

/** Bytes a tail line sends to the model (its payload), without parsing it; the line when it cannot be followed. */
function sentBytesAt(tail: Buffer, start: number, end: number, compacted: boolean): number {
  const payload = rawMemberSpan(tail, start, end, 'payload');
  const span = payload && compacted ? rawMemberSpan(tail, payload.start, payload.end, 'replacement_history') : payload;
  return span ? span.end - span.start : end - start;
}

/**
 * ceil(bytes / 4) of what the tail's live items send (their payloads, as the parse counts them),
 * scaled over the unread middle.
 */
function estimateFromTail(ends: FileEnds): number {
  const tail = ends.tail;
  let liveBytes = 0;
  let liveTokens = 0;
  let sawCompaction = false;
  forEachLine(tail, (start, end) => {
    if (end === start) return;
    const opening = lineOpening(tail, start, end);
    let responseItem = RESPONSE_ITEM.test(opening) && !COMPACTED.test(opening);
    if (COMPACTED.test(opening) || !opening.includes('"type"')) {
      const value = parseLine(tail, start, end);
      if (!isObject(value)) return;
      if (value.type === RecordType.compacted && isReadableCompaction(value.payload)) {
        sawCompaction = true;
        liveBytes = 0;
        liveTokens = estimateTokens(sentBytesAt(tail, start, end, true));
        return;
      }
      if (value.type === RecordType.compacted && isSummaryCompaction(value.payload)) {
        // The user messages the client carries over are mostly before the tail: the summary stands for the window.
        sawCompaction = true;
        liveBytes = 0;
        liveTokens = estimateTokens(Buffer.byteLength(value.payload.message, 'utf8'));
        return;
      }
      responseItem = value.type === RecordType.responseItem;
    }
    if (responseItem) {
      let sent = sentBytesAt(tail, start, end, false);
      // The client cuts a long tool output before sending it (output-truncation.ts); the tail
      // rarely holds the turn's policy, so the default budget stands in for it.
      if (TOOL_OUTPUT.test(opening)) sent = sentAfterTruncation(sent, sent, DEFAULT_KEPT_BYTES);
      liveBytes += sent;
      liveTokens += estimateTokens(sent);
    }
  });
  if (!sawCompaction && ends.unreadBytes > 0 && tail.length > 0) {
    // The unread middle is assumed to hold response items in the same proportion as the tail.
    liveTokens += Math.ceil((ends.unreadBytes * (liveBytes / tail.length)) / CHARS_PER_TOKEN);
  }
  return liveTokens;
}
