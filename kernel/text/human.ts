/**
 * Plain text for people: counts, byte sizes, times, and text from transcripts and plugins made
 * safe to print on a terminal.
 */

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** A count with thousands separators; `unknown` when there is none. */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? 'unknown' : n.toLocaleString('en-US');
}

/** Unix seconds as `YYYY-MM-DD HH:MM` UTC. */
export function formatTs(ts: number): string {
  return new Date(ts * 1000).toISOString().slice(0, 16).replace('T', ' ');
}

export function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Beyond the ASCII controls: DEL and the C1 controls (U+009B opens a control sequence on many
 * terminals), the bidirectional controls that would reorder what the terminal shows, and the line
 * and paragraph separators. A character class body, shared by every escaping of output.
 */
export const WIDE_CONTROLS = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069';
// Tab is kept on one line; a multi-line text keeps its newlines too.
const ONE_LINE_UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000a-\\u001f${WIDE_CONTROLS}]`, 'g');
const MULTI_LINE_UNSAFE = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${WIDE_CONTROLS}]`, 'g');
/** One UTF-16 unit as a \uXXXX escape, which JSON and JavaScript read back as the same character. */
export const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Archived text is untrusted: terminal control sequences in it must not reach the terminal.
 * Control characters (other than tab, newline included) and bidirectional controls are shown as
 * \u escapes, so the text stays on one line.
 */
export function printableText(text: string): string {
  return text.replace(ONE_LINE_UNSAFE, unicodeEscape);
}

/**
 * The same for whole lines of human output, which carry text from transcripts and plugins (project
 * directories, record types, messages) and may span several lines: newlines and tabs are kept.
 */
export function terminalSafe(text: string): string {
  return text.replace(MULTI_LINE_UNSAFE, unicodeEscape);
}

/** `key: value` lines with the values aligned. */
export function formatPairs(pairs: Array<[string, string]>): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v}`);
}

export function formatAge(seconds: number): string {
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))}s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

/** A span of seconds in the largest whole unit: "7 days", "12 hours", "90 seconds". */
export function describeWindow(secs: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (secs % 86400 === 0) return unit(secs / 86400, 'day');
  if (secs % 3600 === 0) return unit(secs / 3600, 'hour');
  if (secs % 60 === 0) return unit(secs / 60, 'minute');
  return unit(secs, 'second');
}
