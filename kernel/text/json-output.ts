/**
 * JSON printed on stdout, which is often a terminal. JSON.stringify escapes the ASCII controls but
 * leaves DEL, the C1 controls (U+009B opens a control sequence on many terminals), bidirectional
 * controls and the line and paragraph separators raw, so a transcript quoted in a result could
 * move the cursor, recolour the screen or reorder what is shown. Each of them is written as its
 * \uXXXX escape instead: the text still parses to exactly the same value.
 */
import { unicodeEscape, WIDE_CONTROLS } from './human.js';

// Outside strings JSON.stringify writes ASCII only, so every match is inside a string, where an
// escape stands for the same character; the ASCII controls it escapes itself.
const UNSAFE_IN_JSON = new RegExp(`[${WIDE_CONTROLS}]`, 'g');

/**
 * `value` as JSON text (indented by `indent` spaces when given) that is safe to print on a
 * terminal; empty for `undefined`, which has no JSON text.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? '').replace(UNSAFE_IN_JSON, unicodeEscape);
}
