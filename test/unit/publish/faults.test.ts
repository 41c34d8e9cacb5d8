import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toEnvelope } from '../../../kernel/cli/base-command.js';
import { faultPoint, InjectedFault } from '../../../kernel/publish/faults.js';
import { createStagingFile, restoreSnapshotToStaging } from '../../../kernel/publish/staging.js';
import { stagingDir } from '../../../kernel/paths.js';
import { readIndex } from '../../../kernel/vault/index-file.js';
import { pruneVault } from '../../../kernel/vault/prune.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { CHUNK_BYTES } from '../../../kernel/vault/limits.js';
import type { WriteAll } from '../../../kernel/vault/private-fs.js';
import { writeAllDefault } from '../../../kernel/vault/private-fs.js';
import { makeVaultHome, writeSession, type VaultHome } from '../vault/helpers.js';

const run = promisify(execFile);
const vaultDir = join(import.meta.dirname, '..', 'vault');

/** A disk that fills up after `budget` bytes: the write that would cross it fails with ENOSPC. */
function diskWithRoom(budget: number): WriteAll {
  let used = 0;
  return async (handle, data) => {
    if (used + data.length > budget) {
      const room = Math.max(0, budget - used);
      if (room > 0) await writeAllDefault(handle, data.subarray(0, room));
      used = budget;
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
    }
    used += data.length;
    await writeAllDefault(handle, data);
  };
}

function vaultFiles(home: VaultHome): string[] {
  const dirs = [home.layout.chunks, home.layout.manifests, home.layout.custody];
  return dirs.flatMap((d) => (existsSync(d) ? readdirSync(d).map((n) => join(d, n)) : [])).sort();
}

describe('fault injection and a full disk', () => {
  let home: VaultHome;
  let path: string;
  beforeEach(() => {
    home = makeVaultHome();
    path = writeSession(home.sessions, 'big.jsonl', ('{"type":"user","text":"' + 'q'.repeat(500) + '"}\n').repeat(Math.ceil((3.5 * CHUNK_BYTES) / 520)));
  });
  afterEach(() => home.cleanup());

  it('a full disk while archiving leaves no partial chunk, manifest or index entry, and a retry succeeds', async () => {
    const full = await snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot', writeAll: diskWithRoom(2 * CHUNK_BYTES + 100) }).catch((e: unknown) => e);
    expect(full).toMatchObject({ code: 'ENOSPC' });
    // The message says which disk filled: the vault's, not the one the sessions are on.
    expect(toEnvelope(full as Error).error.message).toMatch(new RegExp(`^write failed on ${home.layout.chunks}/\\S+: the disk is full`));
    const files = vaultFiles(home);
    expect(files.some((f) => f.includes('/.tmp-'))).toBe(false);
    // Only whole chunks that were written before the disk filled may remain (content-addressed, harmless).
    const kept = files.filter((f) => f.startsWith(home.layout.chunks));
    expect(kept.length).toBeLessThanOrEqual(2);
    for (const chunk of kept) expect(createHash('sha256').update(readFileSync(chunk)).digest('hex')).toBe(basename(chunk));
    expect(readdirSync(home.layout.manifests)).toEqual([]);
    expect(readdirSync(home.layout.custody)).toEqual([]);
    expect(await readIndex(home.layout)).toEqual([]);

    const { stored } = await snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot' });
    expect(stored.chunkCount).toBe(4);
    expect(stored.newChunks).toBe(4 - kept.length);
    expect(await readIndex(home.layout)).toHaveLength(1);
  });

  it('a file-size limit (ulimit -f) while archiving names the file and the limit, and leaves no index entry', async () => {
    const limited: WriteAll = async (handle, data) => {
      if (data.length > 1024) throw Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG', errno: -27, syscall: 'write' });
      await writeAllDefault(handle, data);
    };
    const refused = await snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot', writeAll: limited }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'EFBIG' });
    expect(toEnvelope(refused as Error).error.message).toMatch(new RegExp(`^write failed on ${home.layout.chunks}/\\S+: the file would grow past the largest file this process may write \\(ulimit -f\\).* \\(EFBIG\\)$`));
    expect(vaultFiles(home).some((f) => f.includes('/.tmp-'))).toBe(false);
    expect(await readIndex(home.layout)).toEqual([]);
  });

  it('a disk that returns other bytes than were written is caught by the read-back, and nothing is kept', async () => {
    const corrupting: WriteAll = async (handle, data) => {
      const copy = Buffer.from(data);
      copy[copy.length >> 1] ^= 0x01;
      await writeAllDefault(handle, copy);
    };
    await expect(snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot', writeAll: corrupting })).rejects.toMatchObject({
      code: 'write_verify_failed',
      message: expect.stringContaining('differ from the bytes written'),
    });
    expect(readdirSync(home.layout.chunks)).toEqual([]);
    expect(readdirSync(home.layout.manifests)).toEqual([]);
    expect(await readIndex(home.layout)).toEqual([]);
  });

  it('a full disk while staging a restored snapshot removes the staging file', async () => {
    const { entry } = await snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot' });
    const staging = await createStagingFile(home.env);
    await expect(restoreSnapshotToStaging(home.layout, entry.sha256, staging, { writeAll: diskWithRoom(CHUNK_BYTES + 7) })).rejects.toMatchObject({ code: 'ENOSPC', path: staging });
    expect(existsSync(staging)).toBe(false);
    expect(readdirSync(stagingDir(home.env))).toEqual([]);

    const again = await createStagingFile(home.env);
    await restoreSnapshotToStaging(home.layout, entry.sha256, again);
    expect(readFileSync(again).equals(readFileSync(path))).toBe(true);
  });

  it('GOBSTOPPER_FAULT throws at a named step', async () => {
    expect(() => faultPoint('x.step', undefined, { GOBSTOPPER_FAULT: 'other,x.step' })).toThrow(InjectedFault);
    expect(() => faultPoint('x.step', undefined, { GOBSTOPPER_FAULT: 'other' })).not.toThrow();
    const env = { ...home.env, GOBSTOPPER_FAULT: 'vault.before_index' };
    await expect(snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot', env })).rejects.toMatchObject({ code: 'fault_injected', step: 'vault.before_index' });
    expect(await readIndex(home.layout)).toEqual([]);
    await snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot' });
    const hook = (step: string) => {
      if (step === 'vault.before_index') throw new InjectedFault(step);
    };
    await expect(snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot', fault: hook })).rejects.toMatchObject({ code: 'fault_injected' });
    expect(await readIndex(home.layout)).toHaveLength(1);
  });

  it('a process killed after storing a manifest leaves no index entry; prune clears its hold and a retry completes', async () => {
    const child = run(process.execPath, ['--import', 'tsx', join(vaultDir, 'snapshotter-child.ts'), home.dataHome, path, 'big'], {
      env: { ...process.env, ...home.env, GOBSTOPPER_FAULT: 'vault.after_manifest:kill' },
    });
    await expect(child).rejects.toMatchObject({ signal: 'SIGKILL' });
    expect(readdirSync(home.layout.manifests)).toHaveLength(1);
    expect(readdirSync(home.layout.custody)).toHaveLength(1);
    expect(await readIndex(home.layout)).toEqual([]);

    // The dead process's hold does not block prune. Its manifest has no index line, which prune
    // cannot tell from a line lost later, so it stays; the retry writes the same manifest and
    // gives it its line.
    expect(await pruneVault(home.layout, { apply: true })).toMatchObject({ manifests_removed: 0, chunks_removed: 0, unindexed_kept: 1 });
    expect(readdirSync(home.layout.custody)).toEqual([]);
    const stranded = readdirSync(home.layout.manifests)[0];
    const { entry } = await snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot' });
    expect(entry.sha256).toBe(stranded);
    expect(await readIndex(home.layout)).toEqual([entry]);
    expect(await pruneVault(home.layout, { apply: true })).toMatchObject({ manifests_removed: 0, unindexed_kept: 0 });
  });
});
