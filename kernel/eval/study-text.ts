/**
 * The lexical tier of the retention study: a check counts as lexically kept when one live slot
 * holds at least 75% of its distinct content words. It survives paraphrase where verbatim text does
 * not; it measures word coverage, not meaning.
 */

export const LEXICAL_COVER = 0.75;
export const MIN_CONTENT_TOKEN_CHARS = 4;

/** Words too common to say anything about the content of a span. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  'this that with from have been were they will would there their about which when then than into your them what does just also some here should could must only over such make made'.split(' '),
);

/** Lowercase alphanumeric runs of at least four characters, stopwords removed, each once. */
export function contentTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length < MIN_CONTENT_TOKEN_CHARS) continue;
    const token = raw.toLowerCase();
    if ([...token].length >= MIN_CONTENT_TOKEN_CHARS && !STOPWORDS.has(token)) out.add(token);
  }
  return out;
}

/**
 * `text` as its UTF-8 bytes decode: a lone surrogate (a cut emoji in a tool output) has no UTF-8
 * form, so a span's bytes and hash, and the check text decoded from them, hold U+FFFD in its place,
 * and a slot must too to contain it.
 */
export function asUtf8Decodes(text: string): string {
  // Node 20 has both (ES2024); the project's lib is ES2023.
  const s = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  return s.isWellFormed() ? text : s.toWellFormed();
}

/** Share of `check`'s tokens found in `slot`; an empty check covers nothing. */
export function lexicalCoverage(check: ReadonlySet<string>, slot: ReadonlySet<string>): number {
  if (check.size === 0) return 0;
  let hit = 0;
  for (const t of check) if (slot.has(t)) hit++;
  return hit / check.size;
}
