/**
 * A scan of a large file on several threads with the same result, errors included, as one pass
 * (scan.ts). This thread parses the first range of lines itself; each worker parses one later
 * range, split at a newline, from its own descriptor (range-scan.ts), handing its rows over in
 * batches that are joined in file order (range-join.ts). Once a worker is done with its range it
 * reads the whole file through the shared reader (whole-read.ts): every byte hashed once, every
 * file-wide check applied exactly as in one pass. That runs while this thread joins and indexes the
 * rows and the caller already works on them (scan.ts scanAndUse): hashing is the one part of a read
 * that cannot be split.
 *
 * Which error wins: one pass hands lines out in order and stops at the first line it cannot accept
 * (a strict read's fatal line) or at the first reader error, which the reader raises only after
 * every earlier line was handed out. So the earliest fatal line wins when the whole-file reader
 * handed that line out before failing, and the reader's error wins otherwise.
 */
import { closeSync, constants as fsConstants, openSync, readSync, type Stats } from 'node:fs';
import { RangeJoiner } from './range-join.js';
import { readRange, type RangeEnd, type RangeFatal } from './range-scan.js';
import { ScanFatalError } from './scan-errors.js';
import { countParallelScan, type ParallelPlan } from './scan-pool.js';
import { checkUnchanged, newScanState, scanRows } from './scan-state.js';
import type { ScanOptions, ScanRows } from './scan.js';
import { raisedAgain, type WholeRead } from './whole-read.js';

const SEARCH_WINDOW = 64 * 1024;

/**
 * Offsets where the workers' ranges start: the first line start at or after each target offset.
 * A target with no newline between it and the next one is dropped (its range joins the previous).
 * None when the file cannot be opened here: the single pass then reports why.
 */
export function splitPoints(path: string, size: number, plan: Pick<ParallelPlan, 'threads' | 'mainShare'>): number[] {
  const workers = plan.threads - 1;
  const targets: number[] = [];
  for (let k = 0; k < workers; k += 1) targets.push(Math.floor(size * (plan.mainShare + (k * (1 - plan.mainShare)) / workers)));
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return [];
  }
  const window = Buffer.allocUnsafe(SEARCH_WINDOW);
  const splits: number[] = [];
  try {
    targets.forEach((target, k) => {
      const limit = k + 1 < targets.length ? targets[k + 1]! : size;
      // The newline ending the line that holds byte target-1 makes `target` or later a line start.
      let at = Math.max(0, target - 1);
      // Every range holds at least one line.
      const least = splits.length > 0 ? splits[splits.length - 1]! + 1 : 1;
      while (at < limit) {
        const got = readSync(fd, window, 0, Math.min(SEARCH_WINDOW, limit - at), at);
        if (got === 0) return;
        const nl = window.subarray(0, got).indexOf(0x0a);
        if (nl >= 0) {
          const split = at + nl + 1;
          if (split >= least && split < size) splits.push(split);
          return;
        }
        at += got;
      }
    });
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
  return splits;
}

/** Rows read in parallel, whose whole-file read may still be going on. */
export interface PendingScan {
  rows: ScanRows;
  /**
   * The file's sha256 once the whole read is known to have succeeded on the same file; throws the
   * error one pass would have thrown; null when it must be read again in one pass.
   */
  sha256(): Promise<string | null>;
}

export type Settled<T> = { value: T } | { failed: Error };
export const settle = <T>(p: Promise<T>): Promise<Settled<T>> => p.then((value) => ({ value }), (failed: Error) => ({ failed }));

/** One Int32 the threads of a read share (a line to stop before). */
export function shared(value: number): Int32Array {
  const a = new Int32Array(new SharedArrayBuffer(4));
  a[0] = value;
  return a;
}

/**
 * Reads `path` with workers starting at `splits` (splitPoints). Throws the error one pass would
 * have met (a fatal line, a reader error); null when a worker failed and one pass must decide.
 */
export async function scanInParallel(path: string, options: ScanOptions, before: Stats, plan: ParallelPlan, splits: number[]): Promise<PendingScan | null> {
  // Counted once the outcome is known: a result or an error is a parallel read, null a fallback.
  const pending = await attempt(path, options, before, plan, splits).catch((error: unknown) => {
    countParallelScan(false);
    throw error;
  });
  if (!pending) {
    countParallelScan(true);
    return null;
  }
  return {
    rows: pending.rows,
    async sha256() {
      const sha = await pending.sha256().catch((error: unknown) => {
        countParallelScan(false);
        throw error;
      });
      countParallelScan(sha === null);
      return sha;
    },
  };
}

async function attempt(path: string, options: ScanOptions, before: Stats, plan: ParallelPlan, splits: number[]): Promise<PendingScan | null> {
  const { limits, strict } = options;
  const rangeOptions = { limits, strict, detail: options.detail ?? true };
  const state = newScanState();
  const joiner = new RangeJoiner(state, splits.length);
  // A range can never hold more lines than the whole file may.
  const stops = splits.map(() => shared(limits.maxRecords));
  const cancelFrom = (k: number) => {
    for (let j = k; j < stops.length; j += 1) Atomics.store(stops[j]!, 0, 0);
  };
  const ranges = splits.map((start, k) => {
    const task = { path, start, end: splits[k + 1] ?? before.size, ...rangeOptions, batchRows: plan.batchRows, stop: stops[k]!.buffer as SharedArrayBuffer };
    const job = plan.pool.readRange(task, (batch) => joiner.batch(k, batch));
    return settle(
      job.then((end) => {
        // Lines after a fatal line are never reached by one pass.
        if (end.fatal) cancelFrom(k + 1);
        joiner.end(k, end);
        return end;
      }),
    );
  });
  const wholeStop = shared(0x7fffffff);
  const whole = settle(plan.pool.readWhole({ path, limits, splits, stop: wholeStop.buffer as SharedArrayBuffer, hash: options.hash ?? true }));

  /** A fatal line of range `k` (-1: this thread's) at file line `line`: which error one pass meets first. */
  const fatalAt = async (k: number, line: number, fatal: RangeFatal): Promise<null> => {
    cancelFrom(0);
    Atomics.store(wholeStop, 0, line + 1);
    const settled = await whole;
    if ('failed' in settled) return null;
    const read = settled.value;
    if (read.error && read.handedOut <= line) {
      const error = raisedAgain(read.error);
      if (!error) return null;
      throw error;
    }
    // The line is numbered from the lines counted before it; the reader must agree.
    if (read.handedOut <= line || (k >= 0 && read.startLines[k] !== line - fatal.line)) return null;
    throw new ScanFatalError(fatal.state, line, fatal.reason);
  };
  /** A range ended early without a fatal line: the reader must have refused the file. */
  const refused = async (): Promise<null> => {
    cancelFrom(0);
    const settled = await whole;
    if ('failed' in settled || !settled.value.error) return null;
    const error = raisedAgain(settled.value.error);
    if (!error) return null;
    throw error;
  };

  let own: RangeEnd;
  try {
    own = readRange(path, 0, splits[0]!, rangeOptions, shared(limits.maxRecords), state);
  } catch {
    cancelFrom(0);
    return null;
  }
  if (own.fatal) return fatalAt(-1, own.fatal.line, own.fatal);
  if (own.stopped) return refused();
  joiner.begin();
  const ends: RangeEnd[] = [];
  let line = own.lines;
  for (let k = 0; k < ranges.length; k += 1) {
    const settled = await ranges[k]!;
    if ('failed' in settled) {
      cancelFrom(0);
      return null;
    }
    const end = settled.value;
    if (end.fatal) return fatalAt(k, line + end.fatal.line, end.fatal);
    if (end.stopped) return refused();
    ends.push(end);
    line += end.lines;
  }
  if (joiner.failure !== null || !joiner.complete) return null;
  joiner.finish();
  const last = ends[ends.length - 1]!;
  const t = state.ctx.table;
  const rows = scanRows(path, state, { bytes: before.size, recordCount: t.length, unterminatedFinalLine: !last.lastTerminated, mtimeMs: before.mtimeMs });
  return {
    rows,
    async sha256() {
      const settled = await whole;
      if ('failed' in settled) return null;
      const read = settled.value;
      if (read.error) {
        const error = raisedAgain(read.error);
        if (!error) return null;
        throw error;
      }
      const summary = read.summary!;
      // A file that changed is reported as one; anything else that does not add up is read again.
      checkUnchanged(path, before, summary.bytes);
      if (!consistent(ends, splits, own.lines, read, rows, before)) return null;
      return summary.sha256;
    },
  };
}

/** The workers read the same file, lines and bytes the whole-file reader did. */
export function consistent(ends: RangeEnd[], splits: number[], ownLines: number, read: WholeRead, rows: Pick<ScanRows, 'recordCount' | 'unterminatedFinalLine'>, before: Stats): boolean {
  const summary = read.summary!;
  if (summary.recordCount !== rows.recordCount || summary.unterminatedFinalLine !== rows.unterminatedFinalLine || summary.bytes !== before.size) return false;
  let line = ownLines;
  return ends.every((e, k) => {
    const end = splits[k + 1] ?? before.size;
    const ok =
      read.startLines[k] === line &&
      e.file.ino === before.ino &&
      e.file.dev === before.dev &&
      e.file.size === before.size &&
      e.file.mtimeMs === before.mtimeMs &&
      e.bytesRead === end - splits[k]! &&
      (k === ends.length - 1 || e.lastTerminated);
    line += e.lines;
    return ok;
  });
}
