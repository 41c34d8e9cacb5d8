/**
 * Cheap reads for discovery, identify and usage: the head of a rollout (who it is) and its tail
 * (the newest usage report), never the middle. A file small enough is read once, whole. Both ends
 * stay bytes: callers look at line openings and decode only the lines they need.
 */
import { closeSync, fstatSync, openSync, readSync, constants as fsConstants } from 'node:fs';

export const HEAD_BYTES = 64 * 1024;
export const TAIL_BYTES = 512 * 1024;
/**
 * When the tail shows no usage report (its last line is one huge output, say), tails grow fourfold
 * up to this size, a smaller file being read whole (describe.ts). Sessions that report usage in
 * their last 512 KiB never come here.
 */
export const FALLBACK_TAIL_BYTES = 32 * 1024 * 1024;

export interface FileEnds {
  size: number;
  mtimeMs: number;
  bytesRead: number;
  /** The reads covered the whole file: head and tail are all of it. */
  wholeFile: boolean;
  /** The start of the file, cut after its last complete line (or the whole window if none ends in it). */
  head: Buffer;
  /** No line ends inside the head window: `head` is the start of one long first line. */
  headIsPartialLine: boolean;
  /** Complete lines at the end of the file; the line the window cut into is dropped. */
  tail: Buffer;
  /** Bytes between the head and the tail that were never read. */
  unreadBytes: number;
}

/**
 * One scratch buffer for every read: discovery reads thousands of files in a row, and a fresh
 * half-megabyte allocation per file costs more than the read. The ends returned by readEnds are
 * views into it, valid until the next call (callers finish with them synchronously).
 */
let scratch = Buffer.alloc(0);

function readInto(fd: number, target: Buffer, position: number): Buffer {
  let got = 0;
  while (got < target.length) {
    const n = readSync(fd, target, got, target.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === target.length ? target : target.subarray(0, got);
}

export function readEnds(path: string, headBytes = HEAD_BYTES, tailBytes = TAIL_BYTES): FileEnds {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'ENOTREG' });
    // The rare larger reads get their own buffer, not a scratch kept for the rest of the run.
    let buf: Buffer;
    if (headBytes + tailBytes > HEAD_BYTES + TAIL_BYTES) buf = Buffer.allocUnsafe(Math.min(headBytes + tailBytes, st.size));
    else {
      if (scratch.length < headBytes + tailBytes) scratch = Buffer.allocUnsafe(headBytes + tailBytes);
      buf = scratch;
    }
    if (st.size <= headBytes + tailBytes) {
      const all = readInto(fd, buf.subarray(0, st.size), 0);
      return { size: st.size, mtimeMs: st.mtimeMs, bytesRead: all.length, wholeFile: true, head: all, headIsPartialLine: false, tail: all, unreadBytes: 0 };
    }
    const rawHead = readInto(fd, buf.subarray(0, headBytes), 0);
    const headNl = rawHead.lastIndexOf(0x0a);
    const head = headNl === -1 ? rawHead : rawHead.subarray(0, headNl + 1);
    const rawTail = readInto(fd, buf.subarray(headBytes, headBytes + tailBytes), st.size - tailBytes);
    const firstNl = rawTail.indexOf(0x0a);
    const tail = firstNl === -1 ? rawTail.subarray(0, 0) : rawTail.subarray(firstNl + 1);
    return {
      size: st.size,
      mtimeMs: st.mtimeMs,
      bytesRead: rawHead.length + rawTail.length,
      wholeFile: false,
      head,
      headIsPartialLine: headNl === -1,
      tail,
      unreadBytes: Math.max(0, st.size - tail.length - (headNl + 1)),
    };
  } finally {
    closeSync(fd);
  }
}

/** Calls `onLine(start, end)` for every line of `buf`, blank ones too (end excludes the newline); `false` stops. */
export function forEachLine(buf: Buffer, onLine: (start: number, end: number) => boolean | void): void {
  let start = 0;
  while (start < buf.length) {
    let end = buf.indexOf(0x0a, start);
    if (end === -1) end = buf.length;
    if (onLine(start, end) === false) return;
    start = end + 1;
  }
}

/** The opening of a line, where the client writes the envelope and the payload's type. */
export const OPENING_BYTES = 200;

export function lineOpening(buf: Buffer, start: number, end: number): string {
  return buf.toString('latin1', start, Math.min(end, start + OPENING_BYTES));
}
