/**
 * Where rendered records go: the staging file (sdk/staging.ts StagingWriter) when one thread
 * renders the whole file, or memory when a worker renders one range of it (parallel-render.ts),
 * whose bytes the main thread then writes after the ranges before it.
 */
export interface RecordSink {
  writeRecord(bytes: Buffer | string, newline?: boolean): void;
  writeRecordParts(parts: readonly Buffer[], newline?: boolean): void;
}

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** Records gathered into chunks, each on a buffer of its own so it can be moved to another thread. */
export class MemorySink implements RecordSink {
  private readonly full: Uint8Array[] = [];
  private chunk = new Uint8Array(CHUNK_BYTES);
  private used = 0;

  writeRecord(bytes: Buffer | string, newline = true): void {
    this.append(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes);
    if (newline) this.byte(NEWLINE);
  }

  writeRecordParts(parts: readonly Buffer[], newline = true): void {
    for (const part of parts) this.append(part);
    if (newline) this.byte(NEWLINE);
  }

  /** The bytes written, in order; the sink is empty afterwards. */
  take(): Uint8Array[] {
    if (this.used > 0) this.full.push(this.chunk.subarray(0, this.used));
    const out = this.full.splice(0);
    this.chunk = new Uint8Array(0);
    this.used = 0;
    return out;
  }

  private byte(value: number): void {
    if (this.used === this.chunk.length) this.next(CHUNK_BYTES);
    this.chunk[this.used++] = value;
  }

  private append(bytes: Uint8Array): void {
    let from = 0;
    while (from < bytes.length) {
      if (this.used === this.chunk.length) this.next(Math.max(CHUNK_BYTES, bytes.length - from));
      const n = Math.min(bytes.length - from, this.chunk.length - this.used);
      this.chunk.set(bytes.subarray(from, from + n), this.used);
      this.used += n;
      from += n;
    }
  }

  private next(size: number): void {
    this.full.push(this.chunk.subarray(0, this.used));
    this.chunk = new Uint8Array(size);
    this.used = 0;
  }
}
