/**
 * Cross-process exclusive locks as files created with O_EXCL. The file records who holds it (pid,
 * host and, where the system tells, boot and start time: see process-stamp.ts), so a lock left
 * behind by a crashed process is recognised and broken even once its pid is reused, and a live holder
 * is named in the "busy" message. Breaking goes through a second `<lock>.break` file so two processes
 * that both find the same stale lock cannot delete a fresh one the other has just taken.
 */
import { lstat, readFile, unlink } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import { GobstopperError } from '../errors.js';
import { keepOnExit, removeOnExit } from '../exit-cleanup.js';
import { insecureVault } from './errors.js';
import { createExclusive } from './private-fs.js';
import { currentStamp, holderText, removalAdvice, stampFields, stampGone, type ProcessStamp } from './process-stamp.js';

export { processAlive } from './process-stamp.js';

export interface LockHolder extends ProcessStamp {
  ts: number;
}

export interface LockOptions {
  /** How long to wait for a busy lock; 0 tries once. */
  waitMs: number;
  /** What the lock protects, for messages ("the vault index", "operation 1a2b…"). */
  what: string;
}

/** A lock file whose holder is unknown (empty or torn) is treated as stale after this long. */
const UNREADABLE_STALE_MS = 10_000;
/** A `.break` file older than this was left by a process that died while breaking a lock. */
const BREAK_STALE_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class LockBusyError extends GobstopperError {
  constructor(
    readonly lockPath: string,
    readonly holder: LockHolder | null,
    what: string,
  ) {
    const by = holder ? ` by ${holderText(holder)}` : '';
    super('lock_busy', `${what} is locked${by} (${lockPath}); ${removalAdvice([holder])}`, {
      details: { lock: lockPath, ...(holder ? { pid: holder.pid } : {}) },
    });
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 && typeof value.host === 'string' && typeof value.ts === 'number') {
      return { pid: value.pid, host: value.host, ts: value.ts, ...stampFields(value) };
    }
  } catch {
    // Torn or foreign content: judged by age below.
  }
  return null;
}

interface Observed {
  holder: LockHolder | null;
  ino: number;
  mtimeMs: number;
  text: string;
}

async function observe(path: string): Promise<Observed | null> {
  try {
    const st = await lstat(path);
    // Only this code creates lock files; anything else there was put by hand and is not ours to remove.
    if (!st.isFile()) throw insecureVault(path, 'is not a regular file, so it cannot be a lock', 'remove it; gobstopper creates its locks as regular files');
    const text = await readFile(path, { encoding: 'utf8', flag: fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK });
    return { holder: parseHolder(text), ino: st.ino, mtimeMs: st.mtimeMs, text };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function isStale(seen: Observed): boolean {
  if (seen.holder === null) return Date.now() - seen.mtimeMs > UNREADABLE_STALE_MS;
  // A holder on another host cannot be probed; only a person can judge it (the message says so).
  return stampGone(seen.holder);
}

/**
 * Creates the lock file `path` for this process. A stop signal (Ctrl-C) ends the process without
 * the releases its `finally` blocks would run, so the file is also removed on the way out; it is
 * noted before the create, since a signal can land between the file's creation and the code after
 * the await. The note is dropped again when the create fails or the lock is released (unlinkOwn).
 */
async function tryCreate(path: string): Promise<LockHolder | null> {
  const holder: LockHolder = { ...currentStamp(), ts: Date.now() };
  const forget = removeOnExit(path);
  let handle;
  try {
    handle = await createExclusive(path);
  } catch (error) {
    forget();
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(holder) + '\n');
  } finally {
    await handle.close();
  }
  return holder;
}

/**
 * Removes `path` only if it is still exactly the stale lock that was observed. True when the lock
 * is gone (removed here or by someone else), false when it is still there: the caller then waits
 * like for a busy lock instead of trying again at once.
 */
async function breakStale(path: string, seen: Observed): Promise<boolean> {
  const breaker = `${path}.break`;
  const mine = await tryCreate(breaker);
  if (!mine) {
    const other = await observe(breaker);
    if (other && Date.now() - other.mtimeMs > BREAK_STALE_MS) await unlink(breaker).catch(() => undefined);
    return false;
  }
  try {
    const again = await observe(path);
    if (!again) return true;
    if (again.ino !== seen.ino || again.text !== seen.text) return false;
    return await unlink(path).then(
      () => true,
      () => false,
    );
  } finally {
    await unlinkOwn(breaker);
  }
}

/**
 * Removes a lock file this process created. It stops being removed at exit first: once it is gone,
 * another process may take the same name, and an exit hook must not remove that one's lock.
 */
async function unlinkOwn(path: string): Promise<void> {
  keepOnExit(path);
  await unlink(path).catch(() => undefined);
}

/** Removes the lock at `path` when its holder is gone (as acquiring it would); true when removed. */
export async function removeStaleLock(path: string): Promise<boolean> {
  const seen = await observe(path);
  return seen !== null && isStale(seen) && (await breakStale(path, seen));
}

export class FileLock {
  private released = false;

  private constructor(
    readonly path: string,
    private readonly holder: LockHolder,
  ) {}

  /** Takes the lock, waiting up to `waitMs` for a live holder; stale locks are broken. */
  static async acquire(path: string, options: LockOptions): Promise<FileLock> {
    const deadline = Date.now() + options.waitMs;
    let pause = 2;
    for (;;) {
      const holder = await tryCreate(path);
      if (holder) return new FileLock(path, holder);
      const seen = await observe(path);
      if (seen === null) continue;
      if (isStale(seen) && (await breakStale(path, seen))) continue;
      if (Date.now() >= deadline) throw new LockBusyError(path, seen.holder, options.what);
      await sleep(Math.min(pause, Math.max(1, deadline - Date.now())));
      pause = Math.min(pause * 2, 100);
    }
  }

  /** Releases the lock if this process still holds it. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const seen = await observe(this.path);
    if (seen?.holder && seen.holder.pid === this.holder.pid && seen.holder.ts === this.holder.ts && seen.holder.host === this.holder.host) await unlinkOwn(this.path);
    else keepOnExit(this.path);
  }
}

export async function withLock<T>(path: string, options: LockOptions, body: () => Promise<T>): Promise<T> {
  const lock = await FileLock.acquire(path, options);
  try {
    return await body();
  } finally {
    await lock.release();
  }
}

