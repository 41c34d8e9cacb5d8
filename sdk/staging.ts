/**
 * Writing a render result. The host creates the staging file (empty, private, exclusive) and hands
 * over its path; a provider opens exactly that file, refusing anything that is not an empty regular
 * file, and streams its output there while hashing it.
 *
 * Durability is the host's part, not the writer's: the host flushes a staging file it will publish
 * while it verifies and archives it, and fsyncs it again before linking it into place. A candidate
 * the host only measures (eval renders several per session and discards them) is never flushed.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync, constants as fsConstants } from 'node:fs';
import { ErrorCodes } from 'vscode-jsonrpc/node';
import { PluginError } from './serve.js';

/** Records are gathered into writes of this size: one system call per line costs more than the copy. */
const WRITE_CHUNK_BYTES = 1024 * 1024;

export class StagingWriter {
  private readonly fd: number;
  private hash = createHash('sha256');
  private written = 0;
  private records = 0;
  private closed = false;
  private readonly pending = Buffer.allocUnsafe(WRITE_CHUNK_BYTES);
  private pendingBytes = 0;

  /** `write` stands in for fs.writeSync (a test's full disk). */
  constructor(
    readonly path: string,
    private readonly write: typeof writeSync = writeSync,
  ) {
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
    this.append(buf);
    if (newline) this.append(NEWLINE);
    this.records += 1;
  }

  /** Appends one record given as consecutive pieces, without joining them first. */
  writeRecordParts(parts: readonly Buffer[], newline = true): void {
    for (const part of parts) this.append(part);
    if (newline) this.append(NEWLINE);
    this.records += 1;
  }

  /** Appends `records` records rendered elsewhere, given as consecutive pieces, newlines included. */
  writeRendered(pieces: readonly Uint8Array[], records: number): void {
    for (const piece of pieces) this.append(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
    this.records += records;
  }

  /** Empties the file and starts again, as if nothing had been written. */
  reset(): void {
    this.pendingBytes = 0;
    ftruncateSync(this.fd, 0);
    this.hash = createHash('sha256');
    this.written = 0;
    this.records = 0;
  }

  private append(buf: Buffer): void {
    if (this.pendingBytes + buf.length > WRITE_CHUNK_BYTES) this.flush();
    if (buf.length >= WRITE_CHUNK_BYTES) {
      this.writeAll(buf);
      return;
    }
    buf.copy(this.pending, this.pendingBytes);
    this.pendingBytes += buf.length;
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    this.writeAll(this.pending.subarray(0, this.pendingBytes));
    this.pendingBytes = 0;
  }

  private writeAll(buf: Buffer): void {
    let off = 0;
    // At explicit positions, so writing after reset() starts again at the beginning.
    try {
      while (off < buf.length) off += this.write(this.fd, buf, off, buf.length - off, this.written + off);
    } catch (error) {
      throw cannotWrite(this.path, error);
    }
    this.hash.update(buf);
    this.written += buf.length;
  }

  /** Writes what is still buffered, closes the file and returns what was written. */
  finish(): { bytes: number; output_sha256: string; record_count: number } {
    if (!this.closed) {
      this.flush();
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

/** Why a staging write failed, said so that the user knows what to free or fix. */
function cannotWrite(path: string, error: unknown): PluginError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `the disk is full (${code}); free space there and run the command again`
      : code === 'EROFS'
        ? 'the file system is read-only (EROFS)'
        : code === 'EFBIG'
          ? // A shell's `ulimit -f` stops the fork mid-write: Node's "file too large" names neither.
            'the file would grow past the largest file this process may write (ulimit -f) or the file system holds (EFBIG); raise that limit and run the command again'
          : `${(error as Error | undefined)?.message ?? String(error)}`;
  // The errno goes along, so the host treats a full disk under this write as it treats one under its own.
  return new PluginError(ErrorCodes.InternalError, `cannot write the candidate into ${path}: ${why}`, typeof code === 'string' ? { errno: code } : undefined);
}
