/**
 * Human output shows text that came from transcripts and plugins (project directories, record
 * types, titles, messages). None of it may drive the terminal: control characters other than tab
 * and newline, and the bidirectional controls that reorder what is shown, print as \u escapes.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
