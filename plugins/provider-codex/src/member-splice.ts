/**
 * Writing back a record the render changed (an elided output, a fork's session id) with only the
 * changed members encoded again: every other byte stays as the client wrote it. Encoding the whole
 * record would round numbers past 2^53 to the nearest double, rewrite escapes (`\/`, `\u00e9`) and
 * overflow the stack on deeply nested values the client wrote and reads back without trouble.
 *
 * The changed members are found in the line's bytes by their path; the new line is then parsed
 * and each path must read back the new value. A path the byte walk cannot follow the way JSON.parse
 * read it (a key written with escapes, a repeated key) fails that check, and the whole record is
 * encoded instead, as it always was: the client then reads exactly the record the render meant.
 */
import { forEachRawElement, rawMemberSpan, skipRawSpace, type ByteSpan } from '../../../sdk/raw-json.js';
import type { Json, JsonObject } from './records.js';

export type MemberPath = readonly (string | number)[];

/** One member the render changed, and its new value. */
export interface MemberChange {
  path: MemberPath;
  value: Json;
}

/** The span of the value at `path` in the line, or null when the byte walk cannot follow it. */
function spanAt(line: Buffer, end: number, path: MemberPath): ByteSpan | null {
  let span: ByteSpan | null = { start: skipRawSpace(line, 0, end), end };
  for (const step of path) {
    if (span === null) return null;
    const within: ByteSpan = span;
    if (typeof step === 'string') {
      span = rawMemberSpan(line, within.start, within.end, step, 'last');
      continue;
    }
    span = null;
    try {
      forEachRawElement(line, within.start, within.end, (element, index) => {
        if (index !== step) return true;
        span = element;
        return false;
      });
    } catch {
      return null;
    }
  }
  return span;
}

function valueAt(record: unknown, path: MemberPath): unknown {
  let at = record;
  for (const step of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[step];
  }
  return at;
}

/**
 * The line with each change's value written over the member's bytes, or null when a member cannot
 * be found or the result does not read back as the changes say.
 */
function spliced(line: Buffer, changes: readonly MemberChange[]): Buffer | null {
  const located: { span: ByteSpan; text: Buffer }[] = [];
  for (const change of changes) {
    const span = spanAt(line, line.length, change.path);
    if (span === null) return null;
    located.push({ span, text: Buffer.from(JSON.stringify(change.value), 'utf8') });
  }
  located.sort((a, b) => a.span.start - b.span.start);
  const parts: Buffer[] = [];
  let at = 0;
  for (const { span, text } of located) {
    if (span.start < at) return null; // overlapping paths: not a change this render makes
    parts.push(line.subarray(at, span.start), text);
    at = span.end;
  }
  parts.push(line.subarray(at));
  const out = Buffer.concat(parts);
  let reread: unknown;
  try {
    reread = JSON.parse(out.toString('utf8'));
  } catch {
    return null;
  }
  for (const change of changes) {
    if (JSON.stringify(valueAt(reread, change.path)) !== JSON.stringify(change.value)) return null;
  }
  return out;
}

/**
 * The bytes of `record` (parsed from `line`, then changed as `changes` list) to write in place of
 * `line`. `cr`: the line ends in a carriage return, which a whole re-encoding must keep.
 */
export function rewrittenLine(line: Buffer, record: JsonObject, changes: readonly MemberChange[], cr: boolean): Buffer {
  if (changes.length > 0) {
    const out = spliced(line, changes);
    if (out !== null) return out;
  }
  return Buffer.from(JSON.stringify(record) + (cr ? '\r' : ''), 'utf8');
}
