/**
 * One line into its row of the RecordTable from the record's skeleton (skeleton.ts), with the
 * same states and refusals as a parsed line (scan.ts readLine): blank, not UTF-8, not JSON, not an
 * object, structurally wrong. Render reads the lines it does not edit this way.
 */
import type { ByteSpan } from '../../../sdk/raw-json.js';
import type { EnvelopeTracker } from './envelope.js';
import type { ReadLimits } from './limits.js';
import { readRecord, type LineContext } from './record-reader.js';
import { isObject, structuralProblem, type RawRecord } from './records.js';
import { bytesProblem, unreadable, type LineProblem } from './scan-line.js';
import type { LineState } from './record-table.js';
import type { SkeletonReader } from './skeleton.js';

export interface TreeLine {
  row: number;
  /**
   * The record's top-level sessionId values (none when the line is not a record); null when the
   * line had to be parsed whole, so they were not located.
   */
  sessionIdSpans: readonly ByteSpan[] | null;
}

const NONE: readonly ByteSpan[] = [];
const NOT_JSON = Symbol('not JSON');

function parseWhole(buf: Buffer): unknown {
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

function failed(row: number): TreeLine {
  return { row, sessionIdSpans: NONE };
}

/** A line read as a skeleton: its record and sessionId values, or why it is not a readable record. */
export type TreeRecord = { record: RawRecord; sessionIdSpans: readonly ByteSpan[] | null } | { state: Exclude<LineState, 'ok'>; reason: string };

/** The checks of readTreeLine, in its order, with no row filled: what a line is, read as a skeleton. */
export function readTreeRecord(skeletons: SkeletonReader, buf: Buffer, limits: ReadLimits): TreeRecord {
  const bad = bytesProblem(buf, limits);
  if (bad) return bad;
  const skeleton = skeletons.read(buf);
  let record: RawRecord;
  let sessionIdSpans: readonly ByteSpan[] | null = null;
  if (skeleton !== null) {
    record = skeleton.record;
    sessionIdSpans = skeleton.sessionIdSpans;
  } else {
    // Rare: the walk could not follow the line, so JSON.parse has the last word on what it is.
    const value = parseWhole(buf);
    if (value === NOT_JSON) return { state: 'invalid_json', reason: 'is not valid JSON' };
    if (!isObject(value)) return { state: 'not_object', reason: 'is not a JSON object' };
    record = value;
  }
  const problem = structuralProblem(record);
  if (problem) return { state: 'invalid_record', reason: problem };
  return { record, sessionIdSpans };
}

/** The sessionId values a fork rewrites in a line: none when it is not a readable record. */
export function treeSessionIdSpans(read: TreeRecord): readonly ByteSpan[] | null {
  return 'state' in read ? NONE : read.sessionIdSpans;
}

export function readTreeLine(
  skeletons: SkeletonReader,
  buf: Buffer,
  index: number,
  limits: ReadLimits,
  ctx: LineContext,
  envelope: EnvelopeTracker,
  problems: LineProblem[],
  strict: boolean,
): TreeLine {
  const read = readTreeRecord(skeletons, buf, limits);
  if ('state' in read) return failed(unreadable(read.state, read.reason, buf, index, ctx, problems, strict));
  envelope.see(read.record);
  return { row: readRecord(read.record, buf, ctx, false), sessionIdSpans: read.sessionIdSpans };
}
