/**
 * `read-snapshot`: bounded pages of physical records of a verified snapshot. A record is hashed
 * whole but only its page is held, so paging through a huge tool output costs the memory of one
 * page. Offsets are byte offsets that must fall on UTF-8 character boundaries. Several pages can be
 * served by one verified pass over the snapshot (`readSnapshotPages`).
 */
import { createHash, type Hash } from 'node:crypto';
import type { ReadSnapshotCommandOutput } from '../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../errors.js';
import { snapshotNotFound } from './errors.js';
import { snapshotIdFor } from './selectors.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { loadManifest } from './manifest.js';
import { streamManifestChunks } from './reconstruct.js';
import { parseFullSha } from './selectors.js';
import { quotedFlagNumber } from '../text/numbers.js';

export const MIN_PAGE_BYTES = 4;
export const MAX_PAGE_BYTES = 16 * 1024;
export const DEFAULT_PAGE_BYTES = 4096;
/** Pages one pass may serve; each holds at most MAX_PAGE_BYTES. */
export const MAX_PAGES_PER_PASS = 4096;

export type { ReadSnapshotCommandOutput };

export interface PageRequest {
  record: number;
  offset?: number;
  maxBytes?: number;
}

export interface ReadRequest extends PageRequest {
  snapshot: string;
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/**
 * How many leading bytes of `bytes[0, length)` are whole, valid UTF-8 characters (RFC 3629: no
 * overlong forms, surrogates or code points past U+10FFFF): where the first byte that is not text
 * sits.
 */
function validUtf8Length(bytes: Buffer, length: number): number {
  let i = 0;
  while (i < length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    let need: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) need = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      need = 2;
      if (lead === 0xe0) low = 0xa0;
      else if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      need = 3;
      if (lead === 0xf0) low = 0x90;
      else if (lead === 0xf4) high = 0x8f;
    } else return i;
    if (i + need >= length) return i;
    for (let k = 1; k <= need; k++) {
      const byte = bytes[i + k]!;
      if (k === 1 ? byte < low || byte > high : !isContinuation(byte)) return i;
    }
    i += need + 1;
  }
  return length;
}

/** Bytes held before a page: enough to tell a byte inside a character from a stray one. */
const LOOK_BACK = 3;

interface Window {
  offset: number;
  maxBytes: number;
  /** Where `bytes` starts in the record: up to LOOK_BACK bytes before the page. */
  start: number;
  /** The page plus one byte past it (to find the last whole character), after the look-back. */
  bytes: Buffer;
}

interface RecordAccumulator {
  hash: Hash;
  length: number;
  found: boolean;
  windows: Window[];
}

function checkPage(request: PageRequest): Required<PageRequest> {
  const record = request.record;
  const offset = request.offset ?? 0;
  const maxBytes = request.maxBytes ?? DEFAULT_PAGE_BYTES;
  if (!Number.isInteger(record) || record < 0) throw usageError('invalid_record', `--record must be a record index from 0, got ${record}`);
  if (!Number.isInteger(offset) || offset < 0) throw usageError('invalid_offset', `--offset must be a byte offset from 0, got ${offset}`);
  // Past 2^53 the number parsed is not the one typed (99999999999999999999 reads as 1e20), and the
  // error would name a record or offset nobody asked for: no record is that long or that far in.
  if (!Number.isSafeInteger(record)) throw usageError('invalid_record', `--record is larger than any record index (at most ${Number.MAX_SAFE_INTEGER})`);
  if (!Number.isSafeInteger(offset)) throw usageError('invalid_offset', `--offset is larger than any byte offset (at most ${Number.MAX_SAFE_INTEGER})`);
  if (!Number.isInteger(maxBytes) || maxBytes < MIN_PAGE_BYTES || maxBytes > MAX_PAGE_BYTES) {
    throw usageError('invalid_max_bytes', `--max-bytes must be from ${MIN_PAGE_BYTES} to ${MAX_PAGE_BYTES}, got ${quotedFlagNumber(maxBytes, MIN_PAGE_BYTES, MAX_PAGE_BYTES)}`);
  }
  return { record, offset, maxBytes };
}

function capture(acc: RecordAccumulator, piece: Buffer): void {
  acc.hash.update(piece);
  for (const w of acc.windows) {
    const from = Math.max(acc.length, w.start);
    const to = Math.min(acc.length + piece.length, w.offset + w.maxBytes + 1);
    if (from < to) piece.copy(w.bytes, from - w.start, from - acc.length, to - acc.length);
  }
  acc.length += piece.length;
}

/**
 * Whether the continuation byte at `offset` belongs to a valid character that starts before it
 * (the offset was mistyped) rather than standing alone in text that is not UTF-8.
 */
function insideCharacter(w: Window, recordBytes: number): boolean {
  const at = (i: number) => w.bytes[i - w.start]!;
  for (let lead = w.offset - 1; lead >= w.start; lead--) {
    if (isContinuation(at(lead))) continue;
    const first = at(lead);
    const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
    if (lead + length <= w.offset || lead + length > recordBytes) return false;
    return validUtf8Length(w.bytes.subarray(lead - w.start), length) === length;
  }
  return false;
}

function finishPage(sha: string, sourceSha256: string, record: number, recordSha256: string, recordBytes: number, w: Window): ReadSnapshotCommandOutput {
  const { offset, maxBytes } = w;
  // Past the end or inside a character is a fact of this record, not of how the flag was written:
  // an error (exit 1), as a record that does not exist is.
  if (offset > recordBytes) throw new GobstopperError('invalid_offset', `--offset ${offset} is past the end of record ${record} (${recordBytes} bytes)`);
  const page = w.bytes.subarray(offset - w.start);
  const at = (i: number) => page[i - offset]!;
  if (offset < recordBytes && isContinuation(at(offset)) && insideCharacter(w, recordBytes)) {
    throw new GobstopperError('invalid_offset', `--offset ${offset} is inside a UTF-8 character; use an offset a previous page returned`);
  }
  let end = Math.min(offset + maxBytes, recordBytes);
  if (end < recordBytes) {
    while (end > offset && isContinuation(at(end))) end -= 1;
  }
  // A record that is not all UTF-8 (torn, or written in another encoding) is the one a user most
  // needs to read: a page ends before its first bad byte, and a page starting at one names where
  // the next character starts, so the rest of the record can still be paged through.
  end = offset + validUtf8Length(page, end - offset);
  if (end === offset && offset < recordBytes) throw notText(record, recordBytes, w);
  return {
    snapshot_sha256: sha,
    source_sha256: sourceSha256,
    record_index: record,
    record_sha256: recordSha256,
    record_bytes: recordBytes,
    offset,
    next_offset: end < recordBytes ? end : null,
    content: page.toString('utf8', 0, end - offset),
    content_trust: 'untrusted_archived_data',
  };
}

/** A page that starts at a byte that begins no UTF-8 character: where reading can go on. */
function notText(record: number, recordBytes: number, w: Window): GobstopperError {
  const { offset, maxBytes } = w;
  // The window holds the page and one byte past it.
  const held = Math.min(offset + maxBytes + 1, recordBytes);
  let next = offset + 1;
  while (next < held && isContinuation(w.bytes[next - w.start]!)) next += 1;
  const where = `record ${record} has a byte that is not UTF-8 text at ${offset}`;
  if (next >= recordBytes) return new GobstopperError('record_not_text', `${where}, and no character starts after it (the record ends at ${recordBytes})`, { details: { offset, next_offset: null } });
  if (next >= held) return new GobstopperError('record_not_text', `${where}, and none of the ${maxBytes} bytes after it starts a character; try a larger --offset`, { details: { offset, next_offset: null } });
  return new GobstopperError('record_not_text', `${where}; read on with --offset ${next}`, { details: { offset, next_offset: next } });
}

/** Serves every requested page, in request order, from one verified pass over the snapshot. */
export async function readSnapshotPages(layout: VaultLayout, snapshot: string, requests: PageRequest[], env: NodeJS.ProcessEnv = process.env): Promise<ReadSnapshotCommandOutput[]> {
  const requested = parseFullSha(snapshot);
  const pages = requests.map(checkPage);
  if (pages.length > MAX_PAGES_PER_PASS) throw usageError('too_many_pages', `at most ${MAX_PAGES_PER_PASS} pages per read, got ${pages.length}`);
  if (!(await vaultExists(layout))) throw snapshotNotFound(requested);
  const sha = await snapshotIdFor(layout, requested);
  const loaded = await loadManifest(layout, sha, env);

  const wanted = new Map<number, RecordAccumulator>();
  const windows = pages.map((p) => {
    let acc = wanted.get(p.record);
    if (!acc) {
      acc = { hash: createHash('sha256'), length: 0, found: false, windows: [] };
      wanted.set(p.record, acc);
    }
    const start = Math.max(0, p.offset - LOOK_BACK);
    const w: Window = { offset: p.offset, maxBytes: p.maxBytes, start, bytes: Buffer.alloc(p.offset - start + p.maxBytes + 1) };
    acc.windows.push(w);
    return w;
  });

  let recordIndex = 0;
  let records = 0;
  let tail = 0;
  await streamManifestChunks(layout, loaded, (chunk) => {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      const acc = wanted.get(recordIndex);
      if (acc) capture(acc, chunk.subarray(start, end));
      if (nl === -1) {
        tail += chunk.length - start;
        break;
      }
      if (acc) acc.found = true;
      recordIndex += 1;
      records += 1;
      tail = 0;
      start = nl + 1;
    }
  });
  if (tail > 0) {
    records += 1;
    const acc = wanted.get(recordIndex);
    if (acc) acc.found = true;
  }

  const digests = new Map<number, string>();
  return pages.map((p, i) => {
    const acc = wanted.get(p.record)!;
    if (!acc.found) throw new GobstopperError('record_not_found', `snapshot ${sha.slice(0, 16)} has ${records} records; record ${p.record} does not exist (records are numbered from 0${records > 0 ? `, so the last is ${records - 1}` : ''})`);
    let digest = digests.get(p.record);
    if (digest === undefined) {
      digest = acc.hash.digest('hex');
      digests.set(p.record, digest);
    }
    return finishPage(sha, loaded.manifest.source_sha256, p.record, digest, acc.length, windows[i]!);
  });
}

export async function readSnapshotRecord(layout: VaultLayout, request: ReadRequest, env: NodeJS.ProcessEnv = process.env): Promise<ReadSnapshotCommandOutput> {
  const [page] = await readSnapshotPages(layout, request.snapshot, [request], env);
  return page!;
}
