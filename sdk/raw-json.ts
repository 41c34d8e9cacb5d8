/**
 * Finding values inside one JSONL line's bytes without parsing it. A provider measures or rewrites
 * a few members of a record (the part a client sends to the model, a session id) while the rest of
 * the line is only stepped over: strings are skipped with a native byte search, so a line costs a
 * fraction of a JSON.parse and no object is built.
 *
 * The walk follows the structure (strings, nesting, member order); it does not validate what it
 * steps over (numbers, literals, separators inside skipped values). Callers use it on lines whose
 * validity is known or does not change the answer, and treat a RawJsonError as "not readable".
 */

export class RawJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RawJsonError';
  }
}

export interface ByteSpan {
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value's last byte. */
  end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

export function skipRawSpace(b: Uint8Array, i: number, end: number): number {
  while (i < end && isSpace(b[i])) i += 1;
  return i;
}

/** Strings shorter than this are scanned byte by byte; longer ones with a native search. */
const SHORT_STRING_BYTES = 64;

/** `b[i]` opens a string: the offset just past its closing quote. */
export function skipRawString(b: Uint8Array, i: number, end: number): number {
  // Most strings of a record (keys, ids, types) are short: a plain loop beats a native call each.
  let j = i + 1;
  const shortEnd = Math.min(end, j + SHORT_STRING_BYTES);
  while (j < shortEnd) {
    const c = b[j];
    if (c === QUOTE) return j + 1;
    j += c === BACKSLASH ? 2 : 1;
  }
  let from = j;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q === -1 || q >= end) throw new RawJsonError('unterminated string');
    let k = q - 1;
    let slashes = 0;
    while (k > i && b[k] === BACKSLASH) {
      slashes += 1;
      k -= 1;
    }
    if ((slashes & 1) === 0) return q + 1;
    from = q + 1;
  }
}

/** The offset just past the value that starts at `i` (no leading whitespace). */
export function skipRawValue(b: Uint8Array, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return skipRawString(b, i, end);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    // Iterative, so a deeply nested value cannot exhaust the stack.
    let depth = 0;
    let j = i;
    while (j < end) {
      const d = b[j];
      if (d === QUOTE) {
        j = skipRawString(b, j, end);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth += 1;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return j + 1;
      }
      j += 1;
    }
    throw new RawJsonError('unterminated container');
  }
  let j = i;
  while (j < end) {
    const d = b[j];
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    if (d === QUOTE || d === OPEN_BRACE || d === OPEN_BRACKET || d === COLON) throw new RawJsonError('unexpected character');
    j += 1;
  }
  if (j === i) throw new RawJsonError('missing value');
  return j;
}

/**
 * Calls `visit(keyStart, keyEnd, value)` for each member of the object whose `{` is at `i`, in
 * byte order (duplicate keys included); the key span excludes its quotes. `visit` returning false
 * stops the walk. Returns the offset just past the closing brace, or -1 when stopped early.
 */
export function forEachRawMember(b: Uint8Array, i: number, end: number, visit: (keyStart: number, keyEnd: number, value: ByteSpan) => boolean | void): number {
  if (b[i] !== OPEN_BRACE) throw new RawJsonError('not an object');
  let j = skipRawSpace(b, i + 1, end);
  if (b[j] === CLOSE_BRACE) return j + 1;
  for (;;) {
    if (b[j] !== QUOTE) throw new RawJsonError('expected a key');
    const keyStart = j + 1;
    const afterKey = skipRawString(b, j, end);
    j = skipRawSpace(b, afterKey, end);
    if (b[j] !== COLON) throw new RawJsonError('expected a colon');
    const start = skipRawSpace(b, j + 1, end);
    const valueEnd = skipRawValue(b, start, end);
    if (visit(keyStart, afterKey - 1, { start, end: valueEnd }) === false) return -1;
    j = skipRawSpace(b, valueEnd, end);
    const d = b[j];
    if (d === CLOSE_BRACE) return j + 1;
    if (d !== COMMA) throw new RawJsonError('expected a comma');
    j = skipRawSpace(b, j + 1, end);
  }
}

/**
 * Calls `visit(element)` for each element of the array whose `[` is at `i`; `visit` returning
 * false stops the walk. Returns the offset just past the closing bracket, or -1 when stopped early.
 */
export function forEachRawElement(b: Uint8Array, i: number, end: number, visit: (element: ByteSpan, index: number) => boolean | void): number {
  if (b[i] !== OPEN_BRACKET) throw new RawJsonError('not an array');
  let j = skipRawSpace(b, i + 1, end);
  if (b[j] === CLOSE_BRACKET) return j + 1;
  for (let n = 0; ; n += 1) {
    const valueEnd = skipRawValue(b, j, end);
    if (visit({ start: j, end: valueEnd }, n) === false) return -1;
    j = skipRawSpace(b, valueEnd, end);
    const d = b[j];
    if (d === CLOSE_BRACKET) return j + 1;
    if (d !== COMMA) throw new RawJsonError('expected a comma');
    j = skipRawSpace(b, j + 1, end);
  }
}

/** The key bytes as written, compared with a plain ASCII key (an escaped spelling never matches). */
export function rawKeyIs(b: Uint8Array, keyStart: number, keyEnd: number, key: string): boolean {
  if (keyEnd - keyStart !== key.length) return false;
  for (let k = 0; k < key.length; k += 1) if (b[keyStart + k] !== key.charCodeAt(k)) return false;
  return true;
}

/**
 * Whether the bytes [start, end) of a key or short string hold an escape, so they may decode to
 * another spelling. A plain loop: it runs for every member of the lines walked, and keys are short.
 */
export function rawHasEscape(b: Uint8Array, start: number, end: number): boolean {
  for (let k = start; k < end; k += 1) if (b[k] === BACKSLASH) return true;
  return false;
}

/**
 * The span of the value of member `key` of the object at `i`, or null when it is absent or the
 * bytes cannot be followed. With a repeated key, `last` (the default) is the one JSON.parse keeps;
 * `first` stops at the first, without walking the members after it (for an estimate, where a
 * repeated key, which no client writes, may be measured from either). A plain loop, no callback:
 * providers call this for most lines of a session.
 */
export function rawMemberSpan(b: Uint8Array, i: number, end: number, key: string, which: 'last' | 'first' = 'last'): ByteSpan | null {
  if (which === 'first') {
    const start = rawMemberStart(b, i, end, key);
    if (start === -1) return null;
    try {
      return { start, end: skipRawValue(b, start, end) };
    } catch (error) {
      if (error instanceof RawJsonError) return null;
      throw error;
    }
  }
  let found: ByteSpan | null = null;
  try {
    let j = skipRawSpace(b, i, end);
    if (b[j] !== OPEN_BRACE) return null;
    j = skipRawSpace(b, j + 1, end);
    if (b[j] === CLOSE_BRACE) return null;
    for (;;) {
      if (b[j] !== QUOTE) return null;
      const afterKey = skipRawString(b, j, end);
      const matches = rawKeyIs(b, j + 1, afterKey - 1, key);
      j = skipRawSpace(b, afterKey, end);
      if (b[j] !== COLON) return null;
      const start = skipRawSpace(b, j + 1, end);
      const valueEnd = skipRawValue(b, start, end);
      if (matches) found = { start, end: valueEnd };
      j = skipRawSpace(b, valueEnd, end);
      if (b[j] === CLOSE_BRACE) return found;
      if (b[j] !== COMMA) return null;
      j = skipRawSpace(b, j + 1, end);
    }
  } catch (error) {
    if (error instanceof RawJsonError) return null;
    throw error;
  }
}

/**
 * Where the value of the first member `key` of the object at `i` starts, or -1. Nothing after that
 * point is walked: a caller that needs a member inside the value (a message's content) goes on from
 * there without stepping over the rest of it.
 */
export function rawMemberStart(b: Uint8Array, i: number, end: number, key: string): number {
  try {
    let j = skipRawSpace(b, i, end);
    if (b[j] !== OPEN_BRACE) return -1;
    j = skipRawSpace(b, j + 1, end);
    if (b[j] === CLOSE_BRACE) return -1;
    for (;;) {
      if (b[j] !== QUOTE) return -1;
      const afterKey = skipRawString(b, j, end);
      const matches = rawKeyIs(b, j + 1, afterKey - 1, key);
      j = skipRawSpace(b, afterKey, end);
      if (b[j] !== COLON) return -1;
      const start = skipRawSpace(b, j + 1, end);
      if (matches) return start;
      // Most members before the one wanted are strings: skip them without the dispatch.
      j = skipRawSpace(b, b[start] === QUOTE ? skipRawString(b, start, end) : skipRawValue(b, start, end), end);
      if (b[j] !== COMMA) return -1;
      j = skipRawSpace(b, j + 1, end);
    }
  } catch (error) {
    if (error instanceof RawJsonError) return -1;
    throw error;
  }
}

/** Whether the key at [keyStart, keyEnd) (quotes excluded) decodes to `key`: `\u006b` is `k`. */
export function rawKeyDecodesTo(b: Uint8Array, keyStart: number, keyEnd: number, key: string): boolean {
  if (rawKeyIs(b, keyStart, keyEnd, key)) return true;
  // Only an escape or a byte outside ASCII can spell the key other than byte for byte.
  let plain = true;
  for (let k = keyStart; k < keyEnd && plain; k += 1) plain = b[k] !== BACKSLASH && b[k]! < 0x80;
  if (plain) return false;
  const quoted = Buffer.from(b.buffer, b.byteOffset + keyStart - 1, keyEnd - keyStart + 2).toString('utf8');
  return JSON.parse(quoted) === key;
}

export type RawPathStep = string | number;

/**
 * The span of the value at `path` inside the value at `from` (member names decoded; with a
 * repeated key the last wins, as in JSON.parse), or null when the path is absent or the bytes
 * cannot be followed.
 */
export function rawValueSpanAt(b: Uint8Array, path: readonly RawPathStep[], from: ByteSpan): ByteSpan | null {
  try {
    let span: ByteSpan | null = from;
    for (let k = 0; k < path.length && span !== null; k += 1) span = rawStep(b, span.start, from.end, path[k]!);
    return span;
  } catch (error) {
    if (error instanceof RawJsonError || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** One step of rawValueSpanAt: element `step` of the array, or member `step` of the object, at `at`. */
function rawStep(b: Uint8Array, at: number, end: number, step: RawPathStep): ByteSpan | null {
  let found: ByteSpan | null = null;
  if (typeof step === 'number') {
    if (b[at] !== OPEN_BRACKET) return null;
    forEachRawElement(b, at, end, (element, index) => {
      if (index !== step) return true;
      found = element;
      return false;
    });
  } else {
    if (b[at] !== OPEN_BRACE) return null;
    forEachRawMember(b, at, end, (keyStart, keyEnd, value) => {
      if (rawKeyDecodesTo(b, keyStart, keyEnd, step)) found = value;
    });
  }
  return found;
}

/**
 * Spans of every string value inside the value at `span`, at any depth (member values and array
 * elements; keys are not values), in byte order. Empty when the bytes cannot be followed. One pass
 * over the bytes, whatever the nesting: a string followed by a colon is a key, any other a value.
 */
export function rawStringValueSpans(b: Uint8Array, span: ByteSpan): ByteSpan[] {
  const out: ByteSpan[] = [];
  try {
    for (let j = span.start; j < span.end; ) {
      if (b[j] !== QUOTE) {
        j += 1;
        continue;
      }
      const after = skipRawString(b, j, span.end);
      if (b[skipRawSpace(b, after, span.end)] !== COLON) out.push({ start: j, end: after });
      j = after;
    }
  } catch (error) {
    if (error instanceof RawJsonError) return [];
    throw error;
  }
  return out;
}

/**
 * The pieces of `b` with each span replaced by its bytes, in order: nothing is copied. Spans must
 * not overlap.
 */
export function spliceRawSpans(b: Buffer, replacements: ReadonlyArray<{ span: ByteSpan; bytes: Buffer }>): Buffer[] {
  const ordered = [...replacements].sort((x, y) => x.span.start - y.span.start);
  const pieces: Buffer[] = [];
  let at = 0;
  for (const r of ordered) {
    if (r.span.start < at) throw new Error('overlapping replacements');
    pieces.push(b.subarray(at, r.span.start), r.bytes);
    at = r.span.end;
  }
  pieces.push(b.subarray(at));
  return pieces;
}
