/**
 * Turns the user took back. Codex writes `event_msg` `thread_rolled_back` with `num_turns` when the
 * user backs up over their last turns; resuming, the client drops those turns (each from its user
 * message up to the rollback) from the history it sends. Their records stay in the file, so a
 * prediction of the context must drop them too, and nothing in them may be offered for elision.
 */
import type { TranscriptItem } from '../../../sdk/index.js';

export class Rollbacks {
  /** Lines of the user messages that start a turn in the live window, oldest first. */
  private turnStarts: number[] = [];
  /** Line ranges [from, to) taken out of the context, in the order the rollbacks came. */
  private readonly ranges: Array<{ from: number; to: number }> = [];

  turnStarted(line: number): void {
    this.turnStarts.push(line);
  }

  /**
   * A compaction the client loads starts the history anew: a rollback after it reaches back no
   * further than it (into its replacement history at most, which is not modelled: the record stays).
   */
  windowStarted(): void {
    this.turnStarts = [];
  }

  /** A `thread_rolled_back` record on `line`: its newest `numTurns` turns leave the context. */
  rolledBack(line: number, numTurns: unknown): void {
    if (typeof numTurns !== 'number' || !Number.isInteger(numTurns) || numTurns < 1 || this.turnStarts.length === 0) return;
    const kept = Math.max(0, this.turnStarts.length - numTurns);
    this.ranges.push({ from: this.turnStarts[kept]!, to: line });
    this.turnStarts.length = kept;
  }

  /** Calls `drop` on each item (sorted by line) a rollback took out of the context. */
  dropFrom(items: readonly TranscriptItem[], drop: (item: TranscriptItem) => void): void {
    const ranges = merged(this.ranges);
    let r = 0;
    for (const item of items) {
      while (r < ranges.length && ranges[r]!.to <= item.line_index) r += 1;
      if (r === ranges.length) return;
      if (ranges[r]!.from <= item.line_index) drop(item);
    }
  }
}

/** The same lines as sorted, disjoint ranges: a second rollback may reach past a first. */
function merged(ranges: ReadonlyArray<{ from: number; to: number }>): Array<{ from: number; to: number }> {
  const out: Array<{ from: number; to: number }> = [];
  for (const range of [...ranges].sort((a, b) => a.from - b.from)) {
    const last = out[out.length - 1];
    if (last && range.from <= last.to) last.to = Math.max(last.to, range.to);
    else out.push({ ...range });
  }
  return out;
}
