/**
 * provider/render: the candidate transcript, written only into the staging file the host created.
 *
 * A streaming read of the source, bound to `source_sha256`. Each line is written as it passes
 * (render-lines.ts): an untouched line byte for byte, an elided line with only its payload text and
 * the text of its `toolUseResult` UI copy replaced, and for a fork only the `sessionId` values
 * changed. Only the lines render edits are parsed; every other line is read as a skeleton for the
 * uuid tree. A large source is rendered on several threads (parallel-render.ts) with the same
 * bytes; the source this process has just parsed is copied from that parse's tree without reading
 * its records again (render-from-parse.ts). At the end the tree decides: every elided line must be a live elidable tool result, the
 * file a resumable session with one reading; the state card hangs under the live leaf, copying its
 * envelope from two lines read back by offset. A refusal stops the render with the staging file
 * incomplete; the host discards it.
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import type { ProviderRenderParams, ProviderRenderResult } from '../../../schemas/generated/types.js';
import { endsWithCrlf, readJsonl } from '../../../sdk/jsonl.js';
import { invalidInput, sourceChanged } from '../../../sdk/serve.js';
import { StagingWriter } from '../../../sdk/staging.js';
import { renderStateCard } from '../../../sdk/state-card.js';
import { absolutePath, analysisOf, type Analysis } from './analysis.js';
import { cardRecords } from './card-record.js';
import { parseLine } from './elide-line.js';
import { withInputErrors } from './errors.js';
import { jsonlOptions, readLimits, type ReadLimits } from './limits.js';
import { renderInParallel, type RenderedSource } from './parallel-render.js';
import { splitPoints } from './parallel-scan.js';
import type { RecordTable } from './record-table.js';
import type { RawRecord } from './records.js';
import { checkRenderable } from './render-checks.js';
import { renderFromParse } from './render-from-parse.js';
import { LineRenderer } from './render-lines.js';
import { readPlan, type RenderPlan } from './render-plan.js';
import { rememberRendered } from './rendered-files.js';
import { countParallelScan, parallelPlan } from './scan-pool.js';
import { newScanState, scanRows } from './scan-state.js';

export interface RenderHooks {
  /** Called after each line is written; tests change the source here. */
  afterLine?: (line: number) => void;
}

/** The whole source rendered on this thread, line by line as the reader hands lines out. */
async function renderInOnePass(path: string, plan: RenderPlan, limits: ReadLimits, writer: StagingWriter, hooks: RenderHooks): Promise<RenderedSource> {
  const state = newScanState();
  const renderer = new LineRenderer(plan, limits, state);
  const summary = await readJsonl(path, jsonlOptions(limits), (rec) => {
    // A card is appended after the last line, so that line must end with a newline.
    renderer.render(rec.bytes, rec.index, rec.index, writer, rec.terminated || plan.digest !== null);
    hooks.afterLine?.(rec.index);
  });
  const { sha256, ...file } = summary;
  return { state, file, elided: renderer.elided, sha256: () => Promise.resolve(sha256) };
}

/**
 * Workers hold their ranges' output in memory until it is written, so past this size (reachable
 * only with a raised GOBSTOPPER_MAX_TRANSCRIPT_BYTES) a render streams on one thread instead.
 */
const MAX_PARALLEL_RENDER_BYTES = 1024 * 1024 * 1024;

/** On several threads when the file is large and the provider may use them (null: not tried or not finished). */
async function renderInThreads(path: string, plan: RenderPlan, limits: ReadLimits, before: Stats, writer: StagingWriter, hooks: RenderHooks): Promise<RenderedSource | null> {
  // A file over the byte limit is refused by the one pass before any line is read.
  const pp = hooks.afterLine || before.size > limits.maxBytes || before.size > MAX_PARALLEL_RENDER_BYTES ? null : parallelPlan(before);
  const splits = pp ? splitPoints(path, before.size, pp) : [];
  if (!pp || splits.length === 0) return null;
  const rendered = await renderInParallel(path, plan, limits, before, pp, splits, writer);
  if (!rendered) countParallelScan(true);
  return rendered;
}

type Concluded = { appended: number } | { error: unknown };

/**
 * What the tree says of a rendered source: the checks every render passes and the state card
 * appended. An error is kept, to be thrown after the source's hash is checked, as one pass would.
 */
function conclude(path: string, before: Stats, rendered: RenderedSource, plan: RenderPlan, writer: StagingWriter): Concluded {
  try {
    const a = analysisOf(path, scanRows(path, rendered.state, { ...rendered.file, mtimeMs: before.mtimeMs }));
    checkRenderable(path, a, plan);
    return { appended: plan.digest ? appendCard(path, before, a, plan, writer) : 0 };
  } catch (error) {
    return { error };
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Bytes appended or rewritten after the reader passed them are not in the hash: the file itself must be as it was. */
function requireUnchanged(path: string, before: Stats, bytesRead: number): void {
  const after = statOrNull(path);
  if (after === null || !sameFile(before, after) || after.size !== bytesRead) throw sourceChanged(`${path} changed while the candidate was written`);
}

/** Byte offset of `line`: every line before it is followed by a newline. */
function lineOffset(table: RecordTable, line: number): number {
  let offset = 0;
  for (let i = 0; i < line; i += 1) offset += table.bytes[i]! + 1;
  return offset;
}

/**
 * Lines `lines` of the source, read back by offset and parsed, while the file is still the one the
 * pass hashed (same identity, size and time); null for a line that does not parse.
 */
function readBack(path: string, before: Stats, table: RecordTable, lines: number[]): Map<number, RawRecord | null> {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const out = new Map<number, RawRecord | null>();
    for (const line of lines) {
      if (line < 0 || out.has(line)) continue;
      const length = table.bytes[line]!;
      const offset = lineOffset(table, line);
      const buf = Buffer.alloc(length);
      let got = 0;
      while (got < length) {
        const n = readSync(fd, buf, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      out.set(line, got === length ? parseLine(buf.toString('utf8')) : null);
    }
    if (!sameFile(before, fstatSync(fd))) throw sourceChanged(`${path} changed while the candidate was written`);
    return out;
  } finally {
    closeSync(fd);
  }
}

function appendCard(path: string, before: Stats, a: Analysis, plan: RenderPlan, writer: StagingWriter): number {
  const lastLine = a.scan.recordCount - 1;
  if (a.scan.problems.some((p) => p.line === lastLine && p.state === 'invalid_json')) {
    throw invalidInput(`${path} ends with a torn record (a write in progress?); a state card cannot be appended after it`);
  }
  const table = a.scan.table;
  const leafLine = a.branch.leafLine;
  const promptLine = a.branch.path.find((line) => table.kind(line) === 'user') ?? -1;
  const back = readBack(path, before, table, [leafLine, promptLine]);
  const leaf = back.get(leafLine) ?? null;
  // The file is as it was (readBack checked); the skeleton read steps over what JSON.parse refuses.
  if (leafLine >= 0 && leaf === null) throw invalidInput(`${path}: line ${leafLine + 1}, the live leaf a state card would follow, is not valid JSON`);
  if (leafLine >= 0 && leaf!.uuid !== table.uuid[leafLine]) throw sourceChanged(`${path} changed while the candidate was written`);
  const records = cardRecords({
    text: renderStateCard(plan.digest!),
    parentUuid: leafLine >= 0 ? table.uuid[leafLine] ?? null : null,
    leaf,
    prompt: back.get(promptLine) ?? null,
    sessionId: plan.newSessionId ?? (typeof leaf?.sessionId === 'string' ? leaf.sessionId : a.scan.sessionId),
    now: plan.now,
    // The scan's uuid index already holds every uuid in the file.
    isTaken: (uuid) => a.scan.uuidLine.get(uuid) !== undefined,
  });
  // Appended lines follow the file's own line ending, as every copied line keeps its own.
  const end = endsWithCrlf(path, before.size) ? '\r' : '';
  writer.writeRecord(JSON.stringify(records.card) + end);
  writer.writeRecord(JSON.stringify(records.lastPrompt) + end);
  return 2;
}

export async function renderCandidate(params: ProviderRenderParams, hooks: RenderHooks = {}): Promise<ProviderRenderResult> {
  const path = absolutePath(params.path);
  const plan = readPlan(params);
  return withInputErrors(path, async () => {
    const limits = readLimits({});
    const before = statSync(path);
    let writer: StagingWriter;
    try {
      writer = new StagingWriter(params.staging_path);
    } catch (error) {
      throw invalidInput(`staging path refused: ${(error as Error).message}`);
    }
    try {
      const reused = await renderFromParse(path, params.source_sha256, plan, limits, before, writer, hooks.afterLine);
      if (reused) {
        requireUnchanged(path, before, reused.bytes);
        const appended = plan.digest ? appendCard(path, before, reused.analysis, plan, writer) : 0;
        const done = writer.finish();
        // A verify compares the copied lines with the source's: those this render kept, or for a
        // fork those of the file it read. Without them, a verify reads in full.
        const fork = plan.newSessionId !== null;
        if (fork || reused.sourceLines !== null) {
          rememberRendered(absolutePath(params.staging_path), {
            sha256: done.output_sha256,
            bytes: done.bytes,
            source: reused.analysis,
            sourceLines: fork ? null : reused.sourceLines,
            sourceFile: fork ? { path, identity: before } : null,
            limits,
            edited: reused.edited,
            newSessionId: plan.newSessionId,
            forkSpans: reused.forkSpans,
          });
        }
        return { ...done, elided_records: reused.elided, appended_records: appended };
      }
      // Rendered on threads, the rows are checked while the source is still being hashed.
      let rendered = await renderInThreads(path, plan, limits, before, writer, hooks);
      let concluded = rendered ? conclude(path, before, rendered, plan, writer) : null;
      let sha256 = rendered ? await rendered.sha256() : null;
      if (rendered) countParallelScan(sha256 === null);
      if (!rendered || sha256 === null) {
        writer.reset();
        rendered = await renderInOnePass(path, plan, limits, writer, hooks);
        sha256 = await rendered.sha256();
        concluded = null;
      }
      if (sha256 !== params.source_sha256) throw sourceChanged(`${path} changed since it was hashed`);
      requireUnchanged(path, before, rendered.file.bytes);
      concluded ??= conclude(path, before, rendered, plan, writer);
      if ('error' in concluded) throw concluded.error;
      const done = writer.finish();
      return { ...done, elided_records: rendered.elided, appended_records: concluded.appended };
    } catch (error) {
      writer.abort();
      throw error;
    }
  });
}
