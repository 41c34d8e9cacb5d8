/**
 * An index line's record_count: the physical lines of the archived bytes, a final line without its
 * newline counted too. Counted as the bytes stream past, in pieces of any size.
 */
export class LineCounter {
  private newlines = 0;
  private lastByte = 0x0a;
  private bytes = 0;
  private lastNewline = -1;

  push(data: Buffer): void {
    if (data.length === 0) return;
    let last = -1;
    let at = data.indexOf(0x0a);
    while (at !== -1) {
      this.newlines += 1;
      last = at;
      at = data.indexOf(0x0a, at + 1);
    }
    if (last !== -1) this.lastNewline = this.bytes + last;
    this.bytes += data.length;
    this.lastByte = data[data.length - 1]!;
  }

  get count(): number {
    return this.newlines + (this.lastByte === 0x0a ? 0 : 1);
  }

  /** Newlines pushed so far: the index of the record the next byte belongs to. */
  get newlinesSeen(): number {
    return this.newlines;
  }

  /** Stream offset of the last newline pushed, -1 before the first. */
  get lastNewlineOffset(): number {
    return this.lastNewline;
  }

  get bytesSeen(): number {
    return this.bytes;
  }
}
