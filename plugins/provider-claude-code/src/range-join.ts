/**
 * Joins the ranges read on workers (range-scan.ts) to the scan state of the lines before them, in
 * file order and batch by batch as they arrive, so the state ends exactly as one pass would leave
 * it: rows and line-keyed facts shifted to file lines (their uuids are indexed with every other
 * row's once all are joined, uuid-index.ts), response numbers given in order of first appearance in
 * the file, tool results labelled from calls made in earlier ranges, envelope facts and type counts
 * joined in file order.
 */
import { resolveResult } from './record-reader.js';
import type { RangeBatch, RangeEnd } from './range-scan.js';
import type { ScanState } from './scan-state.js';
import type { LineProblem } from './scan-line.js';

interface Range {
  batches: RangeBatch[];
  end: RangeEnd | null;
  /** File line of the range's first row, once joining reached it. */
  startRow: number;
  /** Local response number -> file-wide one. */
  responseNumber: number[];
}

export class RangeJoiner {
  private readonly ranges: Range[];
  private current = 0;
  private open = false;
  private firstWorkerRow = -1;
  /** Results whose call is in an earlier range: [file row, tool id, outcome]. */
  private readonly unresolved: Array<{ row: number; toolUseId: string; outcome: string }> = [];
  /** What went wrong while joining (a range that does not fit); the read is then done again. */
  failure: unknown = null;

  constructor(
    private readonly state: ScanState,
    count: number,
  ) {
    this.ranges = Array.from({ length: count }, () => ({ batches: [], end: null, startRow: -1, responseNumber: [] }));
  }

  /** The lines before the first range are all in the state: joining can begin. */
  begin(): void {
    this.open = true;
    this.drain();
  }

  /** Stops joining: the read is given up, and rows still arriving are dropped. */
  abandon(): void {
    this.failure ??= new Error('the read was given up');
  }

  batch(k: number, batch: RangeBatch): void {
    if (this.failure !== null) return;
    this.ranges[k]!.batches.push(batch);
    this.drain();
  }

  end(k: number, end: RangeEnd): void {
    this.ranges[k]!.end = end;
    this.drain();
  }

  /** Every range is joined (none ended on a fatal line). */
  get complete(): boolean {
    return this.current === this.ranges.length;
  }

  /** File line of range `k`'s first row as joined (-1: not reached). */
  startRow(k: number): number {
    return this.ranges[k]!.startRow;
  }

  private drain(): void {
    if (!this.open || this.failure !== null) return;
    try {
      while (this.current < this.ranges.length) {
        const range = this.ranges[this.current]!;
        if (range.startRow < 0) range.startRow = this.state.ctx.table.length;
        if (this.firstWorkerRow < 0) this.firstWorkerRow = range.startRow;
        for (let batch = range.batches.shift(); batch; batch = range.batches.shift()) this.joinBatch(range, batch);
        if (!range.end || range.end.fatal) return;
        this.joinEnd(range, range.end);
        this.current += 1;
      }
    } catch (error) {
      this.failure = error;
    }
  }

  private joinBatch(range: Range, batch: RangeBatch): void {
    const { ctx, problems } = this.state;
    const t = ctx.table;
    if (t.length !== range.startRow + batch.from) throw new Error('a batch of rows arrived out of order');
    const at = t.append(batch.table);
    const n = t.length;
    for (const id of batch.responses) {
      let number = ctx.responses.get(id);
      if (number === undefined) {
        number = ctx.responses.size;
        ctx.responses.set(id, number);
      }
      range.responseNumber.push(number);
    }
    if (range.responseNumber.length > 0) {
      for (let i = at; i < n; i += 1) {
        const r = t.response[i]!;
        if (r >= 0) t.response[i] = range.responseNumber[r]!;
      }
    }
    for (const u of batch.unresolved) this.unresolved.push({ row: range.startRow + u.row, toolUseId: u.toolUseId, outcome: u.outcome });
    for (const p of batch.problems) {
      const joined: LineProblem = { line: range.startRow + p.line, state: p.state, reason: p.reason };
      if (p.uuid !== undefined) joined.uuid = p.uuid;
      problems.push(joined);
    }
  }

  private joinEnd(range: Range, end: RangeEnd): void {
    const { ctx, envelope, typeCounts } = this.state;
    if (ctx.table.length - range.startRow !== end.lines) throw new Error('a range ended with rows missing');
    for (const [key, count] of end.typeCounts) typeCounts.set(key, (typeCounts.get(key) ?? 0) + count);
    envelope.absorb(end.envelope);
  }

  /**
   * Labels the results whose call is in an earlier range, as the single pass did: from the latest
   * record before the result that made the call.
   */
  finish(): void {
    if (this.unresolved.length === 0) return;
    const { ctx } = this.state;
    const t = ctx.table;
    const wanted = new Set(this.unresolved.map((u) => u.toolUseId));
    /** Latest call row of each wanted id among the workers' rows passed so far. */
    const latest = new Map<string, number>();
    let u = 0;
    for (let i = this.firstWorkerRow; u < this.unresolved.length && i < t.length; i += 1) {
      for (; u < this.unresolved.length && this.unresolved[u]!.row === i; u += 1) {
        const { toolUseId, outcome } = this.unresolved[u]!;
        // The lines before the first range were read here, into ctx.tools.
        resolveResult(t, i, latest.get(toolUseId) ?? ctx.tools.get(toolUseId), outcome);
      }
      const ids = t.toolUseIds[i];
      if (ids) for (const id of ids) if (wanted.has(id)) latest.set(id, i);
    }
  }
}
