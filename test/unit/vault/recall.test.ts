import { chmodSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, symlinkSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recallCards } from '../../../kernel/vault/recall.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { card, claudeSession, claudeUser, codexCompacted, codexStateCardMessage, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

describe('recall', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  async function archive(name: string, sessionId: string, provider: string, records: unknown[], ts: number) {
    const path = writeSession(home.sessions, name, jsonl(records));
    return (await snapshotFile(home.layout, { path, sessionId, provider, strategy: 'snapshot', ts })).entry;
  }

  it('finds state cards in any record shape, ranks by query occurrences, and drops non-matching cards', async () => {
    const claudeCard = card({ goal: 'Fix the parser bug', files_touched: ['src/parser.ts'], decisions: ['parser keeps raw bytes'] });
    const codexCard = card({ goal: 'Ship the release', open_tasks: ['write the PARSER changelog'] });
    const nestedCard = card({ summary: 'compacted window about deployment' });
    const claude = await archive('c.jsonl', 'claude-1', 'claude_code', [...claudeSession('claude-1', 2), claudeUser('claude-1', claudeCard, 'card')], 100);
    const codex = await archive('x.jsonl', 'codex-1', 'codex', [{ type: 'session_meta' }, codexStateCardMessage(codexCard), codexCompacted(nestedCard, ['tail'])], 200);

    const { cards: rows } = await recallCards(home.layout, { query: 'parser' });
    expect(rows.map((r) => [r.session_id, r.score, r.record_index])).toEqual([
      ['claude-1', 3, 6],
      ['codex-1', 1, 1],
    ]);
    expect(rows[0]).toMatchObject({ snapshot_sha: claude.sha256, ts: 100, provider: 'claude_code', digest: { goal: 'Fix the parser bug', files_touched: ['src/parser.ts'] } });
    expect(rows[1]!.snapshot_sha).toBe(codex.sha256);

    const { cards: all } = await recallCards(home.layout, {});
    expect(all.map((r) => r.session_id)).toEqual(['codex-1', 'codex-1', 'claude-1']);
    expect(all.every((r) => r.score === 0)).toBe(true);
    expect(all[1]!.digest.summary).toBe('compacted window about deployment');
    expect(await recallCards(home.layout, { query: 'no such words' })).toEqual({ cards: [], found: 0 });
    expect((await recallCards(home.layout, { query: 'parser', session: 'codex' })).cards).toHaveLength(1);
  });

  it('reports a card repeated in later states of a session once, from the newest snapshot', async () => {
    const text = card({ goal: 'Keep the cache warm' });
    const records = [claudeUser('s', text, 'card'), claudeUser('s', 'more', 'u1')];
    await archive('s.jsonl', 's', 'claude_code', records.slice(0, 1), 100);
    const newer = await archive('s.jsonl', 's', 'claude_code', records, 200);
    const { cards: rows } = await recallCards(home.layout, { query: 'cache' });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.snapshot_sha).toBe(newer.sha256);
  });

  it('a damaged snapshot costs only its own cards, with a warning; asked for by id it is an error', async () => {
    await archive('a.jsonl', 'sess-a', 'claude_code', [claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'card')], 100);
    const before = new Set(readdirSync(home.layout.chunks));
    const broken = await archive('b.jsonl', 'sess-b', 'claude_code', [claudeUser('sess-b', card({ goal: 'Tune the parser' }), 'card')], 200);
    const chunk = readdirSync(home.layout.chunks).find((name) => !before.has(name))!;
    truncateSync(join(home.layout.chunks, chunk), 10);
    const warnings: string[] = [];
    const { cards: rows } = await recallCards(home.layout, { query: 'parser' }, process.env, (w) => warnings.push(w));
    expect(rows.map((r) => r.session_id)).toEqual(['sess-a']);
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^snapshot ${broken.sha256.slice(0, 16)} of claude_code sess-b is left out: vault damaged: .*${chunk}`))]);
    await expect(recallCards(home.layout, { sha: broken.sha256 })).rejects.toMatchObject({ code: 'vault_damaged' });
  });

  it('a snapshot whose manifest was moved out of the vault costs only its own cards', async () => {
    await archive('a.jsonl', 'sess-a', 'claude_code', [claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'card')], 100);
    const moved = await archive('b.jsonl', 'sess-b', 'claude_code', [claudeUser('sess-b', card({ goal: 'Tune the parser' }), 'card')], 200);
    renameSync(join(home.layout.manifests, moved.sha256), join(home.sessions, 'moved-aside'));
    const warnings: string[] = [];
    const { cards: rows } = await recallCards(home.layout, { query: 'parser' }, process.env, (w) => warnings.push(w));
    expect(rows.map((r) => r.session_id)).toEqual(['sess-a']);
    expect(warnings).toEqual([`snapshot ${moved.sha256.slice(0, 16)} of claude_code sess-b is left out: its manifest is not in the vault (restore manifests/${moved.sha256} from a backup)`]);
  });

  it('a link or a directory in the place of a snapshot\'s chunk costs only that snapshot\'s cards; one in the place of the vault\'s chunks directory stops the answer', async () => {
    await archive('a.jsonl', 'sess-a', 'claude_code', [claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'card')], 100);
    const before = new Set(readdirSync(home.layout.chunks));
    const blocked = await archive('b.jsonl', 'sess-b', 'claude_code', [claudeUser('sess-b', card({ goal: 'Tune the parser' }), 'card')], 200);
    const chunk = join(home.layout.chunks, readdirSync(home.layout.chunks).find((name) => !before.has(name))!);
    rmSync(chunk);
    mkdirSync(chunk, { mode: 0o700 });
    const warnings: string[] = [];
    const { cards: rows } = await recallCards(home.layout, { query: 'parser' }, process.env, (w) => warnings.push(w));
    expect(rows.map((r) => r.session_id)).toEqual(['sess-a']);
    expect(warnings).toEqual([`snapshot ${blocked.sha256.slice(0, 16)} of claude_code sess-b is left out: ${chunk}: is not a regular file; move it aside; gobstopper keeps its data in regular files only`]);
    rmdirSync(chunk);
    symlinkSync('/etc/hostname', chunk);
    const linked: string[] = [];
    expect((await recallCards(home.layout, { query: 'parser' }, process.env, (w) => linked.push(w))).cards).toHaveLength(1);
    expect(linked).toEqual([expect.stringContaining(`left out: ${chunk}: is a symbolic link`)]);
    // Asked for by id, the snapshot's trouble is the answer.
    await expect(recallCards(home.layout, { sha: blocked.sha256 })).rejects.toMatchObject({ code: 'vault_insecure' });
    // The vault's own directory is not one snapshot's trouble.
    chmodSync(home.layout.chunks, 0o755);
    await expect(recallCards(home.layout, { query: 'parser' })).rejects.toMatchObject({ code: 'vault_insecure', details: { file: home.layout.chunks } });
  });

  it('a snapshot over the transcript limit set now costs only its own cards; asked for by id it is an error', async () => {
    await archive('a.jsonl', 'sess-a', 'claude_code', [claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'card')], 100);
    const big = await archive('b.jsonl', 'sess-b', 'claude_code', [claudeUser('sess-b', card({ goal: 'Tune the parser' }), 'card'), claudeUser('sess-b', 'x'.repeat(4096), 'u')], 200);
    const lowered = { ...process.env, GOBSTOPPER_MAX_TRANSCRIPT_BYTES: '2048' };
    const warnings: string[] = [];
    const { cards: rows } = await recallCards(home.layout, { query: 'parser' }, lowered, (w) => warnings.push(w));
    expect(rows.map((r) => r.session_id)).toEqual(['sess-a']);
    expect(warnings).toEqual([`snapshot ${big.sha256.slice(0, 16)} of claude_code sess-b is left out: snapshot ${big.sha256.slice(0, 16)} is ${big.bytes} bytes, over the 2048-byte transcript limit (raise GOBSTOPPER_MAX_TRANSCRIPT_BYTES to read it)`]);
    await expect(recallCards(home.layout, { sha: big.sha256 }, lowered)).rejects.toMatchObject({ code: 'transcript_too_large' });
  });

  it('bounds the limit', async () => {
    await expect(recallCards(home.layout, { limit: 0 })).rejects.toMatchObject({ code: 'invalid_limit' });
    await expect(recallCards(home.layout, { limit: 101 })).rejects.toMatchObject({ code: 'invalid_limit' });
    const many = Array.from({ length: 5 }, (_, i) => claudeUser('m', card({ goal: `goal ${i}` }), `c${i}`));
    await archive('m.jsonl', 'm', 'claude_code', many, 10);
    const answer = await recallCards(home.layout, { limit: 3 });
    expect(answer.cards).toHaveLength(3);
    expect(answer.found).toBe(5);
  });

  it('refuses a query that is given but empty, rather than listing every card', async () => {
    for (const query of ['', '   ']) await expect(recallCards(home.layout, { query })).rejects.toMatchObject({ code: 'invalid_query', message: expect.stringContaining('--query is empty') });
  });
});
