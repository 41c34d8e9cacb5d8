/**
 * Snapshotters and prune must not overlap: a snapshot reuses existing chunks and writes its manifest
 * before it is indexed, and a prune running in between would see those as unreferenced and delete
 * them. So a snapshotter registers a hold file (taken under `custody.lock`, then released so many
 * snapshotters run at once), and prune takes `custody.lock` for its whole run and waits until no live
 * hold remains. Holds of dead processes are removed by prune; a hold records its process as a lock
 * does (process-stamp.ts), so one whose pid was reused since is recognised as dead too.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { lstat, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { constants as fsConstants } from 'node:fs';
import { GobstopperError } from '../errors.js';
import { keepOnExit, removeOnExit } from '../exit-cleanup.js';
import { FileLock } from './lock.js';
import type { VaultLayout } from './layout.js';
import { createExclusive, tempName } from './private-fs.js';
import { currentStamp, holderText, removalAdvice, stampFields, stampGone, type ProcessStamp } from './process-stamp.js';

const CUSTODY_LOCK_WAIT_MS = 60_000;
const DRAIN_WAIT_MS = 120_000;

const UNREADABLE_HOLD_STALE_MS = 10_000;

async function olderThan(path: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await lstat(path)).mtimeMs > ms;
  } catch {
    return true;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The custody directories the current async call chain already holds. A hold taken inside another
 * (undo holds the vault from choosing a snapshot until its receipt names it, and archives and
 * publishes inside that) is the outer one: asking the gate again would wait behind a prune that is
 * itself waiting for the outer hold to go. Operations that merely run side by side in one process
 * (apply's snapshot and publication) are separate chains, and each takes its own hold.
 */
const heldHere = new AsyncLocalStorage<ReadonlySet<string>>();

/**
 * Runs `body` while holding a shared custody of the vault (many snapshotters at once). `waitMs` is
 * how long to wait behind a running prune before failing with the lock's vault_busy.
 */
export async function withSharedCustody<T>(layout: VaultLayout, body: () => Promise<T>, waitMs = CUSTODY_LOCK_WAIT_MS): Promise<T> {
  const held = heldHere.getStore();
  if (held?.has(layout.custody)) return body();
  return heldHere.run(new Set([...(held ?? []), layout.custody]), () => holdShared(layout, body, waitMs));
}

async function holdShared<T>(layout: VaultLayout, body: () => Promise<T>, waitMs: number): Promise<T> {
  const holdPath = join(layout.custody, `${tempName('hold')}.json`);
  const gate = await FileLock.acquire(layout.custodyLock, { waitMs, what: 'the vault (a prune is running)' });
  // A stop signal skips the `finally` below; the hold must not outlive this process either.
  const forget = removeOnExit(holdPath);
  try {
    const handle = await createExclusive(holdPath).catch((error: unknown) => {
      forget();
      throw error;
    });
    try {
      await handle.writeFile(JSON.stringify(currentStamp()) + '\n');
    } finally {
      await handle.close();
    }
  } finally {
    await gate.release();
  }
  try {
    return await body();
  } finally {
    keepOnExit(holdPath);
    await unlink(holdPath).catch(() => undefined);
  }
}

interface LiveHold {
  path: string;
  /** Null while a hold is being written (or was left unreadable, and is not yet old enough to judge). */
  holder: ProcessStamp | null;
}

function parseHold(text: string): ProcessStamp | null {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 && typeof value.host === 'string') return { pid: value.pid, host: value.host, ...stampFields(value) };
  } catch {
    // Judged by age below.
  }
  return null;
}

/** Live holds in the custody directory; holds of dead processes are removed on the way. */
async function liveHolds(layout: VaultLayout): Promise<LiveHold[]> {
  let names: string[];
  try {
    names = await readdir(layout.custody);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const live: LiveHold[] = [];
  for (const name of names.sort()) {
    const path = join(layout.custody, name);
    const text = await readFile(path, { encoding: 'utf8', flag: fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK }).catch(() => null);
    const holder = text === null ? null : parseHold(text);
    // An unreadable hold is a process that died between creating and filling it (or is doing so now).
    const dead = holder === null ? await olderThan(path, UNREADABLE_HOLD_STALE_MS) : stampGone(holder);
    if (dead) await unlink(path).catch(() => undefined);
    else live.push({ path, holder });
  }
  return live;
}

/** Holds named in a "busy" message; the rest are counted. */
const HOLDS_NAMED = 3;

function vaultBusy(layout: VaultLayout, holds: readonly LiveHold[]): GobstopperError {
  const named = holds.slice(0, HOLDS_NAMED).map((h) => `${h.holder ? holderText(h.holder) : 'a process still writing its hold'} (${h.path})`);
  const more = holds.length > named.length ? ` and ${holds.length - named.length} more in ${layout.custody}` : '';
  const one = holds.length === 1;
  const advice = removalAdvice(
    holds.map((h) => h.holder),
    one ? {} : { wait: 'wait for them to finish', files: 'those files' },
  );
  return new GobstopperError('vault_busy', `the vault is busy: ${holds.length} snapshot(s) in progress, by ${named.join(', ')}${more}; ${advice}`, {
    details: { holds: holds.map((h) => h.path) },
  });
}

/** Runs `body` with the vault to itself: no snapshot is in progress and none can start. */
export async function withExclusiveCustody<T>(layout: VaultLayout, body: () => Promise<T>, drainWaitMs = DRAIN_WAIT_MS): Promise<T> {
  const gate = await FileLock.acquire(layout.custodyLock, { waitMs: CUSTODY_LOCK_WAIT_MS, what: 'the vault (another prune is running)' });
  try {
    const deadline = Date.now() + drainWaitMs;
    for (;;) {
      const live = await liveHolds(layout);
      if (live.length === 0) break;
      if (Date.now() >= deadline) throw vaultBusy(layout, live);
      await sleep(50);
    }
    return await body();
  } finally {
    await gate.release();
  }
}
