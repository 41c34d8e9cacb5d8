/**
 * The physical lines of one byte range of a file, split exactly as sdk/jsonl.ts readJsonl splits
 * the whole file (on '\n', the newline not part of the line), read synchronously in 1 MiB chunks.
 * A range starts at a line's first byte and ends just after a newline or at the end of the file.
 * Hashing, NUL detection and the file-wide limits stay with the reader of the whole file.
 */
import { readSync } from 'node:fs';

const CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;

export interface RangeLinesEnd {
  /** Lines handed over. */
  lines: number;
  /** Bytes read from the range. */
  bytesRead: number;
  /** false when the range ended without a newline (the file's unterminated final line). */
  lastTerminated: boolean;
  /** Why reading stopped before the end of the range, if it did. */
  stopped: 'long_line' | 'asked' | null;
}

/**
 * Calls `onLine(bytes, index)` for each line of [start, end) of `fd`, indexes counted from 0 at
 * `start`. Stops at a line longer than `maxLineBytes` (before holding it whole; the whole-file
 * reader refuses it too) or before a line for which `onLine` returns false.
 */
export function readRangeLines(fd: number, start: number, end: number, maxLineBytes: number, onLine: (bytes: Buffer, index: number) => boolean): RangeLinesEnd {
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, end - start)));
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let position = start;
  let index = 0;
  while (position < end) {
    const got = readSync(fd, chunk, 0, Math.min(chunk.length, end - position), position);
    if (got === 0) break;
    position += got;
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl === -1 || nl >= got) break;
      const piece = chunk.subarray(from, nl);
      if (pendingBytes + piece.length > maxLineBytes) return { lines: index, bytesRead: position - start, lastTerminated: true, stopped: 'long_line' };
      let line: Buffer;
      if (pendingBytes === 0) line = piece;
      else {
        pending.push(piece);
        line = Buffer.concat(pending, pendingBytes + piece.length);
        pending = [];
        pendingBytes = 0;
      }
      if (!onLine(line, index)) return { lines: index, bytesRead: position - start, lastTerminated: true, stopped: 'asked' };
      index += 1;
      from = nl + 1;
    }
    if (from < got) {
      if (pendingBytes + (got - from) > maxLineBytes) return { lines: index, bytesRead: position - start, lastTerminated: true, stopped: 'long_line' };
      // Copy: the chunk buffer is reused for the next read.
      const rest = Buffer.from(chunk.subarray(from, got));
      pending.push(rest);
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0) {
    const line = Buffer.concat(pending, pendingBytes);
    if (!onLine(line, index)) return { lines: index, bytesRead: position - start, lastTerminated: false, stopped: 'asked' };
    return { lines: index + 1, bytesRead: position - start, lastTerminated: false, stopped: null };
  }
  return { lines: index, bytesRead: position - start, lastTerminated: true, stopped: null };
}
