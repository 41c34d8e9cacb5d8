/**
 * What a scan accumulates while lines pass (the line context, envelope facts, problems, record type
 * counts), how it becomes the scan's rows once every line is read, and the check that the file is
 * still the one that was read.
 */
import { statSync, type Stats } from 'node:fs';
import { EnvelopeTracker } from './envelope.js';
import { lineContext, type LineContext } from './record-reader.js';
import type { RecordTable } from './record-table.js';
import type { ScanRows } from './scan.js';
import { SourceMovedError } from './scan-errors.js';
import type { LineProblem } from './scan-line.js';
import { indexUuids } from './uuid-index.js';

export interface ScanState {
  ctx: LineContext;
  envelope: EnvelopeTracker;
  problems: LineProblem[];
  /** Record type (or `<state>` of an unreadable line) -> lines, in order of first appearance. */
  typeCounts: Map<string, number>;
}

/** A state whose rows' uuids are indexed once all are read (scanRows). */
export function newScanState(): ScanState {
  const ctx = lineContext();
  ctx.notesAsRead = false;
  return { ctx, envelope: new EnvelopeTracker(), problems: [], typeCounts: new Map() };
}

export function countLine(counts: Map<string, number>, t: RecordTable, row: number): void {
  const key = t.type[row] ?? `<${t.state(row)}>`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Throws SourceMovedError unless `path` is still the file stat-ed as `before`, `bytes` long. */
export function checkUnchanged(path: string, before: Stats, bytes: number): Stats {
  let after: Stats;
  try {
    after = statSync(path);
  } catch {
    throw new SourceMovedError(`${path} disappeared while it was read`);
  }
  if (!sameFile(before, after) || after.size !== bytes) throw new SourceMovedError(`${path} changed while it was read`);
  return after;
}

/** The rows of a state that holds every line of the file (its uuids are indexed here). */
export function scanRows(path: string, state: ScanState, file: { bytes: number; recordCount: number; unterminatedFinalLine: boolean; mtimeMs: number }): ScanRows {
  const { ctx, envelope } = state;
  const { index, duplicates } = indexUuids(ctx.table);
  return {
    path,
    table: ctx.table,
    uuidLine: index,
    duplicateUuids: duplicates,
    ...file,
    recordTypes: Object.fromEntries(state.typeCounts),
    problems: state.problems,
    ...envelope.report(),
  };
}
