import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshotPages, readSnapshotRecord } from '../../../kernel/vault/read.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { CHUNK_BYTES } from '../../../kernel/vault/limits.js';
import { makeVaultHome, writeSession, type VaultHome } from './helpers.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function readWhole(home: VaultHome, snapshot: string, record: number, maxBytes: number): Promise<{ bytes: Buffer; pages: number }> {
  const parts: Buffer[] = [];
  let offset: number | null = 0;
  let pages = 0;
  while (offset !== null) {
    const page = await readSnapshotRecord(home.layout, { snapshot, record, offset, maxBytes });
    expect(page.content_trust).toBe('untrusted_archived_data');
    expect(Buffer.byteLength(page.content)).toBeLessThanOrEqual(maxBytes);
    parts.push(Buffer.from(page.content, 'utf8'));
    offset = page.next_offset;
    pages += 1;
  }
  return { bytes: Buffer.concat(parts), pages };
}

describe('read-snapshot', () => {
  let home: VaultHome;
  let sha: string;
  const multibyte = JSON.stringify({ type: 'user', text: 'héllo wörld – 日本語 🎉 '.repeat(40) });
  // Longer than a chunk, so it spans a chunk boundary.
  const huge = JSON.stringify({ type: 'tool', out: 'z'.repeat(CHUNK_BYTES + 5000) });
  const records = ['{"type":"first"}', multibyte, '', huge, '{"type":"last-unterminated"}'];
  beforeAll(async () => {
    home = makeVaultHome();
    const path = writeSession(home.sessions, 'r.jsonl', records.join('\n'));
    sha = (await snapshotFile(home.layout, { path, sessionId: 'r', provider: 'codex', strategy: 'snapshot' })).entry.sha256;
  });
  afterAll(() => home.cleanup());

  it('returns a record bound to snapshot, source and record digests', async () => {
    const page = await readSnapshotRecord(home.layout, { snapshot: sha, record: 0 });
    expect(page).toEqual({
      snapshot_sha256: sha,
      source_sha256: sha256(records.join('\n')),
      record_index: 0,
      record_sha256: sha256(records[0]!),
      record_bytes: Buffer.byteLength(records[0]!),
      offset: 0,
      next_offset: null,
      content: records[0],
      content_trust: 'untrusted_archived_data',
    });
  });

  it('pages through multibyte text on character boundaries and reassembles it exactly', async () => {
    for (const maxBytes of [4, 5, 7, 100, 4096]) {
      const { bytes } = await readWhole(home, sha, 1, maxBytes);
      expect(bytes.toString('utf8')).toBe(multibyte);
    }
  });

  it('reads a record that spans chunks, an empty record and an unterminated last record', async () => {
    const whole = await readWhole(home, sha, 3, 16384);
    expect(whole.bytes.toString()).toBe(huge);
    expect(whole.pages).toBe(Math.ceil(Buffer.byteLength(huge) / 16384));
    const mid = await readSnapshotRecord(home.layout, { snapshot: sha, record: 3, offset: CHUNK_BYTES - 10, maxBytes: 20 });
    expect(mid.content).toBe(huge.slice(CHUNK_BYTES - 10, CHUNK_BYTES + 10));
    expect(mid.record_sha256).toBe(sha256(huge));
    expect((await readSnapshotRecord(home.layout, { snapshot: sha, record: 2 })).content).toBe('');
    expect((await readSnapshotRecord(home.layout, { snapshot: sha, record: 4 })).content).toBe(records[4]);
  });

  it('refuses offsets inside a character or past the record, and records that do not exist', async () => {
    const at = Buffer.from(multibyte).indexOf(Buffer.from('é')) + 1;
    // What the record holds answers these: errors (exit 1), as a record that does not exist is.
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 1, offset: at })).rejects.toMatchObject({ code: 'invalid_offset', exit: 1, message: expect.stringContaining('inside a UTF-8 character') });
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0, offset: 999 })).rejects.toMatchObject({ code: 'invalid_offset', exit: 1 });
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 5 })).rejects.toMatchObject({ code: 'record_not_found', exit: 1, message: expect.stringContaining('has 5 records; record 5 does not exist (records are numbered from 0, so the last is 4)') });
    // A value no record could take is the command line's mistake: usage (exit 2).
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: -1 })).rejects.toMatchObject({ code: 'invalid_record', exit: 2 });
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0, offset: -1 })).rejects.toMatchObject({ code: 'invalid_offset', exit: 2 });
    // A number past 2^53 is not the one typed: refused as such, not reported as some other record.
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: Number('99999999999999999999') })).rejects.toMatchObject({ code: 'invalid_record', exit: 2, message: expect.stringContaining('larger than any record index') });
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0, offset: 2 ** 53 })).rejects.toMatchObject({ code: 'invalid_offset', exit: 2, message: expect.stringContaining('larger than any byte offset') });
  });

  it('serves several pages of several records from one pass, each equal to a single read', async () => {
    const requests = [
      { record: 3, offset: 0, maxBytes: 16384 },
      { record: 1, offset: 0, maxBytes: 10 },
      { record: 3, offset: CHUNK_BYTES, maxBytes: 100 },
      { record: 0 },
    ];
    const batch = await readSnapshotPages(home.layout, sha, requests);
    for (const [i, r] of requests.entries()) expect(batch[i]).toEqual(await readSnapshotRecord(home.layout, { snapshot: sha, ...r }));
    await expect(readSnapshotPages(home.layout, sha, [{ record: 0 }, { record: 9 }])).rejects.toMatchObject({ code: 'record_not_found' });
  });

  it('bounds the page size to 4-16384 bytes', async () => {
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0, maxBytes: 3 })).rejects.toMatchObject({ code: 'invalid_max_bytes' });
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0, maxBytes: 16385 })).rejects.toMatchObject({ code: 'invalid_max_bytes' });
    await expect(readSnapshotRecord(home.layout, { snapshot: sha.slice(0, 63), record: 0 })).rejects.toMatchObject({ code: 'invalid_sha' });
  });
});

describe('read-snapshot of a record that is not all UTF-8', () => {
  let home: VaultHome;
  let sha: string;
  // A Latin-1 byte, two stray continuation bytes, a cut 3-byte character, and a cut one at the end.
  const record = Buffer.concat([
    Buffer.from('{"type":"user","text":"caf'),
    Buffer.from([0xe9]),
    Buffer.from(' b '),
    Buffer.from([0x80, 0x80]),
    Buffer.from(' z '),
    Buffer.from([0xe6, 0x97]),
    Buffer.from(' y 🎉 end'),
    Buffer.from([0xe6]),
  ]);
  beforeAll(async () => {
    home = makeVaultHome();
    const path = writeSession(home.sessions, 'latin.jsonl', Buffer.concat([Buffer.from('{"type":"first"}\n'), record, Buffer.from('\n')]));
    sha = (await snapshotFile(home.layout, { path, sessionId: 'l', provider: 'codex', strategy: 'snapshot' })).entry.sha256;
  });
  afterAll(() => home.cleanup());

  it('ends a page before a byte that is not text, and from that byte names the offset to read on from', async () => {
    for (const maxBytes of [4, 5, 16, 4096]) {
      const text: Buffer[] = [];
      const skipped: number[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        type Refusal = { code: string; details: { offset: number; next_offset: number | null } };
        const page: Awaited<ReturnType<typeof readSnapshotRecord>> | Refusal = await readSnapshotRecord(home.layout, { snapshot: sha, record: 1, offset, maxBytes }).catch((error: unknown) => error as Refusal);
        if ('content' in page) {
          text.push(Buffer.from(page.content, 'utf8'));
          offset = page.next_offset;
        } else {
          expect(page).toMatchObject({ code: 'record_not_text', details: { offset } });
          skipped.push(offset);
          offset = page.details.next_offset;
        }
      }
      // Every byte is either read as text or named as the start of bytes that are not.
      expect({ maxBytes, skipped }).toEqual({ maxBytes, skipped: [26, 30, 35, 48] });
      expect(Buffer.concat(text).toString('utf8')).toBe('{"type":"user","text":"caf b  z  y 🎉 end');
    }
  });

  it('says so when nothing follows the last byte that is not text, and still refuses an offset inside a character', async () => {
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 1, offset: 48 })).rejects.toMatchObject({
      code: 'record_not_text',
      exit: 1,
      message: 'record 1 has a byte that is not UTF-8 text at 48, and no character starts after it (the record ends at 49)',
    });
    const emoji = record.indexOf(Buffer.from('🎉'));
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 1, offset: emoji + 2 })).rejects.toMatchObject({ code: 'invalid_offset', message: expect.stringContaining('inside a UTF-8 character') });
    expect((await readSnapshotRecord(home.layout, { snapshot: sha, record: 1, offset: emoji, maxBytes: 4 })).content).toBe('🎉');
  });
});
