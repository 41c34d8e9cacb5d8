/**
 * The two ways a scan ends without a result besides the reader's own limits: a line that makes the
 * transcript unusable (strict reads), and a file that changed under the read.
 */
import type { LineState } from './record-table.js';

/** A line that makes the whole transcript unusable in strict mode. */
export class ScanFatalError extends Error {
  constructor(
    readonly state: Exclude<LineState, 'ok'>,
    readonly line: number,
    /** Why, without the line number: "is not valid UTF-8". */
    readonly reason: string,
  ) {
    super(`line ${line + 1} ${reason}`);
    this.name = 'ScanFatalError';
  }
}

/** The file changed size, identity or time while it was read, or vanished. */
export class SourceMovedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceMovedError';
  }
}
