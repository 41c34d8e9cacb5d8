/**
 * A rollout line's envelope read from its bytes, without JSON.parse: whether it carries an ordinal
 * and which, and whether it is a `session_meta` record. Render needs no more than that from the
 * lines it copies (the next ordinal, the thread's own meta records), so it parses only the lines it
 * edits and the few meta records.
 */
import { RawJsonError, rawHasEscape, rawKeyIs, skipRawSpace, skipRawString, skipRawValue } from '../../../sdk/raw-json.js';

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const SESSION_META = Buffer.from('"session_meta"');

export interface RawEnvelope {
  hasOrdinal: boolean;
  /** The ordinal's value as JSON.parse reads it (undefined without one). */
  ordinal: unknown;
  sessionMeta: boolean;
}

function sameBytes(b: Uint8Array, start: number, end: number, known: Uint8Array): boolean {
  if (end - start !== known.length) return false;
  for (let k = 0; k < known.length; k += 1) if (b[start + k] !== known[k]) return false;
  return true;
}

/**
 * The envelope of the object on `line`, or null when the bytes are not an object this walk can
 * follow (the caller then parses the line to know). Every top-level member is walked, so a key
 * written twice reads as JSON.parse reads it: the last one wins.
 */
export function readRawEnvelope(line: Buffer): RawEnvelope | null {
  const end = line.length;
  const out: RawEnvelope = { hasOrdinal: false, ordinal: undefined, sessionMeta: false };
  try {
    let j = skipRawSpace(line, 0, end);
    if (line[j] !== OPEN_BRACE) return null;
    j = skipRawSpace(line, j + 1, end);
    if (line[j] === CLOSE_BRACE) return skipRawSpace(line, j + 1, end) === end ? out : null;
    for (;;) {
      if (line[j] !== QUOTE) return null;
      const afterKey = skipRawString(line, j, end);
      const ks = j + 1;
      const ke = afterKey - 1;
      j = skipRawSpace(line, afterKey, end);
      if (line[j] !== COLON) return null;
      const start = skipRawSpace(line, j + 1, end);
      const valueEnd = skipRawValue(line, start, end);
      // A key written with escapes may be `type` or `ordinal` under another spelling: parse it.
      if (rawHasEscape(line, ks, ke)) return null;
      if (rawKeyIs(line, ks, ke, 'ordinal')) {
        out.hasOrdinal = true;
        out.ordinal = JSON.parse(line.toString('utf8', start, valueEnd));
      } else if (rawKeyIs(line, ks, ke, 'type')) {
        // So may the type's value (`"session\\u005fmeta"`).
        if (rawHasEscape(line, start, valueEnd)) return null;
        out.sessionMeta = sameBytes(line, start, valueEnd, SESSION_META);
      }
      j = skipRawSpace(line, valueEnd, end);
      if (line[j] === CLOSE_BRACE) return skipRawSpace(line, j + 1, end) === end ? out : null;
      if (line[j] !== COMMA) return null;
      j = skipRawSpace(line, j + 1, end);
    }
  } catch (error) {
    if (error instanceof RawJsonError || error instanceof SyntaxError) return null;
    throw error;
  }
}
