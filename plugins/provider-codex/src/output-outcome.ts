/**
 * How a command ended, read from its output: newer builds open plain text with a header
 * (`Exit code: N`, or `Process exited with code N` in unified exec) before `Output:`; older ones
 * wrote `{"output": …, "metadata": {exit_code, duration_seconds}}`, where the code comes after the
 * output, so a long output pushes it far from the head.
 */
import { failureLine } from '../../../sdk/summary-lines.js';
import { ENCODED_OUTPUT_START, type OutputMeasure } from './payload.js';
import { isObject } from './records.js';

const HEADER_EXIT = /^(?:Exit code:|Process exited with code)\s*(-?\d+)/m;
const METADATA_EXIT = /"exit_code"\s*:\s*(-?\d+)/;
const HEADER_CHARS = 256;
const OUTPUT_MARK = '\nOutput:\n';
/** A failed command's line in a summary: room for a compiler message, far under the summary bound. */
const FAILURE_LINE_BYTES = 160;

interface ExitStatus {
  code: number;
  /** The command's own text, without the header or the JSON around it; read only when it failed. */
  body: () => string;
}

function exitStatus(text: string): ExitStatus | null {
  if (text.startsWith(ENCODED_OUTPUT_START)) {
    const found = METADATA_EXIT.exec(text.slice(-HEADER_CHARS));
    return found === null ? null : { code: Number(found[1]), body: () => decodedOutput(text) };
  }
  // Only the header counts: the command's own text may quote an exit code too.
  const head = text.slice(0, HEADER_CHARS);
  const mark = head.indexOf(OUTPUT_MARK);
  const lineEnd = head.indexOf('\n');
  const header = mark !== -1 ? head.slice(0, mark) : lineEnd === -1 ? head : head.slice(0, lineEnd);
  const found = HEADER_EXIT.exec(header);
  if (found === null) return null;
  return { code: Number(found[1]), body: () => (mark === -1 ? '' : text.slice(mark + OUTPUT_MARK.length)) };
}

function decodedOutput(text: string): string {
  try {
    const decoded: unknown = JSON.parse(text);
    return isObject(decoded) && typeof decoded.output === 'string' ? decoded.output : '';
  } catch {
    return '';
  }
}

/**
 * "N bytes", then how the command ended when the output says: "exit 0", or for a failure "failed
 * with exit N: <the line that says what failed>". "failed" is a state card's error marker, so the
 * card files the call under errors, and that line is often all the next turn keeps of the output.
 */
export function outputOutcome(measure: OutputMeasure): string {
  const size = `${measure.bytes} bytes`;
  const status = measure.parts.length === 1 ? exitStatus(measure.parts[0]!) : null;
  if (status === null) return size;
  if (status.code === 0) return `${size}, exit 0`;
  const line = failureLine(status.body(), FAILURE_LINE_BYTES);
  return `${size}, failed with exit ${status.code}${line === null ? '' : `: ${line}`}`;
}
