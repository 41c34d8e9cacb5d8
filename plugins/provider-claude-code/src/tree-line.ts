/**
 * One line into its row of the RecordTable from the record's skeleton (skeleton.ts), with the
 * same states and refusals as a parsed line (scan.ts readLine): blank, not UTF-8, not JSON, not an
 * object, structurally wrong. Render reads the lines it does not edit this way.
 */
import { isUtf8 } from 'node:buffer';
import type { ByteSpan } from '../../../sdk/raw-json.js';
import type { EnvelopeTracker } from './envelope.js';
import type { ReadLimits } from './limits.js';
import { readRecord, type LineContext } from './record-reader.js';
import { isObject, structuralProblem, type RawRecord } from './records.js';
import { isBlank, unreadable, type LineProblem } from './scan.js';
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
  if (buf.length > limits.maxRecordBytes) return failed(unreadable('oversized', `is ${buf.length} bytes, over the ${limits.maxRecordBytes}-byte record limit`, buf, index, ctx, problems, strict));
  if (isBlank(buf)) return failed(unreadable('blank', 'is blank', buf, index, ctx, problems, strict));
  if (!isUtf8(buf)) return failed(unreadable('invalid_utf8', 'is not valid UTF-8', buf, index, ctx, problems, strict));
  const skeleton = skeletons.read(buf);
  let record: RawRecord;
  let sessionIdSpans: readonly ByteSpan[] | null = null;
  if (skeleton !== null) {
    record = skeleton.record;
    sessionIdSpans = skeleton.sessionIdSpans;
  } else {
    // Rare: the walk could not follow the line, so JSON.parse has the last word on what it is.
    const value = parseWhole(buf);
    if (value === NOT_JSON) return failed(unreadable('invalid_json', 'is not valid JSON', buf, index, ctx, problems, strict));
    if (!isObject(value)) return failed(unreadable('not_object', 'is not a JSON object', buf, index, ctx, problems, strict));
    record = value;
  }
  const problem = structuralProblem(record);
  if (problem) return failed(unreadable('invalid_record', problem, buf, index, ctx, problems, strict));
  envelope.see(record);
  return { row: readRecord(record, buf, ctx, false), sessionIdSpans };
}
