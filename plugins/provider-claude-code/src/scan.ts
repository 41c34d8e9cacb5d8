/**
 * One streaming pass over a Claude transcript: every line is read, hashed, decoded and parsed
 * exactly once and reduced to its row of the RecordTable. Everything else (live branch, items,
 * usage, findings, rendering decisions) works from the result. A large file may be read by several
 * threads at once (parallel-scan.ts), with the same result and the same errors as one pass.
 */
import { statSync, type Stats } from 'node:fs';
import { readJsonl, type JsonlRecord } from '../../../sdk/jsonl.js';
import type { RecordTable } from './record-table.js';
import type { UuidLookup } from './uuid-index.js';
import { jsonlOptions, type ReadLimits } from './limits.js';
import { scanInParallel, splitPoints } from './parallel-scan.js';
import { parallelPlan } from './scan-pool.js';
import { checkUnchanged, countLine, newScanState, scanRows } from './scan-state.js';
import type { EnvelopeReport } from './envelope.js';
import { readLine, type LineProblem } from './scan-line.js';

export { ScanFatalError, SourceMovedError } from './scan-errors.js';
export { readLine, unreadable, type LineProblem, type ParsedRecord } from './scan-line.js';

/** What a scan knows of a transcript once its rows are read (and of its envelope). */
export interface ScanRows extends EnvelopeReport {
  path: string;
  table: RecordTable;
  /** uuid -> line, later duplicates winning. */
  uuidLine: UuidLookup;
  duplicateUuids: Array<{ line: number; firstLine: number }>;
  bytes: number;
  recordCount: number;
  unterminatedFinalLine: boolean;
  mtimeMs: number;
  recordTypes: Record<string, number>;
  problems: LineProblem[];
}

/** A finished scan: the rows and the hash of every byte that was read. */
export interface ScanResult extends ScanRows {
  sha256: string;
}

export interface ScanOptions {
  limits: ReadLimits;
  /** Throw on the first unreadable record instead of recording it (parse and render do). */
  strict: boolean;
  /** Called after each line; tests use it to change the file mid-read. */
  afterLine?: (line: number) => void;
  /**
   * false: rows hold only what the tree, pairing and findings need (record-reader.ts); verify
   * reads this way. Default true, for parse.
   */
  detail?: boolean;
  /** false: the file is not hashed and the result's sha256 is '' (verify reads this way). Default true. */
  hash?: boolean;
}

/** Streams `path` once into metadata. Throws JsonlInputError/JsonlLimitError from the reader. */
export async function scanTranscript(path: string, options: ScanOptions): Promise<ScanResult> {
  return (await scanAndUse(path, options, () => null)).scan;
}

/**
 * Scans `path` and calls `use` with the rows, returning both once the whole read is known to have
 * succeeded. A parallel scan may still be hashing the file and checking the reader's limits while
 * `use` runs (so that work overlaps); when that read then fails, its error is thrown, as one pass
 * would have thrown it before `use` ran. An error of `use` is thrown only after a good read.
 */
export async function scanAndUse<T>(path: string, options: ScanOptions, use: (rows: ScanRows) => T): Promise<{ scan: ScanResult; value: T }> {
  const before = statSync(path);
  // A file over the byte limit is refused before any line is read.
  const plan = options.afterLine || before.size > options.limits.maxBytes ? null : parallelPlan(before);
  const splits = plan ? splitPoints(path, before.size, plan) : [];
  if (plan && splits.length > 0) {
    // null: a thread failed without an answer about the file; one pass gives the real one.
    const pending = await scanInParallel(path, options, before, plan, splits);
    if (pending) {
      let outcome: { value: T } | { error: unknown };
      try {
        outcome = { value: use(pending.rows) };
      } catch (error) {
        outcome = { error };
      }
      const sha256 = await pending.sha256();
      if (sha256 !== null) {
        if ('error' in outcome) throw outcome.error;
        return { scan: { ...pending.rows, sha256 }, value: outcome.value };
      }
    }
  }
  const scan = await scanInOnePass(path, options, before);
  return { scan, value: use(scan) };
}

/** The whole file read, hashed and parsed on this thread. */
async function scanInOnePass(path: string, options: ScanOptions, before: Stats): Promise<ScanResult> {
  const state = newScanState();
  const { ctx, envelope, problems, typeCounts } = state;
  const detail = options.detail ?? true;
  const summary = await readJsonl(path, jsonlOptions(options.limits, options.hash ?? true), (rec: JsonlRecord) => {
    const row = readLine(rec.bytes, rec.index, options.limits, ctx, envelope, problems, options.strict, detail);
    countLine(typeCounts, ctx.table, row);
    options.afterLine?.(rec.index);
  });
  const after = checkUnchanged(path, before, summary.bytes);
  const rows = scanRows(path, state, { bytes: summary.bytes, recordCount: summary.recordCount, unterminatedFinalLine: summary.unterminatedFinalLine, mtimeMs: after.mtimeMs });
  return { ...rows, sha256: summary.sha256 };
}
