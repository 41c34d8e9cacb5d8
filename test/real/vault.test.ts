/**
 * Every file of the shared real-data fixtures archived in the vault: every record of every file
 * comes back byte for byte through read-snapshot (paging with next_offset), and search-snapshot
 * agrees with a brute-force search of the original bytes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshotPages, MAX_PAGE_BYTES, MAX_PAGES_PER_PASS } from '../../kernel/vault/read.js';
import { searchSnapshot } from '../../kernel/vault/search.js';
import { snapshotFile } from '../../kernel/vault/snapshot.js';
import { isUtf8 } from 'node:buffer';
import { makeVaultHome, type VaultHome } from '../unit/vault/helpers.js';

const fixtures = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const present = existsSync(fixtures);
if (!present) console.warn(`skipped: real-data fixtures not found at ${fixtures}`);

function allFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? allFiles(path) : [path];
    });
}

function splitRecords(bytes: Buffer): Buffer[] {
  const records: Buffer[] = [];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl === -1) {
      records.push(bytes.subarray(start));
      break;
    }
    records.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  return records;
}

// The oracle is written independently of the vault's own JSON helpers.
function parse(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

function occurrences(text: string, query: string): number {
  return text.split(query).length - 1;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Distinctive queries: a slice from the middle of the longest string value of a few records. */
function pickQueries(records: Buffer[]): string[] {
  const queries: string[] = [];
  const step = Math.max(1, Math.floor(records.length / 5));
  for (let i = 0; i < records.length && queries.length < 5; i += step) {
    const parsed = parse(records[i]!);
    if (parsed === undefined) continue;
    const longest = strings(parsed).reduce((a, b) => (b.length > a.length ? b : a), '');
    if (longest.length < 8) continue;
    const mid = Math.floor(longest.length / 2);
    const query = longest.slice(Math.max(0, mid - 20), mid + 20);
    if (!LONE_SURROGATE.test(query) && Buffer.byteLength(query) <= 1024) queries.push(query);
  }
  return queries;
}

function bruteForce(records: Buffer[], query: string) {
  let matched = 0;
  let total = 0;
  let unsearchable = 0;
  const matches: Array<{ record_index: number; record_sha256: string; record_bytes: number; match_count: number }> = [];
  records.forEach((bytes, index) => {
    const parsed = parse(bytes);
    if (parsed === undefined) {
      unsearchable += 1;
      return;
    }
    const count = strings(parsed).reduce((n, v) => n + occurrences(v, query), 0);
    if (count === 0) return;
    matched += 1;
    total += count;
    if (matches.length < 50) matches.push({ record_index: index, record_sha256: sha256(bytes), record_bytes: bytes.length, match_count: count });
  });
  return { matches, matched_records: matched, total_matches: total, unsearchable_records: unsearchable, truncated: matched > matches.length };
}

describe.skipIf(!present)('vault over every real fixture', () => {
  let home: VaultHome;
  const files = present ? allFiles(fixtures) : [];
  beforeAll(() => {
    home = makeVaultHome();
  });
  afterAll(() => home?.cleanup());

  it.each(files.map((f) => [relative(fixtures, f), f]))('%s: every record reads back exactly, and search agrees with a brute-force scan', async (_name, file) => {
    const original = readFileSync(file);
    const { entry } = await snapshotFile(home.layout, { path: file, sessionId: 'fixture', provider: 'fixture', strategy: 'snapshot' });
    expect(entry.source_sha256).toBe(sha256(original));
    const records = splitRecords(original);
    expect(entry.record_count).toBe(records.length);

    // Page through every record, many records per verified pass.
    const collected = records.map(() => [] as Buffer[]);
    let pending = records.map((_, record) => ({ record, offset: 0 }));
    while (pending.length > 0) {
      const next: typeof pending = [];
      for (let i = 0; i < pending.length; i += MAX_PAGES_PER_PASS) {
        const batch = pending.slice(i, i + MAX_PAGES_PER_PASS);
        const pages = await readSnapshotPages(home.layout, entry.sha256, batch.map((p) => ({ ...p, maxBytes: MAX_PAGE_BYTES })));
        pages.forEach((page, k) => {
          const { record } = batch[k]!;
          expect(page.record_sha256).toBe(sha256(records[record]!));
          expect(page.record_bytes).toBe(records[record]!.length);
          collected[record]!.push(Buffer.from(page.content, 'utf8'));
          if (page.next_offset !== null) next.push({ record, offset: page.next_offset });
        });
      }
      pending = next;
    }
    records.forEach((bytes, record) => {
      if (!Buffer.concat(collected[record]!).equals(bytes)) throw new Error(`record ${record} did not read back exactly`);
    });

    for (const query of pickQueries(records)) {
      const result = await searchSnapshot(home.layout, entry.sha256, query, 50);
      expect(result.matched_records).toBeGreaterThan(0);
      expect(result).toEqual({ snapshot_sha256: entry.sha256, source_sha256: entry.source_sha256, ...bruteForce(records, query) });
    }
  });
});
