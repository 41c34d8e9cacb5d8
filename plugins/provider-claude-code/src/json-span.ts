/**
 * Locates a value inside one record's JSON text without building it. A rewrite replaces exactly
 * those characters, so every other byte of the record (key order, spacing, escapes, number
 * spellings, duplicate keys) stays as the client wrote it.
 */

export interface Span {
  /** Index of the value's first character. */
  start: number;
  /** Index just past the value's last character. */
  end: number;
}

export type PathStep = string | number;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

class SpanError extends Error {}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i += 1;
  return i;
}

/** `s[i]` opens a string; returns the index after its closing quote. */
function skipString(s: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = s.indexOf('"', from);
    if (q === -1) throw new SpanError('unterminated string');
    let k = q - 1;
    let slashes = 0;
    while (k > i && s.charCodeAt(k) === BACKSLASH) {
      slashes += 1;
      k -= 1;
    }
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

const STRUCTURAL = /["{}[\]]/g;

/** Returns the index just past the value starting at `i`. */
function skipValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return skipString(s, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    let j = i;
    for (;;) {
      STRUCTURAL.lastIndex = j;
      const m = STRUCTURAL.exec(s);
      if (!m) throw new SpanError('unterminated container');
      const at = m.index;
      const d = s.charCodeAt(at);
      if (d === QUOTE) {
        j = skipString(s, at);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth += 1;
      else {
        depth -= 1;
        if (depth === 0) return at + 1;
      }
      j = at + 1;
    }
  }
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    j += 1;
  }
  if (j === i) throw new SpanError('missing value');
  return j;
}

interface Member {
  key: string;
  span: Span;
}

/** Every member of the object whose `{` is at `i`, in text order (duplicates included). */
function objectMembers(s: string, i: number): Member[] {
  if (s.charCodeAt(i) !== OPEN_BRACE) throw new SpanError('not an object');
  const out: Member[] = [];
  let j = skipSpace(s, i + 1);
  if (s.charCodeAt(j) === CLOSE_BRACE) return out;
  for (;;) {
    if (s.charCodeAt(j) !== QUOTE) throw new SpanError('expected a key');
    const keyEnd = skipString(s, j);
    const rawKey = s.slice(j + 1, keyEnd - 1);
    const key = rawKey.includes('\\') ? (JSON.parse(s.slice(j, keyEnd)) as string) : rawKey;
    j = skipSpace(s, keyEnd);
    if (s.charCodeAt(j) !== COLON) throw new SpanError('expected a colon');
    const start = skipSpace(s, j + 1);
    const end = skipValue(s, start);
    out.push({ key, span: { start, end } });
    j = skipSpace(s, end);
    const d = s.charCodeAt(j);
    if (d === CLOSE_BRACE) return out;
    if (d !== COMMA) throw new SpanError('expected a comma');
    j = skipSpace(s, j + 1);
  }
}

/** The span of element `index` of the array whose `[` is at `i`. */
function arrayElement(s: string, i: number, index: number): Span | null {
  if (s.charCodeAt(i) !== OPEN_BRACKET) throw new SpanError('not an array');
  let j = skipSpace(s, i + 1);
  if (s.charCodeAt(j) === CLOSE_BRACKET) return null;
  for (let n = 0; ; n += 1) {
    const end = skipValue(s, j);
    if (n === index) return { start: j, end };
    j = skipSpace(s, end);
    const d = s.charCodeAt(j);
    if (d === CLOSE_BRACKET) return null;
    if (d !== COMMA) throw new SpanError('expected a comma');
    j = skipSpace(s, j + 1);
  }
}

/**
 * The span of the value at `path` in the JSON text `s` (or, given `from`, in the value at that
 * span), or null when the path is absent or the text is not well formed. With duplicate keys the
 * last one wins, as it does for JSON.parse.
 */
export function findValueSpan(s: string, path: readonly PathStep[], from?: Span): Span | null {
  try {
    let at = from?.start ?? skipSpace(s, 0);
    let span: Span = from ?? { start: at, end: s.length };
    for (const step of path) {
      if (typeof step === 'number') {
        const el = arrayElement(s, at, step);
        if (!el) return null;
        span = el;
      } else {
        if (s.charCodeAt(at) !== OPEN_BRACE) return null;
        let found: Span | null = null;
        for (const m of objectMembers(s, at)) if (m.key === step) found = m.span;
        if (!found) return null;
        span = found;
      }
      at = span.start;
    }
    return span;
  } catch (error) {
    if (error instanceof SpanError || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** Every top-level member of the object text `s`, in order (duplicates included); null when it cannot be followed. */
export function topLevelMembers(s: string): Array<{ key: string; span: Span }> | null {
  try {
    const at = skipSpace(s, 0);
    if (s.charCodeAt(at) !== OPEN_BRACE) return null;
    return objectMembers(s, at);
  } catch (error) {
    if (error instanceof SpanError || error instanceof SyntaxError) return null;
    throw error;
  }
}

/** Spans of every top-level member named `key` (all of them when the key is duplicated). */
export function topLevelValueSpans(s: string, key: string): Span[] {
  try {
    const at = skipSpace(s, 0);
    if (s.charCodeAt(at) !== OPEN_BRACE) return [];
    return objectMembers(s, at)
      .filter((m) => m.key === key)
      .map((m) => m.span);
  } catch (error) {
    if (error instanceof SpanError || error instanceof SyntaxError) return [];
    throw error;
  }
}

/** The span of every element of the array whose `[` is at `i`. */
function arrayElements(s: string, i: number): Span[] {
  if (s.charCodeAt(i) !== OPEN_BRACKET) throw new SpanError('not an array');
  const out: Span[] = [];
  let j = skipSpace(s, i + 1);
  if (s.charCodeAt(j) === CLOSE_BRACKET) return out;
  for (;;) {
    const end = skipValue(s, j);
    out.push({ start: j, end });
    j = skipSpace(s, end);
    const d = s.charCodeAt(j);
    if (d === CLOSE_BRACKET) return out;
    if (d !== COMMA) throw new SpanError('expected a comma');
    j = skipSpace(s, j + 1);
  }
}

/**
 * Spans of every string value in the value at `span`, at any depth (member values and array
 * elements; keys are not values). Empty when the text cannot be followed.
 */
export function stringValueSpans(s: string, span: Span): Span[] {
  const out: Span[] = [];
  try {
    // An explicit stack: nesting depth is the record's to choose, not the call stack's.
    const pending: Span[] = [span];
    while (pending.length > 0) {
      const value = pending.pop()!;
      const c = s.charCodeAt(value.start);
      if (c === QUOTE) out.push(value);
      else if (c === OPEN_BRACE) for (const m of objectMembers(s, value.start)) pending.push(m.span);
      else if (c === OPEN_BRACKET) for (const e of arrayElements(s, value.start)) pending.push(e);
    }
  } catch (error) {
    if (error instanceof SpanError || error instanceof SyntaxError) return [];
    throw error;
  }
  return out.sort((a, b) => a.start - b.start);
}

export interface Replacement {
  span: Span;
  text: string;
}

/** Applies non-overlapping replacements to `s`. */
export function replaceSpans(s: string, replacements: readonly Replacement[]): string {
  const ordered = [...replacements].sort((a, b) => a.span.start - b.span.start);
  let out = '';
  let at = 0;
  for (const r of ordered) {
    if (r.span.start < at) throw new Error('overlapping replacements');
    out += s.slice(at, r.span.start) + r.text;
    at = r.span.end;
  }
  return out + s.slice(at);
}
