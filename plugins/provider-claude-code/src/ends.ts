/**
 * Cheap reads for discovery, identify and usage: a file's head and tail, never the middle.
 *
 * A file up to 64 KiB is read whole and analysed exactly like a parse. A larger one costs a 16 KiB
 * tail (512 KiB when the branch leaves that window) plus a 4 KiB head, and only the records on the
 * way from the leaf to the last usage report are parsed (tail-usage.ts): discovery sizes a thousand
 * sessions in about twice the time it takes to stat them and read 512 KiB of each. Only a session
 * whose windows show no usable report is read further (FALLBACK_BYTES).
 */
import { closeSync, fstatSync, openSync, readSync, constants as fsConstants } from 'node:fs';
import type { SessionKind, UsageSample } from '../../../schemas/generated/types.js';
import { CHARS_PER_TOKEN, estimateTokens } from '../../../sdk/tokens.js';
import { computeLiveBranch, isLive } from './branch.js';
import { maxRecordBytes } from './limits.js';
import { lineContext } from './record-reader.js';
import { FLAG_COUNTED } from './record-table.js';
import { EnvelopeTracker } from './envelope.js';
import { readLine, type LineProblem } from './scan.js';
import { sessionKind } from './session-kind.js';
import { TailWindow } from './tail-window.js';
import { tailUsage } from './tail-usage.js';
import { usageSample } from './usage.js';

export const KIB = 1024;
/** Files up to this size are read whole: exact (composites, sub-agents and all), and still cheap. */
export const WHOLE_FILE_BYTES = 64 * KIB;
/**
 * The first tail window. In real sessions the last usage report sits within 5 KB of the end (the
 * final reply and a few bookkeeping records after it).
 */
export const FIRST_TAIL_BYTES = 16 * KIB;
/** The usage window the original reads (dialects.md §1.1), when the first one is not enough. */
export const TAIL_BYTES = 512 * KIB;
/** Enough for the first records: an old-style summary title, an early ai-title. */
export const HEAD_BYTES = 4 * KIB;
/**
 * When the usual windows show no usable usage report (the last line is one huge tool result, or the
 * last report is malformed), a file up to this size is read whole, so discovery sees what a parse
 * sees; a larger one gets tails growing fourfold up to this size. Sessions that report usage never
 * come here.
 */
export const FALLBACK_BYTES = 32 * 1024 * KIB;

export interface EndsAnalysis {
  size: number;
  mtimeMs: number;
  bytesRead: number;
  wholeFile: boolean;
  kind: SessionKind;
  sessionId: string | null;
  cwd: string | null;
  title: string | null;
  claudeRecords: number;
  foreignRecords: number;
  usage: UsageSample;
  /**
   * An estimate from the bytes read, for when usage is not reported; null when the tail read held
   * no whole line (one record longer than the read), which says nothing of the context's size.
   */
  estimatedContextTokens: number | null;
}

function readAt(fd: number, start: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

const TITLE_MARKERS = [Buffer.from('"summary"'), Buffer.from('"ai-title"'), Buffer.from('"custom-title"')];

type Facts = Omit<EndsAnalysis, 'size' | 'mtimeMs' | 'bytesRead'>;

/** A small file, exactly: every line read into the table, the full live-branch rules. */
function analyseWhole(path: string, buf: Buffer): Facts {
  const envelope = new EnvelopeTracker();
  const limits = { maxBytes: Number.MAX_SAFE_INTEGER, maxRecords: Number.MAX_SAFE_INTEGER, maxRecordBytes: maxRecordBytes() };
  const problems: LineProblem[] = [];
  const ctx = lineContext(64);
  const win = new TailWindow(buf, false);
  for (let k = 0; k < win.length; k += 1) {
    readLine(win.buf.subarray(win.start(k), win.end(k)), k, limits, ctx, envelope, problems, false);
  }
  const t = ctx.table;
  const branch = computeLiveBranch(t, { uuidLine: ctx.uuidLine, duplicateUuids: ctx.duplicateUuids });
  const live = (i: number) => isLive(branch, t, i);
  const usage = usageSample({
    table: t,
    isLive: live,
    startsAtCompaction: branch.cutLine >= 0,
    wholeFile: true,
    brokenAncestry: branch.danglingLine >= 0 || branch.pathCycleLine >= 0,
    fallbackToLastReport: false,
  });
  let estimated = 0;
  for (let i = 0; i < t.length; i += 1) if (t.has(i, FLAG_COUNTED) && live(i)) estimated += estimateTokens(t.sentBytes[i]!);
  return {
    wholeFile: true,
    kind: sessionKind(path, { sidechainOnly: branch.sidechainOnly, versionAnomaly: envelope.versionAnomaly }),
    sessionId: envelope.sessionId,
    cwd: envelope.cwd,
    title: envelope.title,
    claudeRecords: envelope.claudeRecords,
    foreignRecords: envelope.foreignRecords,
    usage,
    estimatedContextTokens: estimated,
  };
}

/** A larger file from its ends: the head's first records and the tail's branch. */
function analyseEnds(path: string, head: Buffer, tail: Buffer): { facts: Facts; needsMore: boolean } {
  const envelope = new EnvelopeTracker();
  const headWin = new TailWindow(head, false);
  // The head's last line may be cut by the window: only its complete lines count. The first
  // record says who and where; a title is taken from the head only (searching the tail for one
  // costs more than the rest of discovery).
  const complete = headWin.length - 1;
  for (let k = 0; k < complete; k += 1) {
    const line = head.subarray(headWin.start(k), headWin.end(k));
    if (k > 0 && !TITLE_MARKERS.some((m) => line.indexOf(m) !== -1)) continue;
    const r = headWin.record(k);
    if (r) envelope.see(r);
  }
  const win = new TailWindow(tail, true);
  const result = tailUsage(win, envelope, false);
  // A tail that is all one line (a record over the size limit) shows no record: the head's own
  // records still say whose the file is, so reading it reports that record instead of "not a transcript".
  if (envelope.claudeRecords === 0) {
    for (let k = 1; k < complete; k += 1) {
      const r = headWin.record(k);
      if (r) envelope.see(r);
    }
  }
  const facts: Facts = {
    wholeFile: false,
    kind: sessionKind(path, { sidechainOnly: result.sidechainOnly, versionAnomaly: envelope.versionAnomaly }),
    sessionId: envelope.sessionId,
    cwd: envelope.cwd,
    title: envelope.title,
    claudeRecords: envelope.claudeRecords,
    foreignRecords: envelope.foreignRecords,
    usage: result.usage,
    estimatedContextTokens: win.length > 0 ? Math.ceil(win.lineBytes / CHARS_PER_TOKEN) : null,
  };
  return { facts, needsMore: result.needsMore };
}

/** The ends showed a Claude session and its reported (or reset) context: nothing more to read. */
function settled(facts: Facts): boolean {
  return facts.claudeRecords > 0 && (facts.usage.context_state === 'reported' || facts.usage.context_state === 'reset');
}

/** Reads `path`'s ends (or all of a small file) and says what they show. */
export function analyseFileEnds(path: string, options: { head: boolean; maxTailBytes?: number } = { head: true }): EndsAnalysis {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EISDIR' });
    const stamp = { size: st.size, mtimeMs: st.mtimeMs };
    const maxTail = options.maxTailBytes ?? TAIL_BYTES;
    if (st.size <= Math.min(WHOLE_FILE_BYTES, maxTail)) {
      const all = readAt(fd, 0, st.size);
      return { ...stamp, bytesRead: all.length, ...analyseWhole(path, all) };
    }
    const head = options.head ? readAt(fd, 0, HEAD_BYTES) : Buffer.alloc(0);
    let bytesRead = head.length;
    let window = Math.min(FIRST_TAIL_BYTES, maxTail, st.size);
    for (;;) {
      const tail = readAt(fd, st.size - window, window);
      bytesRead += tail.length;
      const { facts, needsMore } = analyseEnds(path, head, tail);
      const next = Math.min(maxTail, st.size);
      if (needsMore && window < next) {
        window = next;
        continue;
      }
      if (settled(facts) || window >= Math.min(FALLBACK_BYTES, st.size)) return { ...stamp, bytesRead, ...facts };
      if (st.size <= FALLBACK_BYTES) {
        const all = readAt(fd, 0, st.size);
        return { ...stamp, bytesRead: bytesRead + all.length, ...analyseWhole(path, all) };
      }
      window = Math.min(window * 4, FALLBACK_BYTES);
    }
  } finally {
    closeSync(fd);
  }
}
