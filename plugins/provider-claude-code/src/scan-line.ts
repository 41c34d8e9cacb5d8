/**
 * Reading one physical line into its row of the RecordTable: the checks every line goes through
 * (size, blank, UTF-8, JSON, object, structure), in the same order on every path that reads lines.
 */
import { isUtf8 } from 'node:buffer';
import { contentProblem, isObject, structuralProblem, type RawRecord } from './records.js';
import type { EnvelopeTracker } from './envelope.js';
import { readRecord, type LineContext } from './record-reader.js';
import type { LineState } from './record-table.js';
import type { ReadLimits } from './limits.js';
import { ScanFatalError } from './scan-errors.js';
import { isBlankLine } from '../../../sdk/jsonl.js';

/** A line that is not a readable record, with a content-free reason. */
export interface LineProblem {
  line: number;
  state: Exclude<LineState, 'ok'> | 'invalid_block';
  reason: string;
  /**
   * The uuid string an invalid_record carries. The record is no node of the tree, but a
   * last-prompt naming it names a record that is there: verify says that, not "does not exist".
   */
  uuid?: string;
}

const FATAL_STATES: ReadonlySet<LineState> = new Set(['invalid_utf8', 'not_object', 'invalid_record', 'oversized']);

/** What is wrong with a line's bytes before anything reads them as JSON (size, blank, UTF-8); null when nothing. */
export function bytesProblem(buf: Buffer, limits: ReadLimits): { state: 'oversized' | 'blank' | 'invalid_utf8'; reason: string } | null {
  if (buf.length > limits.maxRecordBytes) return { state: 'oversized', reason: `is ${buf.length} bytes, over the ${limits.maxRecordBytes}-byte record limit (GOBSTOPPER_MAX_RECORD_BYTES)` };
  if (isBlankLine(buf)) return { state: 'blank', reason: 'is blank' };
  if (!isUtf8(buf)) return { state: 'invalid_utf8', reason: 'is not valid UTF-8' };
  return null;
}

export function unreadable(
  state: Exclude<LineState, 'ok'>,
  reason: string,
  buf: Buffer,
  index: number,
  ctx: LineContext,
  problems: LineProblem[],
  strict: boolean,
  uuid?: string,
): number {
  if (strict && FATAL_STATES.has(state)) throw new ScanFatalError(state, index, reason);
  const problem: LineProblem = { line: index, state, reason };
  if (uuid !== undefined) problem.uuid = uuid;
  problems.push(problem);
  return ctx.table.add(buf.length, state);
}

/** Where readLine leaves the record it parsed, for a caller that goes on to edit it. */
export interface ParsedRecord {
  record: RawRecord | null;
}

/**
 * Reads line `index` into the next row of `ctx.table`, or records (strict: throws) why it cannot
 * be read. Lines must arrive in order, one row each. `parsed`, when given, receives the line's
 * record, so a line is never parsed twice.
 */
export function readLine(
  buf: Buffer,
  index: number,
  limits: ReadLimits,
  ctx: LineContext,
  envelope: EnvelopeTracker,
  problems: LineProblem[],
  strict: boolean,
  detail = true,
  parsed?: ParsedRecord,
): number {
  const bad = bytesProblem(buf, limits);
  if (bad) return unreadable(bad.state, bad.reason, buf, index, ctx, problems, strict);
  let value: unknown;
  const text = buf.toString('utf8');
  try {
    value = JSON.parse(text);
  } catch {
    return unreadable('invalid_json', 'is not valid JSON', buf, index, ctx, problems, strict);
  }
  if (!isObject(value)) return unreadable('not_object', 'is not a JSON object', buf, index, ctx, problems, strict);
  if (parsed) parsed.record = value;
  const problem = structuralProblem(value);
  if (problem) return unreadable('invalid_record', problem, buf, index, ctx, problems, strict, typeof value.uuid === 'string' ? value.uuid : undefined);
  const blockProblem = contentProblem(value);
  if (blockProblem) problems.push({ line: index, state: 'invalid_block', reason: blockProblem });
  envelope.see(value);
  return readRecord(value, buf, ctx, detail);
}
