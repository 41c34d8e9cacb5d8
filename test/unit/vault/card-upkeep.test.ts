import { readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cardFilePath } from '../../../kernel/vault/card-file.js';
import { verifyVault } from '../../../kernel/vault/integrity.js';
import { pruneVault } from '../../../kernel/vault/prune.js';
import { archiveSession, card, claudeSession, claudeUser, jsonl, makeVaultHome, type VaultHome } from './helpers.js';

describe('card files kept in step with their snapshots', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  const archive = (name: string, sessionId: string, provider: string, content: string, ts: number) => archiveSession(home, name, sessionId, provider, content, ts);

  const cardFiles = () => readdirSync(home.layout.cards).filter((n) => n.endsWith('.json'));

  it('prune removes the card files of the snapshots it removes, and those left of snapshots already gone', async () => {
    const shas: string[] = [];
    for (let v = 0; v < 3; v++) shas.push((await archive('s.jsonl', 's', 'claude_code', jsonl([claudeUser('s', card({ goal: `state ${v}` }), 'c'), claudeUser('s', `v${v}`, 'u')]), 100 + v)).sha256);
    const orphan = cardFilePath(home.layout, 'e'.repeat(64));
    writeFileSync(orphan, readFileSync(cardFilePath(home.layout, shas[0]!)), { mode: 0o600 });
    const preview = await pruneVault(home.layout, { keep: 1 }, home.env);
    expect(preview.manifests_removed).toBe(2);
    expect(cardFiles()).toHaveLength(4);
    await pruneVault(home.layout, { keep: 1, apply: true }, home.env);
    expect(cardFiles()).toEqual([`${shas[2]}.json`]);
  });

  it('vault --verify reports a card file recall would not use, and one whose snapshot is gone', async () => {
    const kept = await archive('a.jsonl', 'sess-a', 'claude_code', jsonl([claudeUser('sess-a', card({ goal: 'Fix the parser' }), 'c')]), 100);
    const moved = await archive('b.jsonl', 'sess-b', 'claude_code', jsonl(claudeSession('sess-b', 2)), 200);
    expect((await verifyVault(home.layout, { env: home.env })).damaged_card_files).toEqual([]);
    writeFileSync(cardFilePath(home.layout, kept.sha256), '{"schema_version":1', { mode: 0o600 });
    renameSync(join(home.layout.manifests, moved.sha256), join(home.sessions, 'moved-aside'));
    const result = await verifyVault(home.layout, { env: home.env });
    expect(result.damaged_card_files).toEqual(
      [
        { file: cardFilePath(home.layout, kept.sha256), problem: { code: 'card_file_damaged', message: expect.stringContaining('is not JSON; delete it') } },
        { file: cardFilePath(home.layout, moved.sha256), problem: { code: 'manifest_missing', message: expect.stringContaining('which manifests/ does not hold; delete it') } },
      ].sort((x, y) => x.file.localeCompare(y.file)),
    );
    // A card file that is valid but lists other cards than its snapshot holds is what recall would answer wrongly from.
    const edited = await archive('c.jsonl', 'sess-c', 'claude_code', jsonl([claudeUser('sess-c', card({ goal: 'Fix the lexer' }), 'c')]), 300);
    const file = cardFilePath(home.layout, edited.sha256);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    written.cards[0].digest.goal = 'Fix the parser';
    writeFileSync(file, JSON.stringify(written), { mode: 0o600 });
    expect((await verifyVault(home.layout, { env: home.env, session: 'sess-c' })).damaged_card_files).toEqual([{ file, problem: { code: 'card_file_mismatch', message: expect.stringContaining(`does not list the state cards snapshot ${edited.sha256.slice(0, 16)} holds`) } }]);
    // A card file is a cache: one that is a link is to be deleted, not replaced by what it points to.
    const linked = cardFilePath(home.layout, moved.sha256);
    renameSync(join(home.sessions, 'moved-aside'), join(home.layout.manifests, moved.sha256));
    const target = join(home.sessions, 'elsewhere.json');
    renameSync(linked, target);
    symlinkSync(target, linked);
    expect((await verifyVault(home.layout, { env: home.env, session: 'sess-b' })).damaged_card_files).toEqual([
      { file: linked, problem: { code: 'vault_insecure', message: `card file ${linked} is a symbolic link; delete it (the next recall reads the snapshot itself and writes the card file again)` } },
    ]);
    // For one session, only its snapshots' card files.
    const one = await verifyVault(home.layout, { env: home.env, session: 'sess-a' });
    expect(one.damaged_card_files.map((d) => d.file)).toEqual([cardFilePath(home.layout, kept.sha256)]);
  });
});
