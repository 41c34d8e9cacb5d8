import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeUtf8, JsonlInputError, JsonlLimitError, readJsonl, type JsonlRecord } from '../../../sdk/jsonl.js';

const dir = mkdtempSync(join(tmpdir(), 'sdk-jsonl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 * 1024;
const NO_LIMITS = { maxBytes: Number.MAX_SAFE_INTEGER, maxRecords: Number.MAX_SAFE_INTEGER };

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function failure(path: string, maxLineBytes: number): Promise<JsonlLimitError> {
  const seen: number[] = [];
  const error = await readJsonl(path, { ...NO_LIMITS, maxLineBytes }, (r) => seen.push(r.index)).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JsonlLimitError);
  return error as JsonlLimitError;
}

describe('readJsonl line cap', () => {
  it('refuses a 50 MiB single line after reading a little more than the cap, not the whole line', async () => {
    const path = file('huge.jsonl', Buffer.concat([Buffer.from('{"a":1}\n'), Buffer.alloc(50 * MiB, 0x61), Buffer.from('\n{"b":2}\n')]));
    const error = await failure(path, 2 * MiB);
    expect(error.limit).toBe('line');
    expect(error.line).toBe(1);
    expect(error.message).toBe(`${path}: line 2 is over the ${2 * MiB}-byte record limit (GOBSTOPPER_MAX_RECORD_BYTES)`);
    // One 1 MiB read chunk past the cap at most: the line was never held whole.
    expect(error.bytesRead).toBeLessThanOrEqual(4 * MiB);
  });

  it('refuses an over-long line that ends inside one chunk, and an unterminated final one', async () => {
    const inside = await failure(file('inside.jsonl', `{"a":1}\n${'x'.repeat(5000)}\n{"b":2}\n`), 4096);
    expect([inside.limit, inside.line]).toEqual(['line', 1]);
    const last = await failure(file('last.jsonl', `{"a":1}\n${'x'.repeat(5000)}`), 4096);
    expect([last.limit, last.line]).toEqual(['line', 1]);
  });

  it('reads lines up to the cap exactly as without one', async () => {
    const text = `${'y'.repeat(4096)}\n{"b":2}\n${'z'.repeat(4096)}`;
    const path = file('at-cap.jsonl', text);
    const capped: JsonlRecord[] = [];
    const summary = await readJsonl(path, { ...NO_LIMITS, maxLineBytes: 4096 }, (r) => capped.push({ ...r, bytes: Buffer.from(r.bytes) }));
    const plain: JsonlRecord[] = [];
    await readJsonl(path, NO_LIMITS, (r) => plain.push({ ...r, bytes: Buffer.from(r.bytes) }));
    expect(capped).toEqual(plain);
    expect(capped.map((r) => r.bytes.length)).toEqual([4096, 7, 4096]);
    expect(summary).toEqual({ sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text), recordCount: 3, unterminatedFinalLine: true });
  });
});

describe('readJsonl without a digest', () => {
  it('hands out the same lines and limits, and reports no sha256', async () => {
    const text = `{"a":1}\n\n{"b":2}\n${'w'.repeat(3000)}`;
    const path = file('no-hash.jsonl', text);
    const hashed: JsonlRecord[] = [];
    const withHash = await readJsonl(path, NO_LIMITS, (r) => hashed.push({ ...r, bytes: Buffer.from(r.bytes) }));
    const unhashed: JsonlRecord[] = [];
    const without = await readJsonl(path, { ...NO_LIMITS, hash: false }, (r) => unhashed.push({ ...r, bytes: Buffer.from(r.bytes) }));
    expect(unhashed).toEqual(hashed);
    expect(without).toEqual({ ...withHash, sha256: '' });
    expect(withHash.sha256).toBe(createHash('sha256').update(text).digest('hex'));
    // The file-wide checks still apply.
    const refused = await readJsonl(path, { ...NO_LIMITS, maxRecords: 2, hash: false }, () => undefined).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JsonlLimitError);
  });
});

describe('decodeUtf8', () => {
  const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const either = (bytes: Buffer) => {
    try {
      return { text: decodeUtf8(bytes, 6) };
    } catch (error) {
      expect(error).toBeInstanceOf(JsonlInputError);
      expect((error as JsonlInputError).message).toBe('line 7 is not valid UTF-8');
      return { refused: true };
    }
  };
  const reference = (bytes: Buffer) => {
    try {
      return { text: fatal.decode(bytes) };
    } catch {
      return { refused: true };
    }
  };

  it('accepts and refuses what a fatal TextDecoder does, and keeps a byte-order mark', () => {
    const fixed = [
      Buffer.from('{"a":"héllo € 𝄞"}'),
      Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
      Buffer.from([0xed, 0xa0, 0x80]), // a surrogate
      Buffer.from([0xc0, 0x80]), // overlong
      Buffer.from([0xf4, 0x90, 0x80, 0x80]), // past U+10FFFF
      Buffer.from([0xe2, 0x82]), // cut short
      Buffer.from([0xff]),
      Buffer.alloc(0),
    ];
    for (const bytes of fixed) expect(either(bytes), bytes.toString('hex')).toEqual(reference(bytes));
    expect(either(fixed[1]!)).toEqual({ text: '\ufeff{}' });
    // Random bytes, mostly from the ranges UTF-8 lead and continuation bytes come from.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pool = [0x41, 0x7b, 0x80, 0x8f, 0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    for (let n = 0; n < 20_000; n++) {
      const bytes = Buffer.from(Array.from({ length: 1 + Math.floor(next() * 6) }, () => pool[Math.floor(next() * pool.length)]!));
      expect(either(bytes), bytes.toString('hex')).toEqual(reference(bytes));
    }
  });
});
