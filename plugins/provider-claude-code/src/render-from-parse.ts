/**
 * A render that starts from the analysis of a parse of the same bytes (parsed-source.ts) instead of
 * reading every record again: the tree, the target checks and the state card need nothing the parse
 * did not already find. Lines are copied as they are; only elide targets are parsed (once per kept
 * analysis: later renders reuse their payload parts) and edited, with the same edit as always
 * (elide-line.ts). For a fork every other line's top level is walked for the sessionId values to
 * rewrite, but no row of the tree is built again.
 *
 * The copy is hashed as it is read. Whatever is not exactly the parsed file (another hash, a line
 * of another length or read another way, a reader error, a check the analysis refuses) empties the
 * staging file and returns null, and the caller renders in full, which reports the problem exactly
 * as always. A render that does not fork keeps the lines it read and hashed, and the next such
 * render of the unchanged file copies them instead of reading it again (source-lines.ts). A fork's
 * render notes where it wrote the fork's id into each line it copied, for the verify of the fork
 * (verify-rendered.ts).
 */
import type { Stats } from 'node:fs';
import { JsonlInputError, JsonlLimitError, readJsonl, type JsonlRecord } from '../../../sdk/jsonl.js';
import type { StagingWriter } from '../../../sdk/staging.js';
import type { Analysis } from './analysis.js';
import { ForkSpans } from './fork-spans.js';
import { editLine, newLineAnatomy, parseLine, recordSessionIdSpans, type LineAnatomy } from './elide-line.js';
import { jsonlOptions, type ReadLimits } from './limits.js';
import { countParsedSource, parsedSource } from './parsed-source.js';
import { eligibleParts, shapeOf, stringPartShape, type PartShape } from './payload.js';
import { checkRenderable } from './render-checks.js';
import { sessionIdJson, writeUnedited } from './render-lines.js';
import type { RecordTable } from './record-table.js';
import type { RenderPlan } from './render-plan.js';
import { sessionKind } from './session-kind.js';
import { keepSourceLines, MAX_KEPT_SOURCE_BYTES, sourceLinesOf } from './source-lines.js';
import { SkeletonReader } from './skeleton.js';
import { readTreeRecord, treeSessionIdSpans } from './tree-line.js';

export interface RenderedFromParse {
  analysis: Analysis;
  bytes: number;
  elided: number;
  /** The source lines written through an edit (elide targets); every other line was copied as it is. */
  edited: Set<number>;
  /** The source's lines as read and hashed, when this render kept or took them (source-lines.ts). */
  sourceLines: readonly Buffer[] | null;
  /** For a fork: where each copied line's sessionId values were replaced. */
  forkSpans: ForkSpans | null;
}

/**
 * The payload parts of the elide targets earlier renders of a kept analysis's bytes parsed: `eval`
 * renders one candidate per strategy from the same source, and most elide the same lines. Learned
 * only from a render whose copy then hashed to the analysis; used only in a copy that is hashed
 * too, so parts used for a line whose bytes changed go into an output that is thrown away.
 */
const knownParts = new WeakMap<Analysis, Map<number, readonly PartShape[]>>();
/**
 * Where earlier renders of a kept analysis's bytes found what they replaced in each elide target
 * (elide-line.ts LineAnatomy), kept on the same terms as the parts: learned only from a render whose
 * copy then hashed to the analysis (or was copied from lines that did), and handed to a render as a
 * copy, so what a render of other bytes adds is dropped with its output.
 */
const knownAnatomy = new WeakMap<Analysis, Map<number, LineAnatomy>>();

function copyOf(a: LineAnatomy): LineAnatomy {
  return { top: a.top, valueSpans: new Map(a.valueSpans), uiStrings: a.uiStrings, uiTexts: new Map(a.uiTexts) };
}

const partCounts = { parsed: 0, reused: 0, fromParse: 0 };

/**
 * Elide targets whose parts renders from a parse parsed, those they took from an earlier render,
 * and those the parse itself described (one plain-string part: RecordTable.stringPayloadBlock).
 */
export function targetPartsCounts(): { parsed: number; reused: number; fromParse: number } {
  return { ...partCounts };
}

/**
 * The parts of row `row` as the parse measured them, when that is one plain-string payload: the
 * same bytes were parsed into the analysis, and a copy whose bytes differ is thrown away.
 */
function partsFromParse(table: RecordTable, row: number): readonly PartShape[] | undefined {
  const block = table.stringPayloadBlock[row]!;
  if (block === 0) return undefined;
  return [stringPartShape(block - 1, table.elidableBytes[row]!)];
}

/** Thrown from inside the read to stop it at the first line that is not the parsed one. */
class NotTheParsedFile extends Error {}

/** An error of the source's reading (it vanished, became unreadable), not of the staging file's writing. */
function isReadError(error: unknown): boolean {
  const syscall = (error as { syscall?: unknown } | null)?.syscall;
  return syscall === 'open' || syscall === 'read' || syscall === 'fstat';
}

export async function renderFromParse(
  path: string,
  sourceSha256: string,
  plan: RenderPlan,
  limits: ReadLimits,
  before: Stats,
  writer: StagingWriter,
  afterLine?: (line: number) => void,
): Promise<RenderedFromParse | null> {
  const parsed = parsedSource(sourceSha256, before.size, limits);
  if (parsed === null) return null;
  // The kind depends on where the file lies (a copy may lie elsewhere); the rest on its bytes alone.
  const analysis: Analysis = { ...parsed, kind: sessionKind(path, { sidechainOnly: parsed.branch.sidechainOnly, versionAnomaly: parsed.scan.versionAnomaly }) };
  try {
    checkRenderable(path, analysis, plan);
  } catch {
    countParsedSource(false);
    return null;
  }
  const table = analysis.scan.table;
  const fork = plan.newSessionId;
  const idJson = sessionIdJson(fork);
  const skeletons = new SkeletonReader();
  let elided = 0;
  const edited = new Set<number>();
  const known = knownParts.get(parsed);
  const learned = new Map<number, readonly PartShape[]>();
  const anatomies = knownAnatomy.get(parsed);
  const usedAnatomy = new Map<number, LineAnatomy>();

  /** Writes what the candidate holds for one line; throws NotTheParsedFile at a line unlike the parsed one. */
  const copyLine = (rec: JsonlRecord): void => {
    if (rec.index >= table.length || rec.bytes.length !== table.bytes[rec.index]) throw new NotTheParsedFile();
    // A card is appended after the last line, so that line must end with a newline.
    const newline = rec.terminated || plan.digest !== null;
    const target = plan.elide.get(rec.index);
    if (target !== undefined) {
      let parts = known?.get(rec.index);
      if (parts !== undefined) partCounts.reused += 1;
      else if ((parts = partsFromParse(table, rec.index)) !== undefined) partCounts.fromParse += 1;
      else {
        const record = parseLine(rec.bytes.toString('utf8'));
        if (record === null) throw new NotTheParsedFile();
        parts = eligibleParts(record).map(shapeOf);
        learned.set(rec.index, parts);
        partCounts.parsed += 1;
      }
      const seen = anatomies?.get(rec.index);
      const anatomy = seen === undefined ? newLineAnatomy() : copyOf(seen);
      usedAnatomy.set(rec.index, anatomy);
      const edit = editLine(rec.bytes, parts, target, fork, anatomy);
      if (edit.elided) elided += 1;
      edited.add(rec.index);
      writer.writeRecordParts(edit.pieces, newline);
      return;
    }
    if (table.state(rec.index) !== 'ok') {
      // A line parse could not read may be one the skeleton reads (it does not check what it
      // steps over, such as a malformed number): then the full render's tree differs.
      const read = readTreeRecord(skeletons, rec.bytes, limits);
      if (('state' in read ? read.state : 'ok') !== table.state(rec.index)) throw new NotTheParsedFile();
      writeUnedited(writer, rec.bytes, treeSessionIdSpans(read), fork, idJson, newline);
      return;
    }
    if (fork === null) {
      writer.writeRecord(rec.bytes, newline);
      return;
    }
    // A line the parse read as a record, the skeleton reads as the same record (skeleton.test.ts
    // pins that the two build the same rows), so only its sessionId values are looked for. A line
    // that walk cannot follow is one the skeleton hands to JSON.parse: a full render decides.
    const spans = recordSessionIdSpans(rec.bytes);
    if (spans === null) throw new NotTheParsedFile();
    forkSpans?.set(rec.index, spans);
    writeUnedited(writer, rec.bytes, spans, fork, idJson, newline);
  };

  let sourceLines: readonly Buffer[] | null = null;
  const forkSpans = fork !== null ? new ForkSpans(table.length) : null;
  const copyAll = async (): Promise<{ sha256: string; bytes: number; recordCount: number } | null> => {
    const lines = fork === null ? sourceLinesOf(parsed, path, before) : null;
    if (lines !== null) {
      sourceLines = lines.lines;
      // The bytes were hashed when they were read, and the file has not been written since.
      let bytes = 0;
      for (const [index, line] of lines.lines.entries()) {
        const terminated = index < lines.lines.length - 1 || lines.lastTerminated;
        copyLine({ index, offset: bytes, bytes: line, terminated });
        bytes += line.length + (terminated ? 1 : 0);
        afterLine?.(index);
      }
      return { sha256: sourceSha256, bytes, recordCount: lines.lines.length };
    }
    const keep: Buffer[] | null = fork === null && before.size <= MAX_KEPT_SOURCE_BYTES ? [] : null;
    let lastTerminated = true;
    const summary = await readJsonl(path, jsonlOptions(limits), (rec) => {
      copyLine(rec);
      if (keep !== null) {
        keep.push(Buffer.from(rec.bytes));
        lastTerminated = rec.terminated;
      }
      afterLine?.(rec.index);
    });
    if (keep !== null && summary.sha256 === sourceSha256) {
      keepSourceLines(parsed, { path, stat: before, lines: keep, lastTerminated });
      sourceLines = keep;
    }
    return summary;
  };

  const summary = await copyAll().catch((error: unknown) => {
    // A line unlike the parsed one, or a refusal of the reader's own: the full render reads the
    // file again and reports it as it always does. Anything else (a failed write) is thrown.
    if (error instanceof NotTheParsedFile || error instanceof JsonlLimitError || error instanceof JsonlInputError || isReadError(error)) return null;
    throw error;
  });
  if (summary === null || summary.sha256 !== sourceSha256 || summary.recordCount !== table.length) {
    writer.reset();
    countParsedSource(false);
    return null;
  }
  if (learned.size > 0) {
    const parts = known ?? new Map<number, readonly PartShape[]>();
    for (const [line, shapes] of learned) parts.set(line, shapes);
    knownParts.set(parsed, parts);
  }
  if (usedAnatomy.size > 0) {
    const kept = anatomies ?? new Map<number, LineAnatomy>();
    for (const [line, anatomy] of usedAnatomy) kept.set(line, anatomy);
    knownAnatomy.set(parsed, kept);
  }
  countParsedSource(true);
  return { analysis, bytes: summary.bytes, elided, edited, sourceLines, forkSpans };
}
