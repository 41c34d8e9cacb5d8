/**
 * One line on a terminal saying what a long command is doing now, rewritten in place and cleared
 * before the command prints its answer. Silent when the stream is not a TTY, so piped and logged
 * runs (and --json) stay clean.
 */
import type { ProgressStream } from '../../eval/progress-bar.js';

export class StatusLine {
  private drawn = false;

  constructor(private readonly stream: ProgressStream) {}

  show(text: string): void {
    if (this.stream.isTTY !== true) return;
    this.stream.write(`\r\x1b[2K${text}`);
    this.drawn = true;
  }

  clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
