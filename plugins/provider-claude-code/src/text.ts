/**
 * Bounded text for labels and summaries. Summaries feed state cards and scorers, so they are cut
 * at a UTF-8 boundary and kept to one line; labels are a closed character set so that no payload
 * text can travel through them.
 */
/** The schema's bound on a summary. */
export const SUMMARY_MAX_BYTES = 512;
/** First lines of prompts and replies: enough to recognise a turn, small enough for 100,000 items. */
export const TEXT_SUMMARY_BYTES = 240;
/** One tool argument (a path or a command) inside a tool summary. */
export const ARGUMENT_SUMMARY_BYTES = 160;
const LABEL_MAX_CHARS = 64;

const LABEL_UNSAFE = /[^A-Za-z0-9_.:-]+/g;

/**
 * A tool name or record type made safe for a label: a closed character set and a short length, so
 * a crafted name cannot carry payload text. Returns null when nothing usable is left.
 */
export function safeLabel(name: unknown): string | null {
  if (typeof name !== 'string') return null;
  const cleaned = name.replace(LABEL_UNSAFE, '_').slice(0, LABEL_MAX_CHARS);
  return /[A-Za-z0-9]/.test(cleaned) ? cleaned : null;
}
