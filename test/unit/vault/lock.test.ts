import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withExclusiveCustody } from '../../../kernel/vault/custody.js';
import { ensureVault } from '../../../kernel/vault/layout.js';
import { FileLock, removeStaleLock } from '../../../kernel/vault/lock.js';
import { lockOperation, lockRestores } from '../../../kernel/publish/receipt.js';
import { makeVaultHome, type VaultHome } from './helpers.js';

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

const procStat = existsSync('/proc/self/stat') && existsSync('/proc/sys/kernel/random/boot_id');

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function startTicks(pid: number): string {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]!;
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
      const lockFile = join(home.layout.operations, `${operation}.lock`);
      await expect(lockOperation(home.layout, operation)).rejects.toMatchObject({
        code: 'operation_running',
        message: `operation ${operation.slice(0, 16)} is already running as process ${child.pid} (${lockFile}); wait for it to finish, then run the command again, or remove the file if no gobstopper process is running`,
        details: { operation, lock: lockFile },
      });
    } finally {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.on('close', resolve));
    }
    const lock = await lockOperation(home.layout, operation);
    await lock.release();
  });

  it('makes prune wait for snapshots in progress and clears holds of dead processes', async () => {
    const hold = join(home.layout.custody, 'hold-live.json');
    writeFileSync(hold, JSON.stringify({ pid: process.pid, host: hostname() }));
    await expect(withExclusiveCustody(home.layout, async () => 'ran', 100)).rejects.toMatchObject({
      code: 'vault_busy',
      message: `the vault is busy: 1 snapshot(s) in progress, by process ${process.pid} (${hold}); wait for it to finish, or remove the file if no gobstopper process is running`,
    });
    writeFileSync(join(home.layout.custody, 'hold-live.json'), JSON.stringify({ pid: deadPid(), host: hostname() }));
    expect(await withExclusiveCustody(home.layout, async () => 'ran', 100)).toBe('ran');
    expect(existsSync(join(home.layout.custody, 'hold-live.json'))).toBe(false);
  });

  it('names every hold file, and says which host to look at for a hold taken on another one', async () => {
    const here = join(home.layout.custody, 'hold-a.json');
    const there = join(home.layout.custody, 'hold-b.json');
    writeFileSync(here, JSON.stringify({ pid: process.pid, host: hostname() }));
    writeFileSync(there, JSON.stringify({ pid: deadPid(), host: 'elsewhere.example' }));
    await expect(withExclusiveCustody(home.layout, async () => 'ran', 100)).rejects.toMatchObject({
      code: 'vault_busy',
      message:
        `the vault is busy: 2 snapshot(s) in progress, by process ${process.pid} (${here}), process ${JSON.parse(readFileSync(there, 'utf8')).pid} on elsewhere.example (${there}); ` +
        'it was taken on elsewhere.example, which this host cannot check (another machine may share this vault); wait for them to finish, or remove those files if no gobstopper process is running on elsewhere.example',
    });
    // Neither is removed: the other host's holder cannot be probed from here.
    expect(existsSync(here) && existsSync(there)).toBe(true);
  });

  it('never breaks a lock taken on another host, and says so with the file to remove', async () => {
    writeFileSync(lockPath, JSON.stringify({ pid: deadPid(), host: 'elsewhere.example', ts: 1 }));
    await expect(FileLock.acquire(lockPath, { waitMs: 0, what: 'the vault index' })).rejects.toMatchObject({
      code: 'lock_busy',
      message: expect.stringContaining(
        `(${lockPath}); it was taken on elsewhere.example, which this host cannot check (another machine may share this vault); wait for it to finish, or remove the file if no gobstopper process is running on elsewhere.example`,
      ),
    });
    expect(existsSync(lockPath)).toBe(true);
  });

  it('records who holds a lock so that a later process with the same pid is not taken for it', async () => {
    const lock = await FileLock.acquire(lockPath, { waitMs: 0, what: 'x' });
    const recorded = JSON.parse(readFileSync(lockPath, 'utf8'));
    await lock.release();
    expect(recorded).toMatchObject({ pid: process.pid, host: hostname() });
    if (procStat) {
      expect(recorded.boot).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      expect(recorded.start).toBe(startTicks(process.pid));
    }
  });

  describe.runIf(procStat)('with process start times (Linux)', () => {
    let sleeper: ChildProcess;
    beforeEach(async () => {
      // A live process that is not a gobstopper run: what a killed run's pid may belong to later.
      sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      await new Promise((resolve) => sleeper.once('spawn', resolve));
    });
    afterEach(async () => {
      sleeper.kill('SIGKILL');
      await new Promise((resolve) => sleeper.once('close', resolve));
    });
    const reused = () => ({ pid: sleeper.pid!, host: hostname(), start: String(Number(startTicks(sleeper.pid!)) + 1) });

    it('breaks an operation lock whose pid now belongs to another process, or that was taken before a reboot', async () => {
      const operation = 'e'.repeat(64);
      const lockFile = join(home.layout.operations, `${operation}.lock`);
      writeFileSync(lockFile, JSON.stringify({ ...reused(), ts: 1 }));
      await (await lockOperation(home.layout, operation)).release();
      writeFileSync(lockFile, JSON.stringify({ pid: sleeper.pid, host: hostname(), ts: 1, boot: '00000000-0000-4000-8000-000000000000', start: startTicks(sleeper.pid!) }));
      await (await lockOperation(home.layout, operation)).release();
      // prune's sweep judges them the same way.
      writeFileSync(lockFile, JSON.stringify({ ...reused(), ts: 1 }));
      expect(await removeStaleLock(lockFile)).toBe(true);
    });

    it('keeps a lock whose holder is the process it names, and one that records only a live pid', async () => {
      const operation = 'f'.repeat(64);
      const lockFile = join(home.layout.operations, `${operation}.lock`);
      writeFileSync(lockFile, JSON.stringify({ pid: sleeper.pid, host: hostname(), ts: 1, start: startTicks(sleeper.pid!) }));
      await expect(lockOperation(home.layout, operation)).rejects.toMatchObject({ code: 'operation_running' });
      // A lock written before start times were recorded: the pid is all there is to judge by.
      writeFileSync(lockFile, JSON.stringify({ pid: sleeper.pid, host: hostname(), ts: 1 }));
      await expect(lockOperation(home.layout, operation)).rejects.toMatchObject({
        code: 'operation_running',
        message: expect.stringContaining(`(${lockFile}); wait for it to finish, then run the command again, or remove the file if no gobstopper process is running`),
      });
    });

    it('lets prune clear a custody hold whose pid now belongs to another process', async () => {
      const hold = join(home.layout.custody, 'hold-reused.json');
      writeFileSync(hold, JSON.stringify(reused()));
      expect(await withExclusiveCustody(home.layout, async () => 'ran', 100)).toBe('ran');
      expect(existsSync(hold)).toBe(false);
    });
  });

  it('makes a second undo of the same file wait for the first, then refuses it naming the lock', async () => {
    const path = join(home.sessions, 'a.jsonl');
    const first = await lockRestores(home.layout, 'claude_code', path);
    const waiting = lockRestores(home.layout, 'claude_code', path, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await first.release();
    await (await waiting).release();

    const held = await lockRestores(home.layout, 'claude_code', path);
    try {
      const refused = await lockRestores(home.layout, 'claude_code', path, 100).catch((error: unknown) => error);
      expect(refused).toMatchObject({
        code: 'undo_running',
        message: `an undo of ${path} is already running as process ${process.pid} (${held.path}); wait for it to finish, then run the command again, or remove the file if no gobstopper process is running`,
      });
      // Another file is not held up.
      await (await lockRestores(home.layout, 'claude_code', join(home.sessions, 'b.jsonl'), 0)).release();
    } finally {
      await held.release();
    }
  });
});

