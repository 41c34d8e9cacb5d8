import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyVault } from '../../../kernel/vault/integrity.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { claudeSession, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

// Tests run as root, whom a file's mode does not stop: the refusal is made at the open instead.
const locked = new Set<string>();
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open = ((path: import('node:fs').PathLike, ...rest: unknown[]) => {
    if (locked.has(String(path))) {
      return Promise.reject(Object.assign(new Error(`EACCES: permission denied, open '${String(path)}'`), { code: 'EACCES', errno: -13, syscall: 'open', path: String(path) }));
    }
    return (fs.open as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.open;
  return { ...fs, open, default: { ...fs, open } };
});

describe('verifyVault on a chunk the file system will not let it read', () => {
  let home: VaultHome;
  let sha: string;
  beforeEach(async () => {
    home = makeVaultHome();
    const path = writeSession(home.sessions, 'sess-a.jsonl', jsonl(claudeSession('sess-a', 3)));
    sha = (await snapshotFile(home.layout, { path, sessionId: 'sess-a', provider: 'claude_code', strategy: 'snapshot', env: home.env })).entry.sha256;
  });
  afterEach(() => {
    locked.clear();
    home.cleanup();
  });

  it('says what was refused and what to check, not the bare errno text', async () => {
    const [chunk] = (JSON.parse(readFileSync(join(home.layout.manifests, sha), 'utf8')) as { chunks: string[] }).chunks;
    const file = join(home.layout.chunks, chunk!);
    locked.add(file);
    const result = await verifyVault(home.layout, { env: home.env });
    expect(result.damaged).toEqual([
      {
        sha256: sha,
        session_id: 'sess-a',
        provider: 'claude_code',
        indexed: true,
        problem: { code: 'unreadable', message: `open failed on ${file}: permission denied; check the permissions of that file and of every directory on the way to it (EACCES)` },
      },
    ]);
  });
});
