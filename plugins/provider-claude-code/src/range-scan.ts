/**
 * Reading one byte range of a transcript into rows: the calling thread's own range of a parallel
 * scan, and on a worker thread each later range, handed over in batches while the read goes on
 * with what the join (range-join.ts) needs to attach it to the ranges before it: rows and problems
 * by local line, the response ids in the order they were numbered, the tool results whose call was
 * not in the range, and at the end the envelope facts and type counts. Every line goes through the
 * same code as in one pass (scan-line.ts readLine).
 */
import { closeSync, constants as fsConstants, fstatSync, openSync } from 'node:fs';
import type { EnvelopeFacts } from './envelope.js';
import type { ReadLimits } from './limits.js';
import { readRangeLines } from './range-lines.js';
import type { UnresolvedResult } from './record-reader.js';
import type { LineState, TableColumns } from './record-table.js';
import { ScanFatalError } from './scan-errors.js';
import { readLine, type LineProblem } from './scan-line.js';
import { countLine, newScanState, type ScanState } from './scan-state.js';

export interface RangeOptions {
  limits: ReadLimits;
  strict: boolean;
  detail: boolean;
}

export interface RangeTask extends RangeOptions {
  path: string;
  /** First byte of the range (a line start) and the byte after it (after a newline, or the file size). */
  start: number;
  end: number;
  /** Rows per batch. */
  batchRows: number;
  /**
   * Int32 [0]: the local line index to stop before. The main thread lowers it when lines of this
   * range can no longer matter (an earlier line ended the read).
   */
  stop: SharedArrayBuffer;
}

/** Rows [from, from + table.length) of a range, with what belongs to them; lines are local. */
export interface RangeBatch {
  from: number;
  table: TableColumns;
  problems: LineProblem[];
  /** message.id of each response first met in these rows, in number order. */
  responses: string[];
  unresolved: UnresolvedResult[];
}

/** Identity of the file a range was read from, compared with what the main thread stat-ed. */
export interface RangeFile {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** A line that makes a strict read fail, by local index. */
export interface RangeFatal {
  state: Exclude<LineState, 'ok'>;
  line: number;
  reason: string;
}

/** How the read of a range ended. */
export interface RangeEnd {
  file: RangeFile;
  /** Lines read into rows (the fatal line, when there is one, is not among them). */
  lines: number;
  bytesRead: number;
  lastTerminated: boolean;
  /** Why the range was not read to its end: a line over the record limit, asked to, or a fatal line. */
  stopped: 'long_line' | 'asked' | 'fatal' | null;
  fatal: RangeFatal | null;
  typeCounts: Array<[string, number]>;
  envelope: EnvelopeFacts;
}

/**
 * Reads one line into a row of the state's table; `index` is the row it becomes. A render reads
 * lines its own way (render-lines.ts); a scan uses readLine.
 */
export type RowReader = (bytes: Buffer, index: number) => number;

/**
 * Reads lines [start, end) of `path` into `state`, indexes counted from 0 at `start`, stopping
 * before the line `stop[0]` names; `afterRow` runs after each row.
 */
export function readRange(path: string, start: number, end: number, options: RangeOptions, stop: Int32Array, state: ScanState, afterRow?: () => void, readRow?: RowReader): RangeEnd {
  const { ctx, envelope, problems, typeCounts } = state;
  const t = ctx.table;
  const first = t.length;
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  let fatal: RangeFatal | null = null;
  let read;
  let file: RangeFile;
  try {
    const st = fstatSync(fd);
    file = { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    try {
      read = readRangeLines(fd, start, end, options.limits.maxRecordBytes, (bytes, index) => {
        if (index >= Atomics.load(stop, 0)) return false;
        const row = readRow ? readRow(bytes, first + index) : readLine(bytes, first + index, options.limits, ctx, envelope, problems, options.strict, options.detail);
        countLine(typeCounts, t, row);
        afterRow?.();
        return true;
      });
    } catch (error) {
      if (!(error instanceof ScanFatalError)) throw error;
      fatal = { state: error.state, line: error.line - first, reason: error.reason };
    }
  } finally {
    closeSync(fd);
  }
  return {
    file,
    lines: t.length - first,
    bytesRead: read?.bytesRead ?? 0,
    lastTerminated: read?.lastTerminated ?? true,
    stopped: fatal ? 'fatal' : read!.stopped,
    fatal,
    typeCounts: [...typeCounts],
    envelope: envelope.facts(),
  };
}

/**
 * Reads `task`'s range on a worker, calling `post` with each batch of rows in order. `rowReader`
 * gives the way lines are read into the range's state (default: as a scan reads them).
 */
export function scanRange(task: RangeTask, post: (batch: RangeBatch) => void, rowReader?: (state: ScanState) => RowReader): RangeEnd {
  const state = newScanState();
  const { ctx, problems } = state;
  const unresolved: UnresolvedResult[] = [];
  ctx.range = { unresolvedResults: unresolved };
  const t = ctx.table;
  /** Response ids in number order (a line numbers at most one new response, the one it names last). */
  const responseIds: string[] = [];
  let sentRows = 0;
  let sentProblems = 0;
  let sentResponses = 0;
  let sentUnresolved = 0;
  const flush = () => {
    if (t.length === sentRows) return;
    post({
      from: sentRows,
      table: t.columns(sentRows, t.length),
      problems: problems.slice(sentProblems),
      responses: responseIds.slice(sentResponses),
      unresolved: unresolved.slice(sentUnresolved),
    });
    sentRows = t.length;
    sentProblems = problems.length;
    sentResponses = responseIds.length;
    sentUnresolved = unresolved.length;
  };
  const end = readRange(
    task.path,
    task.start,
    task.end,
    task,
    new Int32Array(task.stop),
    state,
    () => {
      if (ctx.responses.size > responseIds.length) responseIds.push(ctx.lastMessageId!);
      if (t.length - sentRows >= task.batchRows) flush();
    },
    rowReader?.(state),
  );
  // Rows before a fatal line are of no use to anyone: the read fails there.
  if (!end.fatal) flush();
  return end;
}
