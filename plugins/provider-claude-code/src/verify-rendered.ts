/**
 * A verify of a candidate this process has just rendered (rendered-files.ts). The file is read and
 * hashed as always, but a line the render copied from the source, once found equal byte for byte to
 * the source line at its index, is not parsed again: the source row the parse read from the same
 * bytes is taken, as a read without detail would have left it. In a fork the copied line must equal
 * the source line with its top-level sessionId values (found on the source line, as the render finds
 * them) replaced by the fork's id, and nothing else: no row member depends on that value. A fork's
 * source lines are read back from the source file, while it is still the file the render read
 * (source-window.ts). Edited and appended lines are read as any verify reads them.
 *
 * It counts only once the whole file hashed to what the render wrote. Anything else (another hash
 * or size, another record limit than the parse's, a copied line unlike its source line, an edited
 * line whose row is not the source row's, a reader error) returns null, and the file is read in
 * full, which reports whatever is there.
 *
 * Envelope facts (session id, cwd, title, version, whose records) are the source's, with the
 * appended lines' added: an edit replaces text inside `message` and `toolUseResult` only
 * (elide-line.ts), and no fact is read from either. A fork's first session id is its own, since
 * every record's was replaced. The differential test holds both reads to the same findings.
 */
import { statSync } from 'node:fs';
import { JsonlInputError, JsonlLimitError, readJsonl, type JsonlRecord } from '../../../sdk/jsonl.js';
import type { ByteSpan } from '../../../sdk/raw-json.js';
import { analysisOf, type Analysis } from './analysis.js';
import { recordSessionIdSpans } from './elide-line.js';
import { EnvelopeTracker } from './envelope.js';
import { jsonlOptions, type ReadLimits } from './limits.js';
import type { RecordTable } from './record-table.js';
import { sessionIdJson } from './render-lines.js';
import { SourceWindow } from './source-window.js';
import { countRenderedVerify, takeRendered, type RenderedFile } from './rendered-files.js';
import type { ScanRows } from './scan.js';
import { readLine, type LineProblem } from './scan-line.js';
import { checkUnchanged, countLine, newScanState, scanRows } from './scan-state.js';

/** Thrown from inside the read at the first line that is not what the render wrote. */
class NotAsRendered extends Error {}

/**
 * Only the record limit decides how a line is read into its row; the file's size and record count
 * are checked by this read itself (apply verifies a fork under its own record count).
 */
const sameRowLimits = (a: ReadLimits, b: ReadLimits) => a.maxRecordBytes === b.maxRecordBytes;

/**
 * Whether `line` is `source` with each of `spans` (in byte order) replaced by `idJson`: what a fork's
 * render writes for a line it copies.
 */
function isSourceWithId(line: Buffer, source: Buffer, spans: readonly ByteSpan[], idJson: Buffer): boolean {
  let expected = source.length;
  let last = 0;
  for (const span of spans) {
    if (span.start < last || span.end < span.start || span.end > source.length) return false;
    expected += idJson.length - (span.end - span.start);
    last = span.end;
  }
  if (line.length !== expected) return false;
  let at = 0;
  let out = 0;
  for (const span of spans) {
    const piece = span.start - at;
    if (line.compare(source, at, span.start, out, out + piece) !== 0) return false;
    out += piece;
    if (line.compare(idJson, 0, idJson.length, out, out + idJson.length) !== 0) return false;
    out += idJson.length;
    at = span.end;
  }
  return line.compare(source, at, source.length, out, line.length) === 0;
}

function sameIds(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((id, k) => id === b[k]);
}

/** Whether row `r` of `fresh` holds exactly what row `s` of `source` holds for the tree and the pairing. */
function sameTreeRow(fresh: RecordTable, r: number, source: RecordTable, s: number): boolean {
  return (
    fresh.state(r) === source.state(s) &&
    fresh.kind(r) === source.kind(s) &&
    fresh.flags[r] === source.flags[s] &&
    fresh.response[r] === source.response[s] &&
    fresh.type[r] === source.type[s] &&
    fresh.uuid[r] === source.uuid[s] &&
    fresh.parentUuid[r] === source.parentUuid[s] &&
    fresh.leafUuid.get(r) === source.leafUuid.get(s) &&
    sameIds(fresh.toolUseIds[r]!, source.toolUseIds[s]!) &&
    sameIds(fresh.toolResultIds[r]!, source.toolResultIds[s]!)
  );
}

/**
 * The source's envelope with the appended lines' facts added; null when they carry a title, or when
 * a fork's source names no session (which of its records held a sessionId is not known): read in full.
 */
function envelopeWith(source: ScanRows, appended: EnvelopeTracker, newSessionId: string | null): Pick<ScanRows, 'sessionId' | 'cwd' | 'title' | 'versionAnomaly' | 'claudeRecords' | 'foreignRecords'> | null {
  const facts = appended.facts();
  if (facts.customTitle !== null || facts.aiTitle !== null || facts.summaryTitle !== null) return null;
  if (newSessionId !== null && source.sessionId === null) return null;
  return {
    sessionId: newSessionId ?? source.sessionId ?? facts.sessionId,
    cwd: source.cwd ?? facts.cwd,
    title: source.title,
    versionAnomaly: source.versionAnomaly || facts.versionAnomaly,
    claudeRecords: source.claudeRecords + facts.claudeRecords,
    foreignRecords: source.foreignRecords + facts.foreignRecords,
  };
}

/** The analysis of the rendered file at `path`, or null when it must be read in full. */
async function analyseRendered(path: string, limits: ReadLimits, rendered: RenderedFile): Promise<Analysis | null> {
  if (!sameRowLimits(limits, rendered.limits)) return null;
  const before = statSync(path);
  if (!before.isFile() || before.size !== rendered.bytes) return null;
  const source = rendered.source.scan;
  const sourceTable = source.table;
  const sourceProblems = new Map<number, LineProblem[]>();
  for (const p of source.problems) (sourceProblems.get(p.line) ?? sourceProblems.set(p.line, []).get(p.line)!).push(p);
  const state = newScanState();
  const { ctx, problems, typeCounts } = state;
  // Edited lines are seen by a tracker of their own, which is dropped: their facts are the source's.
  const editedEnvelope = new EnvelopeTracker();
  const appendedEnvelope = new EnvelopeTracker();
  const fork = rendered.newSessionId;
  const idJson = sessionIdJson(fork);
  // A fork's source lines are read back from the file, while it is still the one the render read.
  const window = rendered.sourceFile === null ? null : SourceWindow.open(rendered.sourceFile.path, rendered.sourceFile.identity, sourceTable);
  if (rendered.sourceFile !== null && window === null) return null;
  let sourceMoved = false;

  const readRow = (rec: JsonlRecord): number => {
    const i = rec.index;
    if (i >= sourceTable.length) {
      const row = readLine(rec.bytes, i, limits, ctx, appendedEnvelope, problems, false, false);
      // Response numbers of copied rows are the source's; a new one would need the ids behind them.
      if (ctx.table.type[row] === 'assistant') throw new NotAsRendered();
      return row;
    }
    if (rendered.edited.has(i)) {
      const row = readLine(rec.bytes, i, limits, ctx, editedEnvelope, problems, false, false);
      if (!sameTreeRow(ctx.table, row, sourceTable, i)) throw new NotAsRendered();
      return row;
    }
    // Compared, not taken on the render's word: a line the render got wrong is read in full.
    const sourceLine = window === null ? (rendered.sourceLines?.[i] ?? null) : window.line(i);
    if (sourceLine === null) throw new NotAsRendered();
    if (idJson === null) {
      if (!rec.bytes.equals(sourceLine)) throw new NotAsRendered();
    } else {
      // A fork may make a line that was no record into one (a sessionId that was not a string):
      // only records are compared.
      if (!sourceTable.ok(i)) throw new NotAsRendered();
      const spans = rendered.forkSpans?.get(i) ?? recordSessionIdSpans(sourceLine);
      if (spans === null || !isSourceWithId(rec.bytes, sourceLine, spans, idJson)) throw new NotAsRendered();
    }
    for (const p of sourceProblems.get(i) ?? []) problems.push(p);
    return ctx.table.addTreeRowOf(sourceTable, i, rec.bytes.length);
  };

  const summary = await readJsonl(path, jsonlOptions(limits), (rec) => countLine(typeCounts, ctx.table, readRow(rec)))
    .catch((error: unknown) => {
      if (error instanceof NotAsRendered || error instanceof JsonlLimitError || error instanceof JsonlInputError) return null;
      throw error;
    })
    .finally(() => {
      if (window !== null && !window.close()) sourceMoved = true;
    });
  if (summary === null || sourceMoved || summary.sha256 !== rendered.sha256 || summary.bytes !== rendered.bytes) return null;
  const envelope = envelopeWith(source, appendedEnvelope, fork);
  if (envelope === null) return null;
  const after = checkUnchanged(path, before, summary.bytes);
  const rows = scanRows(path, state, { bytes: summary.bytes, recordCount: summary.recordCount, unterminatedFinalLine: summary.unterminatedFinalLine, mtimeMs: after.mtimeMs });
  return analysisOf(path, { ...rows, ...envelope });
}

/**
 * `report` of the candidate at `path` when this process rendered it and it is still what was
 * written; null otherwise (the caller reads it in full). A reader error is null too: the full read
 * meets it again and reports it as it always does.
 */
export async function verifyRendered<T>(path: string, limits: ReadLimits, report: (a: Analysis) => T): Promise<T | null> {
  const rendered = takeRendered(path);
  if (rendered === null) return null;
  const analysis = await analyseRendered(path, limits, rendered).catch(() => null);
  countRenderedVerify(analysis !== null);
  return analysis === null ? null : report(analysis);
}
