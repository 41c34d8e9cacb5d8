/**
 * A source's lines read back by position, for the verify of a fork rendered from it
 * (verify-rendered.ts). The fork's render read and hashed the source as the parse had; the lines
 * are read again only while the file is still the one it read: same device, inode, size,
 * modification and change time when it is opened and once the verify is done (any write moves the
 * change time). Where each line lies follows from the lengths the parse measured.
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { MIB } from '../../../sdk/limits.js';
import type { RecordTable } from './record-table.js';

export type FileIdentity = Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>;

const WINDOW_BYTES = 4 * MIB;

const sameFile = (a: FileIdentity, b: FileIdentity) => a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

export class SourceWindow {
  private window = Buffer.allocUnsafe(0);
  private windowStart = 0;
  private windowEnd = 0;
  /** The next line whose offset is known, and that offset. */
  private nextLine = 0;
  private nextOffset = 0;

  private constructor(
    private readonly fd: number,
    private readonly identity: FileIdentity,
    private readonly table: RecordTable,
  ) {}

  /** The source at `path` when it is still `identity`; null otherwise (or when it cannot be opened). */
  static open(path: string, identity: FileIdentity, table: RecordTable): SourceWindow | null {
    let fd: number;
    try {
      fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    } catch {
      return null;
    }
    if (!sameFile(fstatSync(fd), identity)) {
      closeSync(fd);
      return null;
    }
    return new SourceWindow(fd, identity, table);
  }

  /** Line `index`'s bytes (a view valid until the next call), or null past the file's end. */
  line(index: number): Buffer | null {
    if (index < this.nextLine) {
      this.nextLine = 0;
      this.nextOffset = 0;
    }
    while (this.nextLine < index) {
      this.nextOffset += this.table.bytes[this.nextLine]! + 1;
      this.nextLine += 1;
    }
    const start = this.nextOffset;
    const end = start + this.table.bytes[index]!;
    if (start < this.windowStart || end > this.windowEnd) {
      const size = Math.max(WINDOW_BYTES, end - start);
      if (this.window.length < size) this.window = Buffer.allocUnsafeSlow(size);
      const read = readSync(this.fd, this.window, 0, size, start);
      this.windowStart = start;
      this.windowEnd = start + read;
      if (end > this.windowEnd) return null;
    }
    return this.window.subarray(start - this.windowStart, end - this.windowStart);
  }

  /** Closes the file; true when it was still the same file then, so every line read was the parsed one. */
  close(): boolean {
    try {
      return sameFile(fstatSync(this.fd), this.identity);
    } finally {
      closeSync(this.fd);
    }
  }
}
