/**
 * A render of a large source on several threads, writing the same bytes as one pass (render.ts).
 * This thread renders the first range of lines straight into the staging file; each worker renders
 * one later range into memory (render-range.ts), its rows joined to this thread's in file order
 * (range-join.ts) and its bytes written after the ranges before it. One worker then reads the whole
 * file for its hash and every file-wide limit (whole-read.ts), as a parallel scan does.
 *
 * Only a clean read is finished here. A fatal line, a reader error, a worker that failed, or counts
 * that do not agree give null (at once, or from `sha256()`): the caller empties the staging file
 * and renders in one pass, which meets the same problem and reports it exactly as it always does.
 * The hash is the one part that cannot be split, so the caller checks the rows while it is taken.
 */
import type { Stats } from 'node:fs';
import type { StagingWriter } from '../../../sdk/staging.js';
import type { ReadLimits } from './limits.js';
import { consistent, settle, shared } from './parallel-scan.js';
import { RangeJoiner } from './range-join.js';
import { readRange, type RangeEnd } from './range-scan.js';
import { LineRenderer } from './render-lines.js';
import type { RenderPlan } from './render-plan.js';
import type { RenderedRange } from './render-range.js';
import type { ParallelPlan } from './scan-pool.js';
import { newScanState, type ScanState } from './scan-state.js';

export interface RenderedSource {
  /** Every line's row, joined in file order. */
  state: ScanState;
  file: { bytes: number; recordCount: number; unterminatedFinalLine: boolean };
  /** Elide targets whose payload was replaced. */
  elided: number;
  /**
   * The source's sha256 once the whole read is known to agree with the rendered lines; null when
   * it does not (or failed), and one pass must render again. The rows can be used before.
   */
  sha256(): Promise<string | null>;
}

/** The output of a range without the newline after its last line. */
function withoutFinalNewline(output: Uint8Array[]): Uint8Array[] {
  const last = output[output.length - 1];
  return last ? [...output.slice(0, -1), last.subarray(0, last.byteLength - 1)] : output;
}

export async function renderInParallel(
  path: string,
  plan: RenderPlan,
  limits: ReadLimits,
  before: Stats,
  pp: ParallelPlan,
  splits: number[],
  writer: StagingWriter,
): Promise<RenderedSource | null> {
  const state = newScanState();
  const renderer = new LineRenderer(plan, limits, state);
  const joiner = new RangeJoiner(state, splits.length);
  const options = { limits, strict: true, detail: false };
  const stops = splits.map(() => shared(limits.maxRecords));
  const wholeStop = shared(0x7fffffff);
  // Every way out but a finished render (a null, or a write error thrown) stops the other threads
  // and the joining of their rows.
  let finished = false;
  const cancel = () => {
    for (const stop of stops) Atomics.store(stop, 0, 0);
    Atomics.store(wholeStop, 0, 0);
    joiner.abandon();
  };
  const elide = [...plan.elide];
  const ranges = splits.map((start, k) =>
    settle(
      pp.pool.renderRange(
        { path, start, end: splits[k + 1] ?? before.size, ...options, batchRows: pp.batchRows, stop: stops[k]!.buffer as SharedArrayBuffer, elide, newSessionId: plan.newSessionId },
        (batch) => joiner.batch(k, batch),
      ),
    ),
  );
  const whole = settle(pp.pool.readWhole({ path, limits, splits, stop: wholeStop.buffer as SharedArrayBuffer }));

  try {
    let own: RangeEnd;
    try {
      own = readRange(path, 0, splits[0]!, options, shared(limits.maxRecords), state, undefined, (bytes, index) => renderer.render(bytes, index, index, writer, true));
    } catch {
      return null;
    }
    if (own.fatal || own.stopped) return null;
    joiner.begin();
    const ends: RangeEnd[] = [];
    let line = own.lines;
    let elided = renderer.elided;
    for (let k = 0; k < ranges.length; k += 1) {
      const settled = await ranges[k]!;
      if ('failed' in settled) return null;
      const range: RenderedRange = settled.value;
      // A worker counts the lines before its range only when it has elide targets to find.
      if (range.end.fatal || range.end.stopped || (range.firstLine !== null && range.firstLine !== line)) return null;
      joiner.end(k, range.end);
      // The file's unterminated last line stays so, unless a card is appended after it.
      const lastOfFile = k === ranges.length - 1 && !range.end.lastTerminated && plan.digest === null;
      writer.writeRendered(lastOfFile ? withoutFinalNewline(range.output) : range.output, range.end.lines);
      elided += range.elided;
      ends.push(range.end);
      line += range.end.lines;
    }
    if (joiner.failure !== null || !joiner.complete) return null;
    joiner.finish();
    const file = { bytes: before.size, recordCount: line, unterminatedFinalLine: !ends[ends.length - 1]!.lastTerminated };
    finished = true;
    return {
      state,
      file,
      elided,
      async sha256() {
        const settled = await whole;
        if ('failed' in settled || settled.value.error || !settled.value.summary) return null;
        // The whole read also confirms where every range starts (startLines).
        return consistent(ends, splits, own.lines, settled.value, file, before) ? settled.value.summary.sha256 : null;
      },
    };
  } finally {
    if (!finished) cancel();
  }
}
