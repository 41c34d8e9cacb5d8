/**
 * The complete lines of a file's tail, parsed only when asked for. Discovery sizes a thousand
 * sessions from their ends, so it parses the handful of records it needs (the leaf, the parent walk
 * up to the last usage report) and finds them by searching bytes, not by parsing every line.
 */
import { isUtf8 } from 'node:buffer';
import { isObject, structuralProblem, type RawRecord } from './records.js';

export class TailWindow {
  /** Start and end offsets of each complete line, oldest first. */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly parsed = new Map<number, RawRecord | null>();

  /**
   * @param buf the bytes read
   * @param cutFirst the first line may be cut by the window (the read did not start at offset 0)
   */
  constructor(
    readonly buf: Buffer,
    cutFirst: boolean,
  ) {
    let start = 0;
    if (cutFirst) {
      const nl = buf.indexOf(0x0a);
      start = nl === -1 ? buf.length : nl + 1;
    }
    while (start < buf.length) {
      let nl = buf.indexOf(0x0a, start);
      if (nl === -1) nl = buf.length;
      if (nl > start) {
        this.starts.push(start);
        this.ends.push(nl);
      }
      start = nl + 1;
    }
  }

  get length(): number {
    return this.starts.length;
  }

  start(k: number): number {
    return this.starts[k]!;
  }

  end(k: number): number {
    return this.ends[k]!;
  }

  bytes(k: number): number {
    return this.ends[k]! - this.starts[k]!;
  }

  /** Total bytes of the complete lines. */
  get lineBytes(): number {
    let n = 0;
    for (let k = 0; k < this.length; k += 1) n += this.bytes(k);
    return n;
  }

  /** The record on line `k`, or null when the line is not a well-formed record. */
  record(k: number): RawRecord | null {
    const known = this.parsed.get(k);
    if (known !== undefined) return known;
    const slice = this.buf.subarray(this.starts[k], this.ends[k]);
    let value: unknown = null;
    if (isUtf8(slice)) {
      try {
        value = JSON.parse(slice.toString('utf8'));
      } catch {
        value = null;
      }
    }
    const record = isObject(value) && structuralProblem(value) === null ? value : null;
    this.parsed.set(k, record);
    return record;
  }

  /** The line holding byte `offset`, or -1. */
  lineAt(offset: number): number {
    let lo = 0;
    let hi = this.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (offset < this.starts[mid]!) hi = mid - 1;
      else if (offset >= this.ends[mid]!) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** Lines before `before` whose bytes contain `needle`, newest first. */
  *linesContaining(needle: Buffer, before = this.length): Generator<number> {
    let from = before >= this.length ? this.buf.length : this.starts[before]! - 1;
    while (from >= 0) {
      const at = this.buf.lastIndexOf(needle, from);
      if (at === -1) return;
      const k = this.lineAt(at);
      if (k === -1) {
        from = at - 1;
        continue;
      }
      yield k;
      from = this.starts[k]! - 1;
    }
  }

  /** Lines after `after` whose bytes contain `needle`, oldest first. */
  *linesContainingAfter(needle: Buffer, after: number): Generator<number> {
    let from = after + 1 < this.length ? this.starts[after + 1]! : this.buf.length;
    while (from < this.buf.length) {
      const at = this.buf.indexOf(needle, from);
      if (at === -1) return;
      const k = this.lineAt(at);
      if (k === -1) return;
      yield k;
      from = this.ends[k]! + 1;
    }
  }
}
