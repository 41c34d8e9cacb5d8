import { createHash } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyVault } from '../../../kernel/vault/integrity.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { claudeSession, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

describe('verifyVault', () => {
  let home: VaultHome;
  let a: string;
  let b: string;
  beforeEach(async () => {
    home = makeVaultHome();
    const archive = async (id: string, turns: number) => {
      const path = writeSession(home.sessions, `${id}.jsonl`, jsonl(claudeSession(id, turns)));
      return (await snapshotFile(home.layout, { path, sessionId: id, provider: 'claude_code', strategy: 'snapshot', env: home.env })).entry.sha256;
    };
    a = await archive('sess-a', 3);
    b = await archive('sess-b', 4);
  });
  afterEach(() => home.cleanup());

  const manifestOf = (sha: string) => JSON.parse(readFileSync(join(home.layout.manifests, sha), 'utf8')) as { source_sha256: string; bytes: number; chunks: string[] };

  it('leaves out a snapshot a prune removed while it was being checked, and reports nothing for it', async () => {
    const lines = readFileSync(home.layout.index, 'utf8').split('\n').filter((l) => l !== '');
    const chunksOfA = manifestOf(a).chunks;
    const result = await verifyVault(home.layout, {
      env: home.env,
      onProgress: (p) => {
        if (p.sha256 !== a || p.bytes === 0) return;
        // What prune does, in its order, once the check has read this snapshot's manifest.
        writeFileSync(home.layout.index, lines.filter((l) => !l.includes(a)).join('\n') + '\n');
        unlinkSync(join(home.layout.cards, `${a}.json`));
        unlinkSync(join(home.layout.manifests, a));
        for (const chunk of chunksOfA) unlinkSync(join(home.layout.chunks, chunk));
      },
    });
    expect(result).toEqual({ verified: 1, listed: 1, retained: 0, damaged: [], unindexed: 0, unindexed_snapshots: [], index_problem: null, receipts: 0, damaged_receipts: [], damaged_card_files: [] });
  });

  it('names an index line whose size disagrees with its manifest, and a manifest whose chunks are not its source', async () => {
    const text = readFileSync(home.layout.index, 'utf8');
    writeFileSync(home.layout.index, text.replace(new RegExp(`("sha256":"${b}".*?"bytes":)(\\d+)`), (_, head: string, n: string) => `${head}${Number(n) + 1}`));
    // A well-formed manifest, named by its own digest, that promises a source its chunk is not.
    const forged = Buffer.from(JSON.stringify({ schema_version: 3, source_sha256: '0'.repeat(64), bytes: manifestOf(a).bytes, chunks: manifestOf(a).chunks }));
    const forgedSha = createHash('sha256').update(forged).digest('hex');
    writeFileSync(join(home.layout.manifests, forgedSha), forged, { mode: 0o600 });

    const result = await verifyVault(home.layout, { env: home.env });
    expect(result).toMatchObject({ verified: 3, listed: 2, retained: 0, unindexed: 1 });
    expect(result.unindexed_snapshots).toEqual([forgedSha]);
    expect(result.damaged).toEqual([
      { sha256: b, session_id: 'sess-b', provider: 'claude_code', indexed: true, problem: { code: 'index_mismatch', message: expect.stringContaining(`says it archived ${manifestOf(b).bytes + 1} bytes`) } },
      { sha256: forgedSha, session_id: null, provider: null, indexed: false, problem: { code: 'content_mismatch', message: 'size or hash mismatch: reconstructed bytes do not match the manifest source_sha256' } },
    ]);
  });

  it("an empty snapshot's line says 0 records and an unterminated last line counts as one: neither is flagged", async () => {
    for (const [id, content] of [['sess-empty', ''], ['sess-open', jsonl(claudeSession('sess-open', 2), false)]] as const) {
      const path = writeSession(home.sessions, `${id}.jsonl`, content);
      await snapshotFile(home.layout, { path, sessionId: id, provider: 'claude_code', strategy: 'snapshot', env: home.env });
    }
    const counts = readFileSync(home.layout.index, 'utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as { record_count: number }).record_count);
    expect(counts.slice(2)).toEqual([0, claudeSession('sess-open', 2).length]);
    expect((await verifyVault(home.layout, { env: home.env })).damaged).toEqual([]);
  });

  it('names every line of a snapshot whose record_count is wrong, by its number in the whole index, with or without a session', async () => {
    // The same bytes archived again under another label: a third line naming snapshot a.
    await snapshotFile(home.layout, { path: join(home.sessions, 'sess-a.jsonl'), sessionId: 'sess-a', provider: 'claude_code', strategy: 'pre-undo', env: home.env });
    const lines = readFileSync(home.layout.index, 'utf8').trimEnd().split('\n');
    const real = (JSON.parse(lines[0]!) as { record_count: number }).record_count;
    const edit = (line: string, count: number) => line.replace(/"record_count":\d+/, `"record_count":${count}`);
    writeFileSync(home.layout.index, [edit(lines[0]!, 1), lines[1], edit(lines[2]!, real + 5)].join('\n') + '\n');

    const expected = [
      {
        sha256: a,
        session_id: 'sess-a',
        provider: 'claude_code',
        indexed: true,
        problem: {
          code: 'record_count_mismatch',
          message: `record count mismatch: index line 1 says 1 record and line 3 says ${real + 5}, but the snapshot holds ${real} records (its bytes are intact); repair required: set record_count to ${real} on lines 1 and 3 of ${home.layout.index}`,
        },
        record_counts: { counted: real, index_lines: [{ line: 1, record_count: 1 }, { line: 3, record_count: real + 5 }] },
      },
    ];
    const whole = await verifyVault(home.layout, { env: home.env });
    expect(whole.damaged).toEqual(expected);
    expect(whole).toMatchObject({ verified: 2, listed: 2 });
    expect((await verifyVault(home.layout, { env: home.env, session: 'sess-a' })).damaged).toEqual(expected);
    expect((await verifyVault(home.layout, { env: home.env, session: 'sess-b' })).damaged).toEqual([]);
  });
});
