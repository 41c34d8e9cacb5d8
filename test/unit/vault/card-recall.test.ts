import { existsSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { validateVaultCardFile } from '../../../schemas/generated/validators.js';
import { cardFilePath } from '../../../kernel/vault/card-file.js';
import { FileLock } from '../../../kernel/vault/lock.js';
import { recallCards, type RecallRequest } from '../../../kernel/vault/recall.js';
import { archiveSession, card, claudeSession, claudeUser, codexCompacted, codexStateCardMessage, jsonl, makeVaultHome, type VaultHome } from './helpers.js';

describe('recall from card files', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  const archive = (name: string, sessionId: string, provider: string, content: string, ts: number) => archiveSession(home, name, sessionId, provider, content, ts);

  /** Every answer recall gives to `requests`, with its warnings. */
  async function answers(requests: RecallRequest[]) {
    const out = [];
    for (const request of requests) {
      const warnings: string[] = [];
      out.push({ request, answer: await recallCards(home.layout, request, home.env, (w) => warnings.push(w)), warnings });
    }
    return out;
  }

  const cardFiles = () => readdirSync(home.layout.cards).filter((n) => n.endsWith('.json'));

  it('recall answers the same from card files as from reading every snapshot, damage included', async () => {
    const repeated = card({ goal: 'Keep the parser fast', decisions: ['parser streams'] });
    const s1 = [...claudeSession('claude-1', 2), claudeUser('claude-1', repeated, 'c1')];
    await archive('c.jsonl', 'claude-1', 'claude_code', jsonl(s1), 100);
    // A later state of the same session repeats the card and adds one, in CRLF lines without a final newline.
    const s2 = [...s1, claudeUser('claude-1', card({ summary: 'parser and PARSER tests', open_tasks: ['cache'] }), 'c2')];
    await archive('c.jsonl', 'claude-1', 'claude_code', s2.map((r) => JSON.stringify(r)).join('\r\n'), 200);
    await archive('x.jsonl', 'codex-1', 'codex', jsonl([{ type: 'session_meta' }, codexStateCardMessage(card({ goal: 'Ship the cache' })), codexCompacted(card({ summary: 'parser work' }), [card({ goal: 'second in one record' })])]), 300);
    const plain = await archive('p.jsonl', 'plain-1', 'claude_code', jsonl(claudeSession('plain-1', 3)), 400);
    const damaged = await archive('d.jsonl', 'dam-1', 'claude_code', jsonl([claudeUser('dam-1', card({ goal: 'parser on a bad disk' }), 'c')]), 500);
    const { chunks } = JSON.parse(readFileSync(join(home.layout.manifests, damaged.sha256), 'utf8')) as { chunks: string[] };
    writeFileSync(join(home.layout.chunks, chunks[0]!), 'cut', { mode: 0o600 });

    expect(cardFiles()).toHaveLength(5);
    const plainCards = JSON.parse(readFileSync(cardFilePath(home.layout, plain.sha256), 'utf8'));
    expect(validateVaultCardFile(plainCards)).toBe(true);
    expect(plainCards.cards).toEqual([]);

    const requests: RecallRequest[] = [{}, { query: 'parser' }, { query: 'cache', limit: 1 }, { session: 'claude' }, { query: 'PARSER', session: 'codex' }, { query: 'nowhere' }];
    const fromCardFiles = await answers(requests);
    expect(fromCardFiles[1]!.answer.found).toBe(3);
    expect(fromCardFiles[1]!.warnings).toEqual([expect.stringMatching(new RegExp(`^snapshot ${damaged.sha256.slice(0, 16)} of claude_code dam-1 is left out: vault damaged: `))]);
    rmSync(home.layout.cards, { recursive: true });
    expect(await answers(requests)).toEqual(fromCardFiles);
  });

  it('recall answers from the card file, and reads the snapshot where the card file cannot be used', async () => {
    const entry = await archive('s.jsonl', 's', 'claude_code', jsonl([claudeUser('s', card({ goal: 'Fix the parser' }), 'c')]), 100);
    const file = cardFilePath(home.layout, entry.sha256);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toMatchObject({ schema_version: 1, manifest_sha256: entry.sha256, source_sha256: entry.source_sha256, bytes: entry.bytes, cards: [{ record_index: 0 }] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(home.layout.cards).mode & 0o777).toBe(0o700);
    // What the card file says is what recall answers: it does not read the snapshot.
    written.cards[0].digest.goal = 'Fix the lexer';
    writeFileSync(file, JSON.stringify(written), { mode: 0o600 });
    expect((await recallCards(home.layout, { query: 'lexer' }, home.env)).found).toBe(1);
    for (const garbage of ['not json', JSON.stringify({ ...written, manifest_sha256: 'f'.repeat(64) }), JSON.stringify({ ...written, bytes: 1 }), JSON.stringify({ ...written, extra: true })]) {
      writeFileSync(file, garbage, { mode: 0o600 });
      expect((await recallCards(home.layout, { query: 'parser' }, home.env)).found).toBe(1);
    }
  });

  it('a snapshot missing a chunk is left out with a warning though its card file is intact', async () => {
    await archive('a.jsonl', 'sess-a', 'claude_code', jsonl([claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'c')]), 100);
    const gone = await archive('b.jsonl', 'sess-b', 'claude_code', jsonl([claudeUser('sess-b', card({ goal: 'Tune the parser' }), 'c')]), 200);
    const { chunks } = JSON.parse(readFileSync(join(home.layout.manifests, gone.sha256), 'utf8')) as { chunks: string[] };
    unlinkSync(join(home.layout.chunks, chunks[0]!));
    expect(existsSync(cardFilePath(home.layout, gone.sha256))).toBe(true);
    const warnings: string[] = [];
    const { cards } = await recallCards(home.layout, { query: 'parser' }, home.env, (w) => warnings.push(w));
    expect(cards.map((r) => r.session_id)).toEqual(['sess-a']);
    expect(warnings).toEqual([`snapshot ${gone.sha256.slice(0, 16)} of claude_code sess-b is left out: vault damaged: ${join(home.layout.chunks, chunks[0]!)}: chunk is missing; repair required: restore ${join(home.layout.chunks, chunks[0]!)} from a backup; without it, snapshots that use it cannot be read until it is written again, which gobstopper snapshot of a session file still holding those bytes does`]);
  });

  it('recall writes the card file a snapshot lacks, byte for byte what archiving writes', async () => {
    const withCard = await archive('a.jsonl', 'sess-a', 'claude_code', jsonl([claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'c')]), 100);
    const without = await archive('b.jsonl', 'sess-b', 'claude_code', jsonl(claudeSession('sess-b', 2)), 200);
    const archived = [withCard, without].map((e) => readFileSync(cardFilePath(home.layout, e.sha256)));
    // A vault archived before card files existed has no cards/ directory at all.
    rmSync(home.layout.cards, { recursive: true });
    expect((await recallCards(home.layout, { query: 'parser' }, home.env)).found).toBe(1);
    expect(statSync(home.layout.cards).mode & 0o777).toBe(0o700);
    for (const [i, e] of [withCard, without].entries()) {
      const file = cardFilePath(home.layout, e.sha256);
      expect(readFileSync(file)).toEqual(archived[i]);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    // A damaged card file is replaced by the cards the snapshot holds.
    writeFileSync(cardFilePath(home.layout, withCard.sha256), 'not json', { mode: 0o600 });
    expect((await recallCards(home.layout, { query: 'parser' }, home.env)).found).toBe(1);
    expect(readFileSync(cardFilePath(home.layout, withCard.sha256))).toEqual(archived[0]);
  });

  it('recall leaves a missing card file unwritten while a prune holds the vault, and answers all the same', async () => {
    const entries = [];
    for (const id of ['sess-a', 'sess-b', 'sess-c']) entries.push(await archive(`${id}.jsonl`, id, 'claude_code', jsonl([claudeUser(id, card({ goal: 'Fix the parser' }), 'c')]), 100));
    const files = entries.map((e) => cardFilePath(home.layout, e.sha256));
    for (const file of files) unlinkSync(file);
    const prune = await FileLock.acquire(home.layout.custodyLock, { waitMs: 0, what: 'the vault' });
    const acquire = vi.spyOn(FileLock, 'acquire');
    try {
      expect((await recallCards(home.layout, { query: 'parser' }, home.env)).found).toBe(3);
      // It waits behind the prune once, not once per snapshot.
      expect(acquire.mock.calls.filter(([path]) => path === home.layout.custodyLock)).toHaveLength(1);
      expect(files.filter((f) => existsSync(f))).toEqual([]);
    } finally {
      acquire.mockRestore();
      await prune.release();
    }
    expect((await recallCards(home.layout, { query: 'parser' }, home.env)).found).toBe(3);
    expect(files.filter((f) => existsSync(f))).toEqual(files);
    // Its shared hold is gone with the recall: nothing is left in custody/ to keep a prune waiting.
    expect(readdirSync(home.layout.custody)).toEqual([]);
  });
});
