/**
 * The one line of a text that a summary keeps: the first non-blank one, or for a failed command the
 * first one that says what failed. Providers build these for every record of a parse, so they look
 * only at the head of a text and never keep a view into it.
 */
import { clipUtf8 } from './utf8.js';

/**
 * A copy that does not pin the text it was cut from: V8 may represent a slice as a view into its
 * parent string, and a summary kept for 100,000 records must not keep their whole text alive.
 */
function ownCopy(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]+/g;

/** The first non-blank line, trimmed, control characters turned into spaces, cut to `maxBytes`. */
export function firstLine(text: string, maxBytes: number): string | null {
  // Only the head of a long text matters: the first line is all a summary keeps.
  const limit = Math.min(text.length, maxBytes * 4 + 256);
  let start = 0;
  while (start < limit) {
    let end = text.indexOf('\n', start);
    if (end === -1 || end > limit) end = limit;
    const line = text.slice(start, end).replace(CONTROL, ' ').trim();
    if (line.length > 0) return ownCopy(clipUtf8(line, maxBytes));
    start = end + 1;
  }
  return null;
}

/**
 * How a line that reports a failure reads: a thrown error or exception, a compiler's `error:` or
 * `error[E0308]`, a test runner's FAILED or FAIL, a Rust panic, git's `fatal:`. Case matters, so
 * that "0 errors" in a summary line is not taken for one.
 */
const FAILURE_LINE = /(?:Error|Exception)\b|\berror(?:\[|:)|\bFAIL(?:ED)?\b|\bpanicked\b|\bfatal:/;

/** How much of a failed call's output is searched for the line that says what failed. */
const FAILURE_SEARCH_CHARS = 256 * 1024;

/**
 * The line of a failed call's output that says what failed, for the summary a state card files
 * under errors: the first line that reads as a failure, else the first non-blank line. Outputs often
 * open with a command's progress and name the error further down.
 */
export function failureLine(text: string, maxBytes: number): string | null {
  const limit = Math.min(text.length, FAILURE_SEARCH_CHARS);
  let start = 0;
  while (start < limit) {
    let end = text.indexOf('\n', start);
    if (end === -1 || end > limit) end = limit;
    const line = text.slice(start, end);
    if (FAILURE_LINE.test(line)) {
      const cleaned = line.replace(CONTROL, ' ').trim();
      if (cleaned.length > 0) return ownCopy(clipUtf8(cleaned, maxBytes));
    }
    start = end + 1;
  }
  return firstLine(text, maxBytes);
}
