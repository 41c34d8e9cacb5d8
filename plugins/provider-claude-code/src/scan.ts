/**
 * One streaming pass over a Claude transcript: every line is read, hashed, decoded and parsed
 * exactly once and reduced to its row of the RecordTable. Everything else (live branch, items,
 * usage, findings, rendering decisions) works from the result.
 */
import { isUtf8 } from 'node:buffer';
import { statSync, type Stats } from 'node:fs';
import { readJsonl, type JsonlRecord } from '../../../sdk/jsonl.js';
import { contentProblem, isObject, structuralProblem, type RawRecord } from './records.js';
import { EnvelopeTracker } from './envelope.js';
import { lineContext, readRecord, type LineContext } from './record-reader.js';
import type { LineState, RecordTable } from './record-table.js';
import type { ReadLimits } from './limits.js';

/** A line that is not a readable record, with a content-free reason. */
export interface LineProblem {
  line: number;
  state: Exclude<LineState, 'ok'> | 'invalid_block';
  reason: string;
}

export interface ScanResult {
  path: string;
  table: RecordTable;
  /** uuid -> line, later duplicates winning. */
  uuidLine: Map<string, number>;
  duplicateUuids: Array<{ line: number; firstLine: number }>;
  sha256: string;
  bytes: number;
  recordCount: number;
  unterminatedFinalLine: boolean;
  mtimeMs: number;
  recordTypes: Record<string, number>;
  problems: LineProblem[];
  /** First `sessionId` on a record. */
  sessionId: string | null;
  /** First `cwd` on a record. */
  cwd: string | null;
  title: string | null;
  /** A conversation record's `version` is not a version string. */
  versionAnomaly: boolean;
  claudeRecords: number;
  foreignRecords: number;
}

/** A line that makes the whole transcript unusable in strict mode. */
export class ScanFatalError extends Error {
  constructor(
    readonly state: Exclude<LineState, 'ok'>,
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'ScanFatalError';
  }
}

/** The file changed size, identity or time while it was read, or vanished. */
export class SourceMovedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceMovedError';
  }
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
}

const FATAL_STATES: ReadonlySet<LineState> = new Set(['invalid_utf8', 'not_object', 'invalid_record', 'oversized']);

export function isBlank(buf: Buffer): boolean {
  if (buf.length === 0) return true;
  if (buf.length > 64) return false;
  for (const c of buf) if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  return true;
}

export function unreadable(
  state: Exclude<LineState, 'ok'>,
  reason: string,
  buf: Buffer,
  index: number,
  ctx: LineContext,
  problems: LineProblem[],
  strict: boolean,
): number {
  if (strict && FATAL_STATES.has(state)) throw new ScanFatalError(state, index, `line ${index + 1} ${reason}`);
  problems.push({ line: index, state, reason });
  return ctx.table.add(buf.length, state);
}

/** Where readLine leaves the record it parsed, for a caller that goes on to edit it. */
export interface ParsedRecord {
  text: string | null;
  record: RawRecord | null;
}

/**
 * Reads line `index` into the next row of `ctx.table`, or records (strict: throws) why it cannot
 * be read. Lines must arrive in order, one row each. `parsed`, when given, receives the line's
 * text and record, so a line is never decoded or parsed twice.
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
  if (buf.length > limits.maxRecordBytes) return unreadable('oversized', `is ${buf.length} bytes, over the ${limits.maxRecordBytes}-byte record limit`, buf, index, ctx, problems, strict);
  if (isBlank(buf)) return unreadable('blank', 'is blank', buf, index, ctx, problems, strict);
  if (!isUtf8(buf)) return unreadable('invalid_utf8', 'is not valid UTF-8', buf, index, ctx, problems, strict);
  let value: unknown;
  const text = buf.toString('utf8');
  try {
    value = JSON.parse(text);
  } catch {
    return unreadable('invalid_json', 'is not valid JSON', buf, index, ctx, problems, strict);
  }
  if (!isObject(value)) return unreadable('not_object', 'is not a JSON object', buf, index, ctx, problems, strict);
  if (parsed) {
    parsed.text = text;
    parsed.record = value;
  }
  const problem = structuralProblem(value);
  if (problem) return unreadable('invalid_record', problem, buf, index, ctx, problems, strict);
  const blockProblem = contentProblem(value);
  if (blockProblem) problems.push({ line: index, state: 'invalid_block', reason: blockProblem });
  envelope.see(value);
  return readRecord(value, buf, ctx, detail);
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Streams `path` once into metadata. Throws JsonlInputError/JsonlLimitError from the reader. */
export async function scanTranscript(path: string, options: ScanOptions): Promise<ScanResult> {
  const before = statSync(path);
  const problems: LineProblem[] = [];
  const typeCounts = new Map<string, number>();
  const ctx = lineContext();
  const envelope = new EnvelopeTracker();
  const { maxBytes, maxRecords, maxRecordBytes } = options.limits;
  // Lines over the record limit are refused by the reader before they are held whole.
  const summary = await readJsonl(path, { maxBytes, maxRecords, maxLineBytes: maxRecordBytes }, (rec: JsonlRecord) => {
    const row = readLine(rec.bytes, rec.index, options.limits, ctx, envelope, problems, options.strict, options.detail ?? true);
    const key = ctx.table.type[row] ?? `<${ctx.table.state(row)}>`;
    typeCounts.set(key, (typeCounts.get(key) ?? 0) + 1);
    options.afterLine?.(rec.index);
  });
  let after: Stats;
  try {
    after = statSync(path);
  } catch {
    throw new SourceMovedError(`${path} disappeared while it was read`);
  }
  if (!sameFile(before, after) || after.size !== summary.bytes) throw new SourceMovedError(`${path} changed while it was read`);
  return {
    path,
    table: ctx.table,
    uuidLine: ctx.uuidLine,
    duplicateUuids: ctx.duplicateUuids,
    sha256: summary.sha256,
    bytes: summary.bytes,
    recordCount: summary.recordCount,
    unterminatedFinalLine: summary.unterminatedFinalLine,
    mtimeMs: after.mtimeMs,
    recordTypes: Object.fromEntries(typeCounts),
    problems,
    sessionId: envelope.sessionId,
    cwd: envelope.cwd,
    title: envelope.title,
    versionAnomaly: envelope.versionAnomaly,
    claudeRecords: envelope.claudeRecords,
    foreignRecords: envelope.foreignRecords,
  };
}
