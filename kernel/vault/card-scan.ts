/**
 * Finding, as a source streams past to be archived, the records that may hold a state card: those
 * whose bytes contain the marker literally. Only their places are kept (record index, byte span);
 * their bytes are read back from the stored snapshot afterwards (card-index.ts), so a buffer
 * without the marker costs one search and allocates nothing, and a record spanning many buffers
 * needs none of them kept.
 */
import { STATE_CARD_MARKER } from '../../sdk/state-card.js';
import { LineCounter } from './line-count.js';

export const MARKER_BYTES = Buffer.from(STATE_CARD_MARKER, 'utf8');
/** The most of a marker that can sit at the end of one buffer with the rest in the next. */
const CARRY = MARKER_BYTES.length - 1;

/** A record that contains the marker: its index (as records.ts counts) and bytes [start, end) without the newline. */
export interface CardLine {
  recordIndex: number;
  start: number;
  end: number;
}

export class CardScanner {
  private readonly lines = new LineCounter();
  private readonly found: CardLine[] = [];
  /** The record of the latest hit while its newline has not been seen yet. */
  private open: CardLine | null = null;
  /** The stream's last CARRY bytes, and room to join them with the head of the next buffer. */
  private readonly tail = Buffer.alloc(CARRY);
  private tailLength = 0;
  private readonly seam = Buffer.alloc(2 * CARRY);

  /** Physical lines so far, counted as an index line's record_count. */
  get recordCount(): number {
    return this.lines.count;
  }

  push(data: Buffer): void {
    if (data.length === 0) return;
    const base = this.lines.bytesSeen;
    let from = 0;
    if (this.open !== null) {
      // Everything up to the first newline belongs to the record already found.
      const nl = data.indexOf(0x0a);
      if (nl !== -1) {
        this.open.end = base + nl;
        this.open = null;
        from = nl + 1;
      } else from = data.length;
    } else if (this.straddles(data)) {
      const nl = this.record(data, base, 0, this.lines.newlinesSeen);
      from = nl === -1 ? data.length : nl + 1;
    }
    if (from < data.length) {
      const hit = data.indexOf(MARKER_BYTES, from);
      if (hit !== -1) this.collect(data, base, hit);
    }
    this.keepTail(data);
    this.lines.push(data);
  }

  /** The records found, once the whole stream has been pushed. */
  finish(): CardLine[] {
    if (this.open !== null) {
      this.open.end = this.lines.bytesSeen;
      this.open = null;
    }
    return this.found;
  }

  /** A marker that begins in the bytes before `data` and ends in it. */
  private straddles(data: Buffer): boolean {
    if (this.tailLength === 0) return false;
    const head = Math.min(CARRY, data.length);
    this.tail.copy(this.seam, 0, 0, this.tailLength);
    data.copy(this.seam, this.tailLength, 0, head);
    // Zeros cannot be part of a marker, so stale bytes from an earlier join cannot complete one.
    this.seam.fill(0, this.tailLength + head);
    const at = this.seam.indexOf(MARKER_BYTES);
    return at !== -1 && at < this.tailLength;
  }

  /** Every record of `data` from the one holding the hit at `hit` on. */
  private collect(data: Buffer, base: number, hit: number): void {
    let newlines = this.lines.newlinesSeen;
    let counted = 0;
    while (hit !== -1) {
      newlines += countNewlines(data, counted, hit);
      counted = hit;
      const end = this.record(data, base, hit, newlines);
      if (end === -1) return;
      hit = data.indexOf(MARKER_BYTES, end + 1);
    }
  }

  /** Records the record holding `data[at]` (at 0 also one begun before `data`); its newline's index in `data`, or -1. */
  private record(data: Buffer, base: number, at: number, recordIndex: number): number {
    const before = at > 0 ? data.lastIndexOf(0x0a, at - 1) : -1;
    const start = before !== -1 ? base + before + 1 : this.lines.lastNewlineOffset + 1;
    const nl = data.indexOf(0x0a, at);
    const line: CardLine = { recordIndex, start, end: nl === -1 ? -1 : base + nl };
    this.found.push(line);
    if (nl === -1) this.open = line;
    return nl;
  }

  private keepTail(data: Buffer): void {
    if (data.length >= CARRY) {
      data.copy(this.tail, 0, data.length - CARRY);
      this.tailLength = CARRY;
      return;
    }
    const keep = Math.min(this.tailLength, CARRY - data.length);
    this.tail.copy(this.tail, 0, this.tailLength - keep, this.tailLength);
    data.copy(this.tail, keep);
    this.tailLength = keep + data.length;
  }
}

function countNewlines(data: Buffer, from: number, to: number): number {
  let count = 0;
  let at = data.indexOf(0x0a, from);
  while (at !== -1 && at < to) {
    count += 1;
    at = data.indexOf(0x0a, at + 1);
  }
  return count;
}
