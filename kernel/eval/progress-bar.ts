/**
 * A one-line progress bar for terminals. Silent when the stream is not a TTY, so piped and logged
 * runs stay clean.
 */
import type { JobProgress } from './parallel-runner.js';

export function progressLine(p: JobProgress, width = 28, label = 'sessions'): string {
  const fraction = p.total === 0 ? 1 : p.done / p.total;
  const filled = Math.round(fraction * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const failed = p.failed > 0 ? `, ${p.failed} failed` : '';
  return `${bar} ${p.done}/${p.total} ${label}${failed}`;
}

export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

export class ProgressBar {
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly stream: ProgressStream,
    private readonly label = 'sessions',
    private readonly minIntervalMs = 100,
  ) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  update(p: JobProgress): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (p.done < p.total && now - this.lastDraw < this.minIntervalMs) return;
    this.lastDraw = now;
    this.drawn = true;
    this.stream.write(`\r\x1b[2K${progressLine(p, 28, this.label)}`);
  }

  /** Clears the bar so the next output starts on a clean line. */
  finish(): void {
    if (this.enabled && this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
