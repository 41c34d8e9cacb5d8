/**
 * Writing a render result. The host creates the staging file (empty, private, exclusive) and hands
 * over its path; a provider opens exactly that file, refusing anything that is not an empty regular
 * file, and streams its output there while hashing it.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, writeSync, constants as fsConstants } from 'node:fs';

export class StagingWriter {
  private readonly fd: number;
  private readonly hash = createHash('sha256');
  private written = 0;
  private records = 0;
  private closed = false;

  constructor(readonly path: string) {
    this.fd = openSync(path, fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW);
    const st = fstatSync(this.fd);
    if (!st.isFile() || st.size !== 0) {
      closeSync(this.fd);
      throw new Error('staging path must be an empty regular file created by the host');
    }
  }

  /** Appends one record's bytes and, when `newline`, its terminating newline. */
  writeRecord(bytes: Buffer | string, newline = true): void {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    this.writeAll(buf);
    if (newline) this.writeAll(NEWLINE);
    this.records += 1;
  }

  private writeAll(buf: Buffer): void {
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    this.hash.update(buf);
    this.written += buf.length;
  }

  /** Flushes to disk and returns what was written. */
  finish(): { bytes: number; output_sha256: string; record_count: number } {
    if (!this.closed) {
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.closed = true;
    }
    return { bytes: this.written, output_sha256: this.hash.digest('hex'), record_count: this.records };
  }

  abort(): void {
    if (!this.closed) {
      closeSync(this.fd);
      this.closed = true;
    }
  }
}

const NEWLINE = Buffer.from('\n');
