/**
 * An index line's record_count: the physical lines of the archived bytes, a final line without its
 * newline counted too. Counted as the bytes stream past, in pieces of any size.
 */
export class LineCounter {
  private newlines = 0;
  private lastByte = 0x0a;

  push(data: Buffer): void {
    if (data.length === 0) return;
    let at = data.indexOf(0x0a);
    while (at !== -1) {
      this.newlines += 1;
      at = data.indexOf(0x0a, at + 1);
    }
    this.lastByte = data[data.length - 1]!;
  }

  get count(): number {
    return this.newlines + (this.lastByte === 0x0a ? 0 : 1);
  }
}
