import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchSnapshot } from '../../../kernel/vault/search.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { claudeToolResult, claudeUser, codexCompacted, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

describe('search-snapshot', () => {
  let home: VaultHome;
  let sha: string;
  let lines: string[];
  beforeAll(async () => {
    home = makeVaultHome();
    const records = [
      claudeUser('s', 'find the Needle please', 'u0'),
      claudeToolResult('s', 'toolu_1', 'a needle, a Needle and another Needle', 'u1'),
      codexCompacted('summary', ['the Needle was in the haystack', 'nothing here']),
      { type: 'meta', Needle: 'keys are not values' },
      { type: 'escaped', text: 'quote " and slash / and tab \t and unicode é' },
    ];
    lines = records.map((r) => JSON.stringify(r));
    // A value spelled with \u escapes and \/ (as some writers do) must still match its decoded text.
    lines.push('{"type":"escaped","text":"N\\u0065edle at \\/srv\\/data"}');
    lines.push('{"type":"broken", "text": "Needle"'); // not JSON
    const content = Buffer.concat([
      Buffer.from(lines.join('\n') + '\n'),
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x0a]), // {"a":"\xff"} invalid UTF-8
    ]);
    const path = writeSession(home.sessions, 's.jsonl', content);
    sha = (await snapshotFile(home.layout, { path, sessionId: 's', provider: 'claude_code', strategy: 'snapshot' })).entry.sha256;
  });
  afterAll(() => home.cleanup());

  it('counts case-sensitive matches in decoded string values at any depth, keys excluded', async () => {
    const result = await searchSnapshot(home.layout, sha, 'Needle');
    expect(result.matches).toEqual([
      { record_index: 0, record_sha256: sha256(lines[0]!), record_bytes: Buffer.byteLength(lines[0]!), match_count: 1 },
      { record_index: 1, record_sha256: sha256(lines[1]!), record_bytes: Buffer.byteLength(lines[1]!), match_count: 2 },
      { record_index: 2, record_sha256: sha256(lines[2]!), record_bytes: Buffer.byteLength(lines[2]!), match_count: 1 },
      { record_index: 5, record_sha256: sha256(lines[5]!), record_bytes: Buffer.byteLength(lines[5]!), match_count: 1 },
    ]);
    expect(result).toMatchObject({ snapshot_sha256: sha, matched_records: 4, total_matches: 5, unsearchable_records: 2, truncated: false });
  });

  it('finds text that needs escaping in JSON and text written with \\/ escapes', async () => {
    expect((await searchSnapshot(home.layout, sha, 'quote " and slash /')).matches.map((m) => m.record_index)).toEqual([4]);
    expect((await searchSnapshot(home.layout, sha, 'tab \t and unicode é')).matches.map((m) => m.record_index)).toEqual([4]);
    expect((await searchSnapshot(home.layout, sha, '/srv/data')).matches.map((m) => m.record_index)).toEqual([5]);
    expect((await searchSnapshot(home.layout, sha, 'needle')).total_matches).toBe(1);
  });

  it('reports truncation past the limit but counts every match', async () => {
    const result = await searchSnapshot(home.layout, sha, 'Needle', 2);
    expect(result.matches.map((m) => m.record_index)).toEqual([0, 1]);
    expect(result).toMatchObject({ matched_records: 4, total_matches: 5, truncated: true });
  });

  it('never echoes the query or any content', async () => {
    const result = await searchSnapshot(home.layout, sha, 'haystack');
    const text = JSON.stringify(result);
    expect(text).not.toContain('haystack');
    expect(text).not.toContain('Needle');
    expect(result.matched_records).toBe(1);
  });

  it('refuses bad ids, queries and limits with clear errors', async () => {
    await expect(searchSnapshot(home.layout, sha.slice(0, 16), 'x')).rejects.toMatchObject({ code: 'invalid_sha', exit: 2, message: expect.stringContaining('64 are required') });
    await expect(searchSnapshot(home.layout, 'z'.repeat(64), 'x')).rejects.toMatchObject({ code: 'invalid_sha', message: expect.stringContaining('is not a full 64-character hex sha256') });
    await expect(searchSnapshot(home.layout, 'a'.repeat(64), 'x')).rejects.toMatchObject({ code: 'snapshot_not_found' });
    await expect(searchSnapshot(home.layout, sha, '')).rejects.toMatchObject({ code: 'invalid_query', message: '--query must be 1-1024 UTF-8 bytes, got 0' });
    await expect(searchSnapshot(home.layout, sha, 'é'.repeat(513))).rejects.toMatchObject({ code: 'invalid_query' });
    await expect(searchSnapshot(home.layout, sha, '\ud800')).rejects.toMatchObject({ code: 'invalid_query' });
    await expect(searchSnapshot(home.layout, sha, 'x', 0)).rejects.toMatchObject({ code: 'invalid_limit' });
    await expect(searchSnapshot(home.layout, sha, 'x', 51)).rejects.toMatchObject({ code: 'invalid_limit' });
    expect((await searchSnapshot(home.layout, sha.toUpperCase(), 'Needle', 50)).matched_records).toBe(4);
  });

  it('searches a snapshot with more records than a transcript may have: snapshot took it, so it stays searchable', async () => {
    const env = { ...process.env, GOBSTOPPER_MAX_RECORDS: '5' };
    const many = Array.from({ length: 12 }, (_, i) => JSON.stringify({ type: 'x', text: i === 11 ? 'last Needle' : `line ${i}` }));
    const path = writeSession(home.sessions, 'many.jsonl', many.join('\n') + '\n');
    const big = (await snapshotFile(home.layout, { path, sessionId: 'many', provider: 'codex', strategy: 'snapshot', env })).entry.sha256;
    expect(await searchSnapshot(home.layout, big, 'Needle', 10, env)).toMatchObject({ total_matches: 1, matches: [{ record_index: 11 }] });
  });
});
