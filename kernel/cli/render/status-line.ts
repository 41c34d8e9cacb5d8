/**
 * One line on a terminal saying what a long command is doing now, rewritten in place and cleared
 * before the command prints its answer. Silent when the stream is not a TTY, so piped and logged
 * runs (and --json) stay clean.
 */

/** Where progress goes: stderr, drawn only when it is a terminal. */
export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

export class StatusLine {
  private drawn = false;

  constructor(private readonly stream: ProgressStream) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  show(text: string): void {
    if (!this.enabled) return;
    this.stream.write(`\r\x1b[2K${text}`);
    this.drawn = true;
  }

  clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
