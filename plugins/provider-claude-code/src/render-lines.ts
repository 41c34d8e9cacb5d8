/**
 * The render of one line, the same on every thread: an elide target is parsed (strict, as parse
 * reads it) and its payload replaced; any other line is read as a skeleton (skeleton.ts) for the
 * uuid tree and written as it is, or with the fork's session id. Rows go into a scan state's table,
 * so the lines of a range rendered on a worker join the others exactly as a scanned range does.
 */
import type { ByteSpan } from '../../../sdk/raw-json.js';
import { editLine, sessionIdRewriteParts, topLevelSessionIdSpans } from './elide-line.js';
import type { ReadLimits } from './limits.js';
import { eligibleParts, type PartShape } from './payload.js';
import type { RecordSink } from './record-sink.js';
import type { ElideTarget, RenderPlan } from './render-plan.js';
import { readLine, type ParsedRecord } from './scan-line.js';
import type { ScanState } from './scan-state.js';
import { SkeletonReader } from './skeleton.js';
import { readTreeLine } from './tree-line.js';

export type RenderTargets = Pick<RenderPlan, 'elide' | 'newSessionId'>;

/**
 * A line render does not edit: as it is, or for a fork with its top-level sessionId values (`spans`,
 * located by readTreeLine; null when the line had to be parsed whole) set to the fork's id.
 */
export function writeUnedited(sink: RecordSink, bytes: Buffer, spans: readonly ByteSpan[] | null, newSessionId: string | null, idJson: Buffer | null, newline: boolean): void {
  const located = newSessionId === null || idJson === null ? [] : (spans ?? topLevelSessionIdSpans(bytes) ?? []);
  if (located.length === 0) sink.writeRecord(bytes, newline);
  else sink.writeRecordParts(sessionIdRewriteParts(bytes, located, idJson!), newline);
}

/** The fork's id as the JSON bytes written in place of each sessionId value. */
export const sessionIdJson = (newSessionId: string | null): Buffer | null => (newSessionId === null ? null : Buffer.from(JSON.stringify(newSessionId), 'utf8'));

export class LineRenderer {
  /** Elide targets whose payload was replaced. */
  elided = 0;
  private readonly skeletons = new SkeletonReader();
  private readonly idJson: Buffer | null;

  constructor(
    private readonly targets: RenderTargets,
    private readonly limits: ReadLimits,
    private readonly state: ScanState,
  ) {
    this.idJson = sessionIdJson(targets.newSessionId);
  }

  /**
   * Reads file line `line` into row `index` of the state's table (they differ in a range) and
   * writes what the candidate holds for it to `sink`. Returns the row.
   */
  render(bytes: Buffer, index: number, line: number, sink: RecordSink, newline: boolean): number {
    if (this.targets.elide.has(line)) {
      const { row, pieces } = this.edited(bytes, index, line);
      sink.writeRecordParts(pieces, newline);
      return row;
    }
    const { ctx, envelope, problems } = this.state;
    const tree = readTreeLine(this.skeletons, bytes, index, this.limits, ctx, envelope, problems, true);
    writeUnedited(sink, bytes, tree.sessionIdSpans, this.targets.newSessionId, this.idJson, newline);
    return tree.row;
  }

  /** An elide target: its row filled with what the tree and the target check need, its payload replaced. */
  private edited(bytes: Buffer, index: number, line: number): { row: number; pieces: Buffer[] } {
    const { ctx, envelope, problems } = this.state;
    const parsed: ParsedRecord = { record: null };
    const row = readLine(bytes, index, this.limits, ctx, envelope, problems, true, false, parsed);
    if (parsed.record === null) return { row, pieces: [bytes] };
    const parts = eligibleParts(parsed.record);
    const table = ctx.table;
    for (const part of parts) table.elidableBytes[row] += part.bytes;
    table.elidableParts[row] = parts.length;
    // An elide target as the candidate holds it: its payload (and UI copy) replaced, or its bytes
    // as they were when no stub would make it smaller.
    const { pieces, elided } = editLine(bytes, parts, this.targets.elide.get(line)!, this.targets.newSessionId);
    if (elided) this.elided += 1;
    return { row, pieces };
  }
}
