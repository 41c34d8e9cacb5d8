/**
 * The whole-file half of a parallel scan, run on a worker once its range is parsed: the shared
 * reader (sdk/jsonl.ts) goes over every byte exactly as one pass does, hashing it and applying
 * every file-wide check (size, NUL bytes, lines over the record limit, record count), without
 * parsing. Its verdict says where it stopped, so the main thread can tell which of a fatal line
 * and a reader error one pass would have met first.
 */
import { readJsonl, JsonlInputError, JsonlLimitError, type JsonlSummary } from '../../../sdk/jsonl.js';
import { jsonlOptions, type ReadLimits } from './limits.js';

export interface WholeReadTask {
  path: string;
  limits: ReadLimits;
  /** Offsets where the ranges start: the verdict gives the line found at each. */
  splits: number[];
  /** Int32 [0]: stop before handing out this line (nothing after a fatal line matters). */
  stop: SharedArrayBuffer;
  /** false: every check, no digest (the summary's sha256 is ''). Default true. */
  hash?: boolean;
}

/** A reader error, as its class and fields, to be raised again on the main thread. */
export type ReaderError =
  | { kind: 'limit'; limit: JsonlLimitError['limit']; message: string; line: number | null; bytesRead: number | null }
  | { kind: 'input'; reason: JsonlInputError['reason']; message: string }
  | { kind: 'other'; message: string };

export interface WholeRead {
  /** Lines handed out before the read ended. */
  handedOut: number;
  /** Index of the line starting at each split offset; -1 when none did. */
  startLines: number[];
  /** Set when the whole file was read. */
  summary: JsonlSummary | null;
  error: ReaderError | null;
}

const STOP = Symbol('stop');

export async function readWhole(task: WholeReadTask): Promise<WholeRead> {
  const stop = new Int32Array(task.stop);
  const startLines = task.splits.map(() => -1);
  let next = 0;
  let handedOut = 0;
  try {
    const summary = await readJsonl(task.path, jsonlOptions(task.limits, task.hash ?? true), (rec) => {
      if (rec.index >= Atomics.load(stop, 0)) throw STOP;
      handedOut = rec.index + 1;
      while (next < task.splits.length && task.splits[next]! < rec.offset) next += 1;
      if (next < task.splits.length && task.splits[next] === rec.offset) startLines[next] = rec.index;
    });
    return { handedOut, startLines, summary, error: null };
  } catch (error) {
    return { handedOut, startLines, summary: null, error: error === STOP ? null : readerError(error) };
  }
}

function readerError(error: unknown): ReaderError {
  if (error instanceof JsonlLimitError) return { kind: 'limit', limit: error.limit, message: error.message, line: error.line, bytesRead: error.bytesRead };
  if (error instanceof JsonlInputError) return { kind: 'input', reason: error.reason, message: error.message };
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}

/** The error the reader raised, as the main thread's own class; null for one it cannot rebuild. */
export function raisedAgain(error: ReaderError): Error | null {
  if (error.kind === 'limit') return new JsonlLimitError(error.limit, error.message, error.line, error.bytesRead);
  if (error.kind === 'input') return new JsonlInputError(error.reason, error.message);
  return null;
}
