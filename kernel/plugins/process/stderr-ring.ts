/**
 * Keeps the last `capacity` bytes a plugin wrote to stderr. Older bytes are dropped, so a chatty
 * plugin costs bounded memory however long it runs.
 */
export class StderrRing {
  private readonly buffer: Buffer;
  private start = 0;
  private length = 0;
  /** Everything ever written, including what was dropped. */
  totalBytes = 0;

  constructor(readonly capacity: number) {
    this.buffer = Buffer.alloc(Math.max(0, capacity));
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const cap = this.capacity;
    if (cap === 0) return;
    if (chunk.length >= cap) {
      chunk.copy(this.buffer, 0, chunk.length - cap);
      this.start = 0;
      this.length = cap;
      return;
    }
    const end = (this.start + this.length) % cap;
    const first = Math.min(chunk.length, cap - end);
    chunk.copy(this.buffer, end, 0, first);
    if (first < chunk.length) chunk.copy(this.buffer, 0, first);
    const overflow = this.length + chunk.length - cap;
    if (overflow > 0) {
      this.start = (this.start + overflow) % cap;
      this.length = cap;
    } else this.length += chunk.length;
  }

  /** The retained bytes, oldest first. */
  contents(): Buffer {
    if (this.start + this.length <= this.capacity) return Buffer.from(this.buffer.subarray(this.start, this.start + this.length));
    return Buffer.concat([this.buffer.subarray(this.start), this.buffer.subarray(0, (this.start + this.length) % this.capacity)]);
  }

  /** The last few non-empty lines as one line, control characters removed, at most maxChars. */
  tail(maxLines = 3, maxChars = 400): string {
    const text = this.contents().toString('utf8');
    const lines = text
      .split(/\r?\n/)
      .map((l) => l.replace(/[\u0000-\u001f\u007f]/g, ' ').trim())
      .filter((l) => l.length > 0);
    const joined = lines.slice(-maxLines).join(' | ');
    return joined.length > maxChars ? `…${joined.slice(joined.length - maxChars + 1)}` : joined;
  }
}
