/** The scorer's tokenizer: word-ish runs that keep paths (`/`), extensions (`.`) and identifiers (`_`) whole. */

export const MAX_TOKEN_CHARS = 128;
const SEPARATORS = /[^\p{Alphabetic}\p{N}/._]+/u;

/** Distinct lowercased tokens of `text`; empty tokens and tokens over 128 characters are dropped. */
export function tokenSet(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.split(SEPARATORS)) {
    if (raw === '') continue;
    // Length in characters, not UTF-16 units, so a long emoji run is measured like the original did.
    if (raw.length > MAX_TOKEN_CHARS && [...raw].length > MAX_TOKEN_CHARS) continue;
    out.add(raw.toLowerCase());
  }
  return out;
}
