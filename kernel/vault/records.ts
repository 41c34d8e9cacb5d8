/**
 * A snapshot as physical records (JSONL lines), streamed from verified chunks. A record is one
 * line without its newline; a final line without a newline is still a record.
 */
import type { VaultLayout } from './layout.js';
import { loadManifest, type LoadedManifest } from './manifest.js';
import { streamManifestChunks } from './reconstruct.js';

export interface SnapshotRecord {
  index: number;
  /** Byte offset of the record in the snapshot. */
  offset: number;
  /** Valid only during the callback: it may view a reused chunk buffer. */
  bytes: Buffer;
}

export type RecordSink = (record: SnapshotRecord) => void;

/** Splits a chunk stream into records; `finish()` flushes an unterminated last line. */
export class RecordSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private index = 0;
  private lineStart = 0;

  constructor(private readonly sink: RecordSink) {}

  get count(): number {
    return this.index;
  }

  private emit(bytes: Buffer): void {
    this.sink({ index: this.index, offset: this.lineStart, bytes });
    this.index += 1;
  }

  push(chunk: Buffer, chunkOffset: number): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      if (this.pendingBytes === 0) this.emit(piece);
      else {
        this.pending.push(piece);
        const line = Buffer.concat(this.pending, this.pendingBytes + piece.length);
        this.pending = [];
        this.pendingBytes = 0;
        this.emit(line);
      }
      start = nl + 1;
      this.lineStart = chunkOffset + start;
    }
    if (start < chunk.length) {
      // Copied: the chunk buffer is reused for the next chunk.
      const rest = Buffer.from(chunk.subarray(start));
      this.pending.push(rest);
      this.pendingBytes += rest.length;
    }
  }

  finish(): void {
    if (this.pendingBytes > 0) {
      this.emit(Buffer.concat(this.pending, this.pendingBytes));
      this.pending = [];
      this.pendingBytes = 0;
    }
  }
}

/**
 * Calls `sink` for every record of snapshot `sha`, then resolves once the whole snapshot verified.
 * Results a caller derives are trustworthy only after this resolves. No record limit applies: the
 * vault's queries stream (the snapshot's size is bounded when its manifest loads), and `snapshot`
 * archives a file of any record count, which must stay searchable.
 */
export async function forEachRecord(layout: VaultLayout, sha: string, sink: RecordSink, env: NodeJS.ProcessEnv = process.env): Promise<{ loaded: LoadedManifest; recordCount: number }> {
  const loaded = await loadManifest(layout, sha, env);
  const splitter = new RecordSplitter(sink);
  await streamManifestChunks(layout, loaded, (chunk, offset) => splitter.push(chunk, offset));
  splitter.finish();
  return { loaded, recordCount: splitter.count };
}
