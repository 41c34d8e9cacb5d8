import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIndex } from '../../../kernel/vault/index-file.js';
import { readSnapshotRecord } from '../../../kernel/vault/read.js';
import { reconstructSnapshot } from '../../../kernel/vault/reconstruct.js';
import { claudeSession, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

const run = promisify(execFile);
const child = join(import.meta.dirname, 'snapshotter-child.ts');

describe('concurrent snapshotters', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  it('8 processes archiving different sessions at once leave a valid index and vault', async () => {
    const sessions = Array.from({ length: 8 }, (_, i) => {
      // Sessions share most of their bytes, so processes race on the same chunks too.
      const records = claudeSession('shared', 600, 1500);
      records.push({ type: 'user', sessionId: `s${i}`, message: { content: `unique ${i}` } });
      return { id: `sess-${i}`, path: writeSession(home.sessions, `sess-${i}.jsonl`, jsonl(records)) };
    });
    const results = await Promise.all(
      sessions.map((s) => run(process.execPath, ['--import', 'tsx', child, home.dataHome, s.path, s.id, '3'], { cwd: process.cwd(), env: { ...process.env, ...home.env } })),
    );
    const reported = results.map((r) => JSON.parse(r.stdout).shas as string[]);

    const entries = await readIndex(home.layout);
    expect(entries).toHaveLength(24);
    for (const [i, s] of sessions.entries()) {
      const mine = entries.filter((e) => e.session_id === s.id);
      expect(mine).toHaveLength(3);
      expect(new Set(mine.map((e) => e.sha256))).toEqual(new Set(reported[i]));
      const parts: Buffer[] = [];
      await reconstructSnapshot(home.layout, mine[0]!.sha256, (c) => {
        parts.push(Buffer.from(c));
      });
      expect(Buffer.concat(parts).equals(readFileSync(s.path))).toBe(true);
      const last = await readSnapshotRecord(home.layout, { snapshot: mine[0]!.sha256, record: 1800 });
      expect(JSON.parse(last.content).message.content).toBe(`unique ${i}`);
    }
    // No temp files, no hold files, no locks left behind.
    expect(readdirSync(home.layout.chunks).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(readdirSync(home.layout.manifests).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(readdirSync(home.layout.custody)).toEqual([]);
    expect(readdirSync(home.layout.root).filter((n) => n.endsWith('.lock'))).toEqual([]);
  });
});
