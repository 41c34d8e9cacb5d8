/**
 * Envelope invariants the client enforces when it reloads a rollout. Paginated rollouts (0.171+,
 * `history_mode: "paginated"`) number every record: a final record without an ordinal is fatal,
 * one elsewhere is tolerated, a gap only warns. A record whose timestamp is not a string is
 * silently skipped, so a response item without one vanishes from the context.
 */
import { Code, type FindingList } from './findings.js';
import { RecordType, type Json } from './records.js';

export class EnvelopeChecker {
  /** Highest ordinal seen; the next appended record takes this + 1. */
  lastOrdinal: number | null = null;
  /** The latest well-formed record lacked an ordinal; fatal only if nothing follows it. */
  private pendingMissing: { line: number } | null = null;
  sawOrdinal = false;

  constructor(private readonly findings: FindingList) {}

  /** `paginated` is decided by the first session_meta; before it the file counts as legacy. */
  observe(line: number, type: string, hasOrdinal: boolean, ordinal: Json | undefined, timestamp: Json | undefined, paginated: boolean): void {
    this.flushPending();
    const modelVisible = type === RecordType.responseItem || type === RecordType.compacted;
    if (typeof timestamp !== 'string' && modelVisible) {
      if (paginated) this.findings.add('error', Code.missingTimestamp, `record on line ${line + 1} has no string timestamp; the client skips it, so it leaves the context`, line);
      else this.findings.add('warning', Code.missingTimestamp, `record on line ${line + 1} has no string timestamp; current clients skip such records`, line);
    }
    if (!hasOrdinal) {
      if (!paginated) return;
      if (type === RecordType.compacted) {
        this.findings.add('error', Code.compactedWithoutOrdinal, `compacted record on line ${line + 1} has no ordinal in a paginated rollout`, line);
      } else {
        this.pendingMissing = { line };
      }
      return;
    }
    this.sawOrdinal = true;
    if (typeof ordinal !== 'number' || !Number.isSafeInteger(ordinal) || ordinal < 0) {
      this.findings.add('error', Code.invalidOrdinal, `record on line ${line + 1} has an ordinal that is not a non-negative integer`, line);
      return;
    }
    const prev = this.lastOrdinal;
    if (prev !== null) {
      if (paginated && ordinal <= prev) {
        this.findings.add('error', Code.ordinalNotIncreasing, `ordinal on line ${line + 1} does not follow the previous ordinal ${prev}`, line);
      } else if (!paginated && ordinal < prev) {
        this.findings.add('warning', Code.nonMonotonicOrdinal, `ordinal on line ${line + 1} is lower than the previous ordinal ${prev}`, line);
      } else if (paginated && ordinal > prev + 1) {
        this.findings.add('warning', Code.ordinalGap, `ordinal on line ${line + 1} skips from ${prev} to ${ordinal}`, line);
      }
    }
    if (prev === null || ordinal > prev) this.lastOrdinal = ordinal;
  }

  private flushPending(): void {
    if (this.pendingMissing === null) return;
    const { line } = this.pendingMissing;
    this.findings.add('warning', Code.missingOrdinal, `record on line ${line + 1} has no ordinal in a paginated rollout`, line);
    this.pendingMissing = null;
  }

  /** End of file: a final record without an ordinal makes the client refuse the rollout. */
  finish(): void {
    if (this.pendingMissing === null) return;
    const { line } = this.pendingMissing;
    this.findings.add('error', Code.missingOrdinal, `the final record (line ${line + 1}) has no ordinal; the client refuses a paginated rollout that ends this way`, line);
    this.pendingMissing = null;
  }
}
