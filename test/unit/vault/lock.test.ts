import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withExclusiveCustody } from '../../../kernel/vault/custody.js';
import { ensureVault } from '../../../kernel/vault/layout.js';
import { FileLock } from '../../../kernel/vault/lock.js';
import { lockOperation } from '../../../kernel/publish/receipt.js';
import { makeVaultHome, type VaultHome } from './helpers.js';

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('lock files', () => {
  let home: VaultHome;
  let lockPath: string;
  beforeEach(async () => {
    home = makeVaultHome();
    await ensureVault(home.layout);
    lockPath = join(home.layout.root, 'test.lock');
  });
  afterEach(() => home.cleanup());

  it('breaks a lock whose holder died, and releases its own', async () => {
    writeFileSync(lockPath, JSON.stringify({ pid: deadPid(), host: hostname(), ts: 1 }));
    const lock = await FileLock.acquire(lockPath, { waitMs: 0, what: 'test' });
    await lock.release();
    expect(existsSync(lockPath)).toBe(false);
    expect(existsSync(`${lockPath}.break`)).toBe(false);
  });

  it('refuses a lock path that is not a regular file at once, and leaves it', async () => {
    mkdirSync(lockPath);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath, old, old);
    const started = Date.now();
    await expect(FileLock.acquire(lockPath, { waitMs: 60_000, what: 'x' })).rejects.toMatchObject({
      code: 'vault_insecure',
      message: `${lockPath}: is not a regular file, so it cannot be a lock; remove it; gobstopper creates its locks as regular files`,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(statSync(lockPath).isDirectory()).toBe(true);
  });

  it('waits, within its limit, for a stale lock another process is breaking', async () => {
    writeFileSync(lockPath, JSON.stringify({ pid: deadPid(), host: hostname(), ts: 1 }));
    writeFileSync(`${lockPath}.break`, JSON.stringify({ pid: process.ppid, host: hostname(), ts: Date.now() }));
    const started = Date.now();
    await expect(FileLock.acquire(lockPath, { waitMs: 300, what: 'x' })).rejects.toMatchObject({ code: 'lock_busy' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('waits for a live holder, then names it', async () => {
    writeFileSync(lockPath, JSON.stringify({ pid: process.ppid, host: hostname(), ts: 1 }));
    const started = Date.now();
    await expect(FileLock.acquire(lockPath, { waitMs: 150, what: 'the test resource' })).rejects.toMatchObject({
      code: 'lock_busy',
      message: expect.stringContaining(`the test resource is locked by process ${process.ppid} (${lockPath})`),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('never breaks a lock held on another host, or a fresh lock still being written', async () => {
    writeFileSync(lockPath, JSON.stringify({ pid: deadPid(), host: 'elsewhere.example', ts: 1 }));
    await expect(FileLock.acquire(lockPath, { waitMs: 0, what: 'x' })).rejects.toMatchObject({ code: 'lock_busy', message: expect.stringContaining('on elsewhere.example') });
    writeFileSync(lockPath, '');
    await expect(FileLock.acquire(lockPath, { waitMs: 0, what: 'x' })).rejects.toMatchObject({ code: 'lock_busy' });
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath, old, old);
    await (await FileLock.acquire(lockPath, { waitMs: 0, what: 'x' })).release();
  });

  it('gives a second run of the same operation an "already running" error, until the first dies', async () => {
    const operation = 'd'.repeat(64);
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'lock-holder-child.ts'), home.dataHome, operation], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => (d.toString().includes('locked') ? resolve() : undefined));
        child.on('exit', (code) => reject(new Error(`holder exited early (${code})`)));
      });
      await expect(lockOperation(home.layout, operation)).rejects.toMatchObject({
        code: 'operation_running',
        message: expect.stringContaining(`is already running (process ${child.pid})`),
      });
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.on('close', resolve));
    }
    const lock = await lockOperation(home.layout, operation);
    await lock.release();
  });

  it('makes prune wait for snapshots in progress and clears holds of dead processes', async () => {
    writeFileSync(join(home.layout.custody, 'hold-live.json'), JSON.stringify({ pid: process.pid, host: hostname() }));
    await expect(withExclusiveCustody(home.layout, async () => 'ran', 100)).rejects.toMatchObject({ code: 'vault_busy', message: expect.stringContaining('1 snapshot(s) in progress') });
    writeFileSync(join(home.layout.custody, 'hold-live.json'), JSON.stringify({ pid: deadPid(), host: hostname() }));
    expect(await withExclusiveCustody(home.layout, async () => 'ran', 100)).toBe('ran');
    expect(existsSync(join(home.layout.custody, 'hold-live.json'))).toBe(false);
  });
});
