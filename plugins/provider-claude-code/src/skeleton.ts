/**
 * A record's skeleton, read from its raw line without JSON.parse: the envelope fields the uuid tree
 * and the session's identity depend on, and of `message` only its id, role and each content block's
 * type and tool ids. Text, tool input and output, usage and the `toolUseResult` UI copy are stepped
 * over, never decoded. Render reads every line it does not edit this way: the live branch needs the
 * tree of the whole file, not its content.
 *
 * The skeleton answers the same questions as the parsed record (records.ts, record-reader.ts) for
 * every line a client writes. What it does not check is what only JSON.parse would notice inside a
 * skipped value (a malformed number or escape); such a line is a record here and unreadable to
 * parse. No client writes one, and the candidate is verified in full afterwards. A key spelled with
 * escapes (`"typ\u0065"`) is the key it decodes to, as for JSON.parse, so that a line parse reads
 * as a record gives the same record here.
 *
 * Written as plain loops over bytes: this runs for every line of a 100,000-record file, and a walk
 * that allocates a closure or decodes a string per member costs more than JSON.parse itself.
 */
import { RawJsonError, skipRawSpace, skipRawString, skipRawValue, type ByteSpan } from '../../../sdk/raw-json.js';
import type { RawRecord } from './records.js';

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

export interface Skeleton {
  record: RawRecord;
  /** Every top-level `sessionId` value, duplicates included, in byte order. */
  sessionIdSpans: ByteSpan[];
}

const bytesOf = (s: string) => Buffer.from(s, 'latin1');

/**
 * Top-level keys the tree, the structural checks and the envelope read, by slot: first the ones
 * whose values repeat across a session (remembered from the line before), then the ones unique to
 * each record, then `message`, then the ones whose presence alone tells another provider's record
 * from Claude's (records.ts).
 */
const TOP_KEYS: ReadonlyArray<readonly [Buffer, string]> = [
  'type',
  'sessionId',
  'session_id',
  'isSidechain',
  'subtype',
  'cwd',
  'version',
  'uuid',
  'parentUuid',
  'leafUuid',
  'message',
  'payload',
  'ordinal',
  'main_chain_id',
  'node_id',
].map((k) => [bytesOf(k), k] as const);
const SLOT_TYPE = 0;
const SLOT_SESSION_ID = 1;
const SLOT_SIDECHAIN = 3;
const FIRST_UNIQUE_SLOT = 7;
const SLOT_MESSAGE = 10;
const FIRST_PRESENCE_SLOT = 11;
/** Slots past the top-level ones, for values inside `message`. */
const SLOT_MESSAGE_ID = TOP_KEYS.length;
const SLOT_ROLE = TOP_KEYS.length + 1;

/** Slots by key length: a key is compared only with the few known keys of its length. */
const TOP_SLOTS_BY_LENGTH: number[][] = [];
TOP_KEYS.forEach(([bytes], slot) => (TOP_SLOTS_BY_LENGTH[bytes.length] ??= []).push(slot));

const TOP_SLOT_OF = new Map(TOP_KEYS.map(([, name], slot) => [name, slot]));

function topKeySlot(b: Buffer, start: number, end: number): number {
  const candidates = TOP_SLOTS_BY_LENGTH[end - start];
  if (candidates !== undefined) for (const slot of candidates) if (sameBytes(b, start, end, TOP_KEYS[slot]![0])) return slot;
  return hasEscape(b, start, end) ? (TOP_SLOT_OF.get(escapedKey(b, start, end)) ?? -1) : -1;
}

function hasEscape(b: Uint8Array, start: number, end: number): boolean {
  for (let k = start; k < end; k += 1) if (b[k] === BACKSLASH) return true;
  return false;
}

/** What the key between `start` and `end` (inside its quotes), written with escapes, decodes to. */
function escapedKey(b: Buffer, start: number, end: number): string {
  return JSON.parse(b.toString('utf8', start - 1, end + 1)) as string;
}

/** The known key a member's key is, plain or written with escapes; null for any other key. */
function memberKey(b: Buffer, start: number, end: number, keys: ReadonlyArray<readonly [Buffer, string]>): string | null {
  const plain = keyOf(b, start, end, keys);
  if (plain !== null || !hasEscape(b, start, end)) return plain;
  const name = escapedKey(b, start, end);
  return keys.some(([, key]) => key === name) ? name : null;
}

const MESSAGE_KEYS: ReadonlyArray<readonly [Buffer, string]> = ['id', 'role', 'content'].map((k) => [bytesOf(k), k] as const);
const BLOCK_KEYS: ReadonlyArray<readonly [Buffer, string]> = ['type', 'id', 'tool_use_id'].map((k) => [bytesOf(k), k] as const);

function sameBytes(b: Uint8Array, start: number, end: number, known: Uint8Array): boolean {
  if (end - start !== known.length) return false;
  for (let k = 0; k < known.length; k += 1) if (b[start + k] !== known[k]) return false;
  return true;
}

function keyOf(b: Uint8Array, start: number, end: number, keys: ReadonlyArray<readonly [Buffer, string]>): string | null {
  for (const [bytes, name] of keys) if (sameBytes(b, start, end, bytes)) return name;
  return null;
}

/**
 * A string without escapes or control characters is its bytes; anything else is JSON.parse's to
 * read (which refuses a raw control character, as it does when parse reads the line).
 */
function decode(b: Buffer, start: number, end: number): unknown {
  if (end - start >= 2 && b[start] === QUOTE) {
    let plain = true;
    for (let k = start + 1; k < end - 1 && plain; k += 1) plain = b[k] !== BACKSLASH && b[k]! >= 0x20;
    if (plain) return b.toString('utf8', start + 1, end - 1);
  }
  return JSON.parse(b.toString('utf8', start, end));
}

/** Record types, roles and literals nearly every line carries, matched by bytes. */
const CONSTANTS: ReadonlyArray<readonly [Buffer, unknown]> = [
  ...['user', 'assistant', 'progress', 'system', 'attachment'].map((v) => [Buffer.from(JSON.stringify(v)), v] as const),
  [Buffer.from('false'), false],
  [Buffer.from('true'), true],
  [Buffer.from('null'), null],
];

/** Block types every assistant and tool-result record carries, matched by bytes. */
const BLOCK_TYPES: ReadonlyArray<readonly [Buffer, string]> = ['text', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'image'].map(
  (t) => [Buffer.from(JSON.stringify(t)), t] as const,
);

/** The position after `:` and its whitespace, for the member whose key ends just before `i`. */
function valueStart(b: Uint8Array, i: number, end: number): number {
  const colon = skipRawSpace(b, i, end);
  if (b[colon] !== COLON) throw new RawJsonError('expected a colon');
  return skipRawSpace(b, colon + 1, end);
}

/**
 * After a member or element whose value ends at `i`: the start of the next one, or -(position of
 * `close` + 1) when the container ends there.
 */
function next(b: Uint8Array, i: number, end: number, close: number): number {
  const j = skipRawSpace(b, i, end);
  if (b[j] === close) return -(j + 1);
  if (b[j] !== COMMA) throw new RawJsonError('expected a comma');
  return skipRawSpace(b, j + 1, end);
}

/** Reads skeletons line after line, remembering the values a session repeats. */
export class SkeletonReader {
  private readonly lastBytes: Array<Uint8Array | undefined> = [];
  private readonly lastValue: unknown[] = [];
  /** End offset of the value the last member walk stopped at. */
  private end = 0;

  /** The value at [start, end), the one remembered in `slot` when the bytes are the same. */
  private repeated(slot: number, b: Buffer, start: number, end: number): unknown {
    if (slot === SLOT_TYPE || slot === SLOT_SIDECHAIN || slot === SLOT_ROLE) for (const [known, v] of CONSTANTS) if (sameBytes(b, start, end, known)) return v;
    const last = this.lastBytes[slot];
    if (last !== undefined && sameBytes(b, start, end, last)) return this.lastValue[slot];
    const v = decode(b, start, end);
    if (end - start <= 256) {
      // A copy: the line's buffer belongs to the reader.
      this.lastBytes[slot] = Uint8Array.prototype.slice.call(b, start, end);
      this.lastValue[slot] = v;
    }
    return v;
  }

  /** The block starting at `i` (its end in this.end): type and tool ids, or null for a non-object. */
  private block(b: Buffer, i: number, end: number): unknown {
    if (b[i] !== OPEN_BRACE) {
      this.end = skipRawValue(b, i, end);
      return null;
    }
    const block: RawRecord = {};
    let j = skipRawSpace(b, i + 1, end);
    if (b[j] === CLOSE_BRACE) {
      this.end = j + 1;
      return block;
    }
    for (;;) {
      if (b[j] !== QUOTE) throw new RawJsonError('expected a key');
      const keyEnd = skipRawString(b, j, end);
      const key = memberKey(b, j + 1, keyEnd - 1, BLOCK_KEYS);
      const vs = valueStart(b, keyEnd, end);
      const ve = skipRawValue(b, vs, end);
      if (key === 'type') block.type = keyOf(b, vs, ve, BLOCK_TYPES) ?? decode(b, vs, ve);
      else if (key !== null) block[key] = decode(b, vs, ve);
      j = next(b, ve, end, CLOSE_BRACE);
      if (j < 0) break;
    }
    this.end = -j;
    return block;
  }

  private content(b: Buffer, i: number, end: number): unknown {
    const first = b[i];
    // A string's text is not needed, only that it is one.
    if (first === QUOTE) {
      this.end = skipRawString(b, i, end);
      return '';
    }
    if (first !== OPEN_BRACKET) {
      this.end = skipRawValue(b, i, end);
      return decode(b, i, this.end);
    }
    const blocks: unknown[] = [];
    let j = skipRawSpace(b, i + 1, end);
    if (b[j] === CLOSE_BRACKET) {
      this.end = j + 1;
      return blocks;
    }
    for (;;) {
      blocks.push(this.block(b, j, end));
      j = next(b, this.end, end, CLOSE_BRACKET);
      if (j < 0) break;
    }
    this.end = -j;
    return blocks;
  }

  private message(b: Buffer, i: number, end: number): unknown {
    if (b[i] !== OPEN_BRACE) {
      this.end = skipRawValue(b, i, end);
      return decode(b, i, this.end);
    }
    const message: RawRecord = {};
    let j = skipRawSpace(b, i + 1, end);
    if (b[j] === CLOSE_BRACE) {
      this.end = j + 1;
      return message;
    }
    {
      for (;;) {
        if (b[j] !== QUOTE) throw new RawJsonError('expected a key');
        const keyEnd = skipRawString(b, j, end);
        const key = memberKey(b, j + 1, keyEnd - 1, MESSAGE_KEYS);
        const vs = valueStart(b, keyEnd, end);
        let ve: number;
        if (key === 'content') {
          message.content = this.content(b, vs, end);
          ve = this.end;
        } else {
          ve = skipRawValue(b, vs, end);
          if (key === 'id') message.id = this.repeated(SLOT_MESSAGE_ID, b, vs, ve);
          else if (key === 'role') message.role = this.repeated(SLOT_ROLE, b, vs, ve);
        }
        j = next(b, ve, end, CLOSE_BRACE);
        if (j < 0) break;
      }
    }
    this.end = -j;
    return message;
  }

  /**
   * The skeleton of the JSON object on `line`, or null when the bytes are not an object this walk
   * can follow (the caller decides between "not JSON" and "not an object").
   */
  read(line: Buffer): Skeleton | null {
    const b = line;
    const end = line.length;
    const record: RawRecord = {};
    const sessionIdSpans: ByteSpan[] = [];
    try {
      const start = skipRawSpace(b, 0, end);
      if (b[start] !== OPEN_BRACE) return null;
      let j = skipRawSpace(b, start + 1, end);
      if (b[j] === CLOSE_BRACE) j = -(j + 1);
      else {
        for (;;) {
          if (b[j] !== QUOTE) throw new RawJsonError('expected a key');
          const keyEnd = skipRawString(b, j, end);
          const slot = topKeySlot(b, j + 1, keyEnd - 1);
          const vs = valueStart(b, keyEnd, end);
          let ve: number;
          if (slot === SLOT_MESSAGE) {
            record.message = this.message(b, vs, end);
            ve = this.end;
          } else {
            ve = skipRawValue(b, vs, end);
            if (slot >= 0) {
              const key = TOP_KEYS[slot]![1];
              if (slot >= FIRST_PRESENCE_SLOT) record[key] = true;
              else if (slot < FIRST_UNIQUE_SLOT) record[key] = this.repeated(slot, b, vs, ve);
              else record[key] = decode(b, vs, ve);
              if (slot === SLOT_SESSION_ID) sessionIdSpans.push({ start: vs, end: ve });
            }
          }
          j = next(b, ve, end, CLOSE_BRACE);
          if (j < 0) break;
        }
      }
      // `j` is -(closing brace + 1). Anything after the object but whitespace makes the line invalid JSON.
      if (skipRawSpace(b, -j, end) !== end) return null;
    } catch (error) {
      if (error instanceof RawJsonError || error instanceof SyntaxError) return null;
      throw error;
    }
    return { record, sessionIdSpans };
  }
}
