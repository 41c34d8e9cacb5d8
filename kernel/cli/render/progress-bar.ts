/**
 * A one-line progress bar for terminals, drawn on a StatusLine: silent when the stream is not a
 * TTY, and redrawn at most every `minIntervalMs` until the work is done.
 */
import type { JobProgress } from '../../eval/parallel-runner.js';
import { StatusLine, type ProgressStream } from './status-line.js';

export function progressLine(p: JobProgress, width = 28, label = 'sessions'): string {
  const fraction = p.total === 0 ? 1 : p.done / p.total;
  const filled = Math.round(fraction * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const failed = p.failed > 0 ? `, ${p.failed} failed` : '';
  return `${bar} ${p.done}/${p.total} ${label}${failed}`;
}

export class ProgressBar {
  private readonly line: StatusLine;
  private lastDraw = 0;

  constructor(
    stream: ProgressStream,
    private readonly label = 'sessions',
    private readonly minIntervalMs = 100,
  ) {
    this.line = new StatusLine(stream);
  }

  get enabled(): boolean {
    return this.line.enabled;
  }

  update(p: JobProgress): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (p.done < p.total && now - this.lastDraw < this.minIntervalMs) return;
    this.lastDraw = now;
    this.line.show(progressLine(p, 28, this.label));
  }

  /** Clears the bar so the next output starts on a clean line. */
  finish(): void {
    this.line.clear();
  }
}
