/**
 * Looking inside archived JSON lines cheaply. Searches match decoded string values, but most lines
 * of a large snapshot cannot contain the query at all, and a byte-level check proves that without
 * building the line's objects. Those lines still need to be classified as JSON or not (invalid
 * lines are reported as unsearchable), which `isJsonLine` does without allocating.
 */
import { isUtf8 } from 'node:buffer';

const BACKSLASH_U = Buffer.from('\\u');
const BACKSLASH_SLASH = Buffer.from('\\/');

/**
 * Decides from raw bytes whether a line could hold `query` inside a decoded JSON string. A JSON
 * string spells each character either literally or as an escape; without `\u` escapes in the line
 * the only escapable characters are `"`, `\`, `/` and control characters, so a query free of the
 * characters that must be escaped appears in a decoded value only if its bytes appear in the line
 * (or, for `/`, the line uses `\/`).
 */
export class LiteralPrefilter {
  private readonly needle: Buffer;
  private readonly alwaysParse: boolean;
  private readonly hasSlash: boolean;

  constructor(query: string) {
    this.needle = Buffer.from(query, 'utf8');
    // eslint-disable-next-line no-control-regex
    this.alwaysParse = /["\\\u0000-\u001f]/.test(query);
    this.hasSlash = query.includes('/');
  }

  mayMatch(line: Buffer): boolean {
    if (this.alwaysParse) return true;
    if (line.includes(this.needle)) return true;
    if (line.includes(BACKSLASH_U)) return true;
    return this.hasSlash && line.includes(BACKSLASH_SLASH);
  }
}

/** Parses a record as JSON; undefined when it is not UTF-8 JSON. */
export function parseJsonLine(line: Buffer): unknown {
  if (!isUtf8(line)) return undefined;
  try {
    return JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Calls `visit` for every string value (not key) in a parsed JSON value, at any depth. */
export function forEachStringValue(root: unknown, visit: (value: string) => void): void {
  // Iterative: a deeply nested archived line must not overflow the call stack.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') visit(value);
    else if (Array.isArray(value)) for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    else if (value !== null && typeof value === 'object') {
      const values = Object.values(value as Record<string, unknown>);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
}

/** Non-overlapping occurrences of `needle` in `haystack` (needle non-empty). */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  let at = haystack.indexOf(needle);
  while (at !== -1) {
    count += 1;
    at = haystack.indexOf(needle, at + needle.length);
  }
  return count;
}

/** Top-level `type` of a record, `unknown` when absent, not a string, or the line is not JSON. */
export function recordType(parsed: unknown): string {
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const type = (parsed as Record<string, unknown>).type;
    if (typeof type === 'string' && type.length > 0) return type;
  }
  return 'unknown';
}

const WS = new Uint8Array(256);
WS[0x20] = WS[0x09] = WS[0x0a] = WS[0x0d] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

const IN_ARRAY = 1;
const IN_OBJECT = 2;

/** Bytes that end the fast path inside a string: the quote, the backslash, control characters. */
const STRING_SPECIAL = new Uint8Array(256);
STRING_SPECIAL[0x22] = STRING_SPECIAL[0x5c] = 1;
for (let c = 0; c < 0x20; c++) STRING_SPECIAL[c] = 1;

/** Index after a string starting at `i` (the opening quote), or -1 when it is not a JSON string. */
function skipString(b: Buffer, i: number): number {
  const n = b.length;
  i += 1;
  for (;;) {
    // Ordinary bytes four at a time: most of a transcript's bytes are long string values.
    while (i + 3 < n && (STRING_SPECIAL[b[i]!]! | STRING_SPECIAL[b[i + 1]!]! | STRING_SPECIAL[b[i + 2]!]! | STRING_SPECIAL[b[i + 3]!]!) === 0) i += 4;
    if (i >= n) return -1;
    const c = b[i]!;
    if (STRING_SPECIAL[c] === 0) {
      i += 1;
      continue;
    }
    if (c === 0x22) return i + 1;
    if (c !== 0x5c) return -1;
    const e = b[i + 1];
    if (e === undefined) return -1;
    if (SIMPLE_ESCAPE[e]) i += 2;
    else if (e === 0x75 && i + 5 < n && HEX[b[i + 2]!] && HEX[b[i + 3]!] && HEX[b[i + 4]!] && HEX[b[i + 5]!]) i += 6;
    else return -1;
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Index after a number starting at `i`, or -1. */
function skipNumber(b: Buffer, i: number): number {
  if (b[i] === 0x2d) i += 1;
  if (b[i] === 0x30) i += 1;
  else if (isDigit(b[i])) while (isDigit(b[i])) i += 1;
  else return -1;
  if (b[i] === 0x2e) {
    i += 1;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i += 1;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i += 1;
    if (b[i] === 0x2b || b[i] === 0x2d) i += 1;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i += 1;
  }
  return i;
}

function skipLiteral(b: Buffer, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/**
 * True exactly when the line is UTF-8 and `JSON.parse` would accept it (RFC 8259 grammar; any
 * value at the top level; surrounding whitespace allowed). Allocation-free, so classifying a large
 * snapshot costs a byte scan rather than building every object.
 */
export function isJsonLine(b: Buffer): boolean {
  if (!isUtf8(b)) return false;
  const n = b.length;
  const stack: number[] = [];
  let i = 0;
  // expectValue: a value must come next; otherwise a separator or a closing bracket.
  let expectValue = true;
  for (;;) {
    while (i < n && WS[b[i]!]) i += 1;
    if (expectValue) {
      if (i >= n) return false;
      const c = b[i]!;
      if (c === 0x7b) {
        i += 1;
        while (i < n && WS[b[i]!]) i += 1;
        if (b[i] === 0x7d) {
          i += 1;
          expectValue = false;
          continue;
        }
        stack.push(IN_OBJECT);
        if (b[i] !== 0x22) return false;
        i = skipString(b, i);
        if (i < 0) return false;
        while (i < n && WS[b[i]!]) i += 1;
        if (b[i] !== 0x3a) return false;
        i += 1;
        continue;
      }
      if (c === 0x5b) {
        i += 1;
        while (i < n && WS[b[i]!]) i += 1;
        if (b[i] === 0x5d) {
          i += 1;
          expectValue = false;
          continue;
        }
        stack.push(IN_ARRAY);
        continue;
      }
      if (c === 0x22) i = skipString(b, i);
      else if (c === 0x74) i = skipLiteral(b, i, 'true');
      else if (c === 0x66) i = skipLiteral(b, i, 'false');
      else if (c === 0x6e) i = skipLiteral(b, i, 'null');
      else i = skipNumber(b, i);
      if (i < 0) return false;
      expectValue = false;
      continue;
    }
    if (stack.length === 0) return i >= n;
    if (i >= n) return false;
    const c = b[i]!;
    const top = stack[stack.length - 1];
    if (c === 0x2c) {
      i += 1;
      if (top === IN_OBJECT) {
        while (i < n && WS[b[i]!]) i += 1;
        if (b[i] !== 0x22) return false;
        i = skipString(b, i);
        if (i < 0) return false;
        while (i < n && WS[b[i]!]) i += 1;
        if (b[i] !== 0x3a) return false;
        i += 1;
      }
      expectValue = true;
    } else if ((c === 0x5d && top === IN_ARRAY) || (c === 0x7d && top === IN_OBJECT)) {
      stack.pop();
      i += 1;
    } else return false;
  }
}
