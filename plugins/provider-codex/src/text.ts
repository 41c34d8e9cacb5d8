/** Small string helpers for labels and summaries: bounded, one line, never split inside a character. */

/** Summaries stay well under the schema's 512-byte bound so 100,000 items remain cheap to send. */
export const SUMMARY_MAX_BYTES = 256;
const LABEL_MAX_CHARS = 64;

/**
 * A copy that shares no memory with the string it was cut from. V8 represents a substring as a
 * view of its parent, so a short summary would otherwise keep a whole record's text alive for as
 * long as the transcript lives.
 */
export function detach(text: string): string {
  return text.length === 0 ? text : Buffer.from(text, 'utf8').toString('utf8');
}

/** Cleaned names by raw name; '' when nothing usable is left. Labels repeat, the regex need not. */
const labelCache = new Map<string, string>();
const LABEL_CACHE_MAX = 4096;

/** A label made only of identifier-like characters: tool and record type names, never payload text. */
export function sanitizeLabel(name: string, fallback: string): string {
  let cleaned = labelCache.get(name);
  if (cleaned === undefined) {
    cleaned = detach(name.replace(/[^A-Za-z0-9_.:/-]/g, '_').slice(0, LABEL_MAX_CHARS));
    if (!/[A-Za-z0-9]/.test(cleaned)) cleaned = '';
    if (labelCache.size < LABEL_CACHE_MAX) labelCache.set(name, cleaned);
  }
  return cleaned || fallback;
}

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
