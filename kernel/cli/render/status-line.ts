/**
 * One line on a terminal saying what a long command is doing now, rewritten in place and cleared
 * before the command prints its answer. Silent when the stream is not a TTY, so piped and logged
 * runs (and --json) stay clean.
 */

/** Where progress goes: stderr, drawn only when it is a terminal. */
export interface ProgressStream {
  isTTY?: boolean;
  /** The terminal's width, when it tells. */
  columns?: number;
  write(chunk: string): unknown;
}

/**
 * `text` cut to fit one row of `columns` with the last column free. A longer line wraps, and the
 * carriage return and erase that redraw or clear it reach only its last row: the rows above stay
 * on the screen, in front of the answer.
 */
export function fitRow(text: string, columns: number | undefined): string {
  if (typeof columns !== 'number' || !Number.isInteger(columns) || columns < 2) return text;
  const chars = [...text];
  return chars.length < columns ? text : `${chars.slice(0, columns - 2).join('')}…`;
}

export class StatusLine {
  private drawn = false;

  constructor(private readonly stream: ProgressStream) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  show(text: string): void {
    if (!this.enabled) return;
    this.stream.write(`\r\x1b[2K${fitRow(text, this.stream.columns)}`);
    this.drawn = true;
  }

  clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
