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
        unlinkSync(join(home.layout.manifests, a));
        for (const chunk of chunksOfA) unlinkSync(join(home.layout.chunks, chunk));
      },
    });
    expect(result).toEqual({ verified: 1, listed: 1, retained: 0, damaged: [], unindexed: 0, unindexed_snapshots: [], index_problem: null, receipts: 0, damaged_receipts: [] });
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
});
