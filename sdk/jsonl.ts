/**
 * Streaming JSONL reading shared by provider plugins: every byte is hashed while it is split into
 * records, each record is handed over once, and limits are enforced before memory is spent.
 */
import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { createReadStream, fstatSync, openSync, closeSync, readSync, constants as fsConstants } from 'node:fs';

export class JsonlLimitError extends Error {
  constructor(
    readonly limit: 'bytes' | 'records' | 'line',
    message: string,
    /** For `line`: the index of the line that was too long. */
    readonly line: number | null = null,
    /** Bytes of the file read when the limit was hit. */
    readonly bytesRead: number | null = null,
  ) {
    super(message);
    this.name = 'JsonlLimitError';
  }
}

export class JsonlInputError extends Error {
  constructor(
    readonly reason: 'empty' | 'binary' | 'not_regular' | 'invalid_utf8',
    message: string,
  ) {
    super(message);
    this.name = 'JsonlInputError';
  }
}

export interface JsonlRecord {
  /** Physical line number, from 0. */
  index: number;
  /** Byte offset of the line's first byte in the file. */
  offset: number;
  /** The line's bytes without the trailing newline. */
  bytes: Buffer;
  /** false for the last line when the file does not end with a newline. */
  terminated: boolean;
}

export interface JsonlSummary {
  /** Hex digest of every byte read; '' when read with `hash: false`. */
  sha256: string;
  bytes: number;
  recordCount: number;
  /** The file does not end with a newline, so its final record may be a torn write. */
  unterminatedFinalLine: boolean;
}

export interface JsonlReadOptions {
  maxBytes: number;
  maxRecords: number;
  /**
   * Longest line accepted, without its newline. A longer line is refused as soon as this many of
   * its bytes have arrived, so it is never held whole in memory. No cap when absent.
   */
  maxLineBytes?: number;
  /**
   * false: the bytes are not hashed and the summary's sha256 is '' (a reader that only judges the
   * lines, such as a verify, does not pay for a digest nobody reads). Default true.
   */
  hash?: boolean;
}

const NEWLINE = 0x0a;

/** A reader's message naming the file it is about, whether or not the reader already did. */
export function namingFile(path: string, message: string): string {
  return message.startsWith(path) ? message : `${path}: ${message}`;
}

/**
 * Decode one record (`index` counts lines from 0) strictly: invalid UTF-8 is an input error, not
 * replacement characters. A byte-order mark is kept as U+FEFF, not dropped: clients parse each
 * line as JSON, which a mark is not. The native check and decode accept and refuse exactly what a
 * fatal TextDecoder does, in a fraction of its time.
 */
export function decodeUtf8(bytes: Buffer, index: number): string {
  if (!isUtf8(bytes)) throw new JsonlInputError('invalid_utf8', `line ${index + 1} is not valid UTF-8`);
  return bytes.toString('utf8');
}

/**
 * A line holding nothing but spaces, tabs or a carriage return: both clients skip it, so it is a
 * blank line (a warning), not broken JSON. Longer lines are not looked at: no one pads a blank line.
 */
export function isBlankLine(buf: Buffer): boolean {
  if (buf.length === 0) return true;
  if (buf.length > 64) return false;
  for (const c of buf) if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  return true;
}

/** Reads `path` once, calling `onRecord` for every physical line (blank lines included). */
export async function readJsonl(path: string, options: JsonlReadOptions, onRecord: (record: JsonlRecord) => void): Promise<JsonlSummary> {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  let size: number;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new JsonlInputError('not_regular', `${path} is not a regular file`);
    size = st.size;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (size === 0) {
    closeSync(fd);
    throw new JsonlInputError('empty', `${path} is empty`);
  }
  if (size > options.maxBytes) {
    closeSync(fd);
    throw new JsonlLimitError('bytes', `${path} is ${size} bytes, over the ${options.maxBytes}-byte transcript limit (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)`);
  }
  const hash = options.hash === false ? null : createHash('sha256');
  const stream = createReadStream(path, { fd, highWaterMark: 1024 * 1024 });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let offset = 0;
  let lineStart = 0;
  let index = 0;
  let total = 0;
  let sawNul = false;
  const maxLine = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
  const lineTooLong = () =>
    new JsonlLimitError('line', `${path}: line ${index + 1} is over the ${maxLine}-byte record limit (GOBSTOPPER_MAX_RECORD_BYTES)`, index, total);
  const emit = (bytes: Buffer, terminated: boolean) => {
    if (index >= options.maxRecords) throw new JsonlLimitError('records', `${path} has more than ${options.maxRecords} records`);
    onRecord({ index, offset: lineStart, bytes, terminated });
    index += 1;
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash?.update(chunk);
    total += chunk.length;
    if (total > options.maxBytes) throw new JsonlLimitError('bytes', `${path} grew past the ${options.maxBytes}-byte transcript limit while it was read (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)`);
    if (!sawNul && chunk.includes(0)) sawNul = true;
    if (sawNul) throw new JsonlInputError('binary', `${path} is binary (contains NUL bytes), not JSONL`);
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      if (pendingBytes + piece.length > maxLine) throw lineTooLong();
      let line: Buffer;
      if (pendingBytes === 0) line = piece;
      else {
        pending.push(piece);
        line = Buffer.concat(pending, pendingBytes + piece.length);
        pending = [];
        pendingBytes = 0;
      }
      emit(line, true);
      start = nl + 1;
      lineStart = offset + start;
    }
    if (start < chunk.length) {
      // Refused before it is copied: a runaway line never accumulates past the cap.
      if (pendingBytes + (chunk.length - start) > maxLine) throw lineTooLong();
      // Copy: the stream may reuse its buffer for the next chunk.
      const rest = Buffer.from(chunk.subarray(start));
      pending.push(rest);
      pendingBytes += rest.length;
    }
    offset += chunk.length;
  }
  const unterminatedFinalLine = pendingBytes > 0;
  if (unterminatedFinalLine) emit(Buffer.concat(pending, pendingBytes), false);
  return { sha256: hash ? hash.digest('hex') : '', bytes: total, recordCount: index, unterminatedFinalLine };
}

/** A line's carriage return before its newline, kept in the bytes JSONL readers hand out. */
export const CR = 0x0d;

/** True when `bytes` (one line, its newline split off) ended in a carriage return: a CRLF line. */
export function endsWithCr(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[bytes.length - 1] === CR;
}

/**
 * Whether the file's last line ends in CRLF, read from its last two bytes. Lines a rewrite appends
 * follow the file's own convention, as lines it re-serializes keep their own.
 */
export function endsWithCrlf(path: string, size: number): boolean {
  if (size < 2) return false;
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const two = Buffer.alloc(2);
    return readSync(fd, two, 0, 2, size - 2) === 2 && two[0] === CR && two[1] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

/** At most the first `maxBytes` of a file (opened without following a link): fewer when it is shorter. */
export function readPrefix(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const buf = Buffer.alloc(maxBytes);
    let got = 0;
    while (got < maxBytes) {
      const n = readSync(fd, buf, got, maxBytes - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Reads at most `maxBytes` from the start of a file and returns its complete lines. */
export function readHead(path: string, maxBytes: number): { lines: string[]; bytesRead: number } {
  const head = readPrefix(path, maxBytes);
  const text = head.toString('utf8');
  const complete = head.length < maxBytes ? text : text.slice(0, Math.max(0, text.lastIndexOf('\n')));
  return { lines: complete.split('\n').filter((l) => l.length > 0), bytesRead: head.length };
}
