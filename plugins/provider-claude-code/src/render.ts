/**
 * provider/render: the candidate transcript, written only into the staging file the host created.
 *
 * One streaming read of the source, bound to `source_sha256`. Each line is written as it passes:
 * an untouched line byte for byte, an elided line with only its payload text and the text of its
 * `toolUseResult` UI copy replaced, and for a fork only the `sessionId` values changed. Only the
 * lines render edits are parsed; every other line is read as a skeleton (skeleton.ts) for the uuid
 * tree. At the end the tree decides: every elided line must be a live elidable tool result, the
 * file a resumable session with one reading; the state card hangs under the live leaf, copying its
 * envelope from two lines read back by offset. A refusal stops the render with the staging file
 * incomplete; the host discards it.
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import type { ProviderRenderParams, ProviderRenderResult } from '../../../schemas/generated/types.js';
import { readJsonl, type JsonlRecord } from '../../../sdk/jsonl.js';
import { invalidInput, sourceChanged } from '../../../sdk/serve.js';
import { StagingWriter } from '../../../sdk/staging.js';
import { renderStateCard } from '../../../sdk/state-card.js';
import { isElidable } from '../../../sdk/tokens.js';
import { absolutePath, requireClaude, type Analysis } from './analysis.js';
import { computeLiveBranch } from './branch.js';
import { cardRecords } from './card-record.js';
import { editLine, parseLine, rewriteSessionId, sessionIdRewriteParts } from './elide-line.js';
import { eligibleParts } from './payload.js';
import { EnvelopeTracker } from './envelope.js';
import { withInputErrors } from './errors.js';
import { toItem } from './items.js';
import { readLimits, type ReadLimits } from './limits.js';
import { refuseAmbiguous } from './parse.js';
import { lineContext, type LineContext } from './record-reader.js';
import type { RawRecord } from './records.js';
import { readPlan, type RenderPlan } from './render-plan.js';
import { readLine, type LineProblem, type ParsedRecord, type ScanResult } from './scan.js';
import { sessionKind } from './session-kind.js';
import { SkeletonReader } from './skeleton.js';
import { indexUuids } from './uuid-index.js';
import { readTreeLine } from './tree-line.js';

export interface RenderHooks {
  /** Called after each line is written; tests change the source here. */
  afterLine?: (line: number) => void;
}

/** The reading and writing of one pass, line by line. */
class RenderPass {
  /** uuids are indexed once every line is read (indexUuids), from hashes taken as lines pass. */
  readonly ctx: LineContext = Object.assign(lineContext(), { notesAsRead: false });
  readonly envelope = new EnvelopeTracker();
  readonly problems: LineProblem[] = [];
  private readonly skeletons = new SkeletonReader();
  /** Byte offset of each line, to read the card's two envelope lines back. */
  readonly offsets: number[] = [];
  elided = 0;
  private readonly idJson: Buffer | null;

  constructor(
    private readonly plan: RenderPlan,
    private readonly limits: ReadLimits,
    private readonly writer: StagingWriter,
  ) {
    this.idJson = plan.newSessionId === null ? null : Buffer.from(JSON.stringify(plan.newSessionId), 'utf8');
  }

  readonly onLine = (rec: JsonlRecord): void => {
    this.offsets.push(rec.offset);
    // A card is appended after the last line, so that line must end with a newline.
    const newline = rec.terminated || this.plan.digest !== null;
    if (this.plan.elide.has(rec.index)) {
      this.writer.writeRecord(this.editedLine(rec), newline);
      return;
    }
    const out = this.copiedLine(rec);
    if (Array.isArray(out)) this.writer.writeRecordParts(out, newline);
    else this.writer.writeRecord(out, newline);
  };

  /**
   * An elide target: parsed once (strict, as parse reads it), its row filled with what the tree and
   * the target check need, its payload replaced.
   */
  private editedLine(rec: JsonlRecord): Buffer | string {
    const parsed: ParsedRecord = { text: null, record: null };
    const row = readLine(rec.bytes, rec.index, this.limits, this.ctx, this.envelope, this.problems, true, false, parsed);
    if (parsed.record === null || parsed.text === null) return rec.bytes;
    const parts = eligibleParts(parsed.record);
    const table = this.ctx.table;
    for (const part of parts) table.elidableBytes[row] += part.bytes;
    table.elidableParts[row] = parts.length;
    const edited = editLine(parsed.text, parts, this.plan.elide.get(rec.index)!, this.plan.newSessionId);
    if (edited.elided) this.elided += 1;
    return edited.text === parsed.text ? rec.bytes : edited.text;
  }

  /** Any other line: its skeleton for the tree; its bytes as they are, or with the fork's id. */
  private copiedLine(rec: JsonlRecord): Buffer | string | Buffer[] {
    const line = readTreeLine(this.skeletons, rec.bytes, rec.index, this.limits, this.ctx, this.envelope, this.problems, true);
    if (this.idJson === null) return rec.bytes;
    if (line.sessionIdSpans === null) return rewriteSessionId(rec.bytes.toString('utf8'), this.plan.newSessionId!);
    return line.sessionIdSpans.length === 0 ? rec.bytes : sessionIdRewriteParts(rec.bytes, line.sessionIdSpans, this.idJson);
  }

  analysis(path: string, summary: { sha256: string; bytes: number; recordCount: number; unterminatedFinalLine: boolean }, stat: Stats): Analysis {
    const { ctx, envelope } = this;
    const { index, duplicates } = indexUuids(ctx.table);
    const scan: ScanResult = {
      path,
      table: ctx.table,
      uuidLine: index,
      duplicateUuids: duplicates,
      ...summary,
      mtimeMs: stat.mtimeMs,
      recordTypes: {},
      problems: this.problems,
      ...envelope.report(),
    };
    const branch = computeLiveBranch(ctx.table, { uuidLine: index, duplicateUuids: duplicates });
    return { scan, branch, kind: sessionKind(path, { sidechainOnly: branch.sidechainOnly, versionAnomaly: envelope.versionAnomaly }) };
  }
}

/** Every elide target must be a live tool result with an elidable payload: nothing else is edited. */
function checkTargets(a: Analysis, plan: RenderPlan): void {
  for (const line of plan.elide.keys()) {
    if (!Number.isSafeInteger(line) || line < 0 || line >= a.scan.table.length) throw invalidInput(`an elide edit targets line ${line + 1}, past the end of the transcript`);
    if (!isElidable(toItem(a.scan.table, line, a.branch))) throw invalidInput(`line ${line + 1} is not an elidable tool result on the live branch`);
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

/**
 * Lines `lines` of the source, read back by offset and parsed, while the file is still the one the
 * pass hashed (same identity, size and time); null for a line that does not parse.
 */
function readBack(path: string, before: Stats, pass: RenderPass, lines: number[]): Map<number, RawRecord | null> {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const out = new Map<number, RawRecord | null>();
    for (const line of lines) {
      if (line < 0 || out.has(line)) continue;
      const length = pass.ctx.table.bytes[line]!;
      const buf = Buffer.alloc(length);
      let got = 0;
      while (got < length) {
        const n = readSync(fd, buf, got, length - got, pass.offsets[line]! + got);
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

function appendCard(path: string, before: Stats, pass: RenderPass, a: Analysis, plan: RenderPlan, writer: StagingWriter): number {
  const lastLine = a.scan.recordCount - 1;
  if (a.scan.problems.some((p) => p.line === lastLine && p.state === 'invalid_json')) {
    throw invalidInput(`${path} ends with a torn record (a write in progress?); a state card cannot be appended after it`);
  }
  const table = a.scan.table;
  const leafLine = a.branch.leafLine;
  const promptLine = a.branch.path.find((line) => table.kind(line) === 'user') ?? -1;
  const back = readBack(path, before, pass, [leafLine, promptLine]);
  const leaf = back.get(leafLine) ?? null;
  if (leafLine >= 0 && (leaf === null || leaf.uuid !== table.uuid[leafLine])) throw sourceChanged(`${path} changed while the candidate was written`);
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
  writer.writeRecord(JSON.stringify(records.card));
  writer.writeRecord(JSON.stringify(records.lastPrompt));
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
      const pass = new RenderPass(plan, limits, writer);
      const summary = await readJsonl(path, { maxBytes: limits.maxBytes, maxRecords: limits.maxRecords, maxLineBytes: limits.maxRecordBytes }, (rec) => {
        pass.onLine(rec);
        hooks.afterLine?.(rec.index);
      });
      if (summary.sha256 !== params.source_sha256) throw sourceChanged(`${path} changed since it was hashed`);
      // Bytes appended or rewritten after the reader passed them are not in the hash: the file itself must be as it was.
      const after = statOrNull(path);
      if (after === null || !sameFile(before, after) || after.size !== summary.bytes) throw sourceChanged(`${path} changed while the candidate was written`);
      const a = pass.analysis(path, summary, before);
      requireClaude(a.scan);
      if (a.kind !== 'session') throw invalidInput(`${path} is a ${a.kind} file, not a session the client can resume`);
      refuseAmbiguous(a);
      checkTargets(a, plan);
      const appended = plan.digest ? appendCard(path, before, pass, a, plan, writer) : 0;
      const done = writer.finish();
      return { ...done, elided_records: pass.elided, appended_records: appended };
    } catch (error) {
      writer.abort();
      throw error;
    }
  });
}
