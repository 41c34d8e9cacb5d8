/**
 * One watch per provider at a time. Two watches that both cover a provider (two terminals, a
 * `watch --once` from cron beside a running `watch`, or `watch` beside `watch --provider codex`)
 * would otherwise decide on the same sessions side by side, each with its own state, and under
 * different policies publish two forks of one session. So each provider has its own lock, and a
 * watch holds the lock of every provider it covers for as long as it runs; watches of disjoint
 * providers still run together.
 *
 * The locks are the vault's lock files (vault/lock.ts): a lock whose holder is gone (killed, or
 * from before a reboot) is broken by the next watch, one whose holder is alive names its pid.
 * They live in a directory of their own under the data directory, not beside the state: a data
 * directory made read-only once a watch has run still lets a watch take its locks (and apply write
 * its vault and staging), so the pass's work is done and only saving the state fails (a warning).
 */
import { dirname, join } from 'node:path';
import { GobstopperError } from '../errors.js';
import { dataDir, type PathEnv } from '../paths.js';
import { FileLock, LockBusyError } from '../vault/lock.js';
import { ensurePrivateDir } from '../vault/private-fs.js';
import { holderText, removalAdvice } from '../vault/process-stamp.js';

export function watchLockPath(env: PathEnv, provider: string): string {
  // A provider id is [A-Za-z0-9_.-]+ (common.schema.json), so it never leads out of the directory.
  return join(dataDir(env), 'locks', `watch-${provider}.lock`);
}

export class WatchLocks {
  private readonly held = new Map<string, FileLock>();
  /** Providers found held by another watch after this one started: said once while they stay so. */
  private readonly busySaid = new Set<string>();

  private constructor(private readonly env: PathEnv) {}

  /** The locks of every provider in `providers`, or `watch_running` naming the first one held elsewhere. */
  static async take(env: PathEnv, providers: readonly string[]): Promise<WatchLocks> {
    const locks = new WatchLocks(env);
    try {
      for (const provider of [...new Set(providers)].sort()) {
        const busy = await locks.tryTake(provider);
        if (busy) throw watchRunning(provider, busy);
      }
    } catch (error) {
      await locks.release();
      throw error;
    }
    return locks;
  }

  /**
   * The providers of `providers` this watch may decide on in a pass: those it holds, and any it
   * can take now (a provider installed since the watch started is listed by a watch of every
   * provider without having been locked). One another watch holds is left to that watch, with a
   * warning the first time.
   */
  async cover(providers: readonly string[]): Promise<{ watched: string[]; warnings: string[] }> {
    const watched: string[] = [];
    const warnings: string[] = [];
    for (const provider of providers) {
      if (this.held.has(provider)) {
        watched.push(provider);
        continue;
      }
      const busy = await this.tryTake(provider);
      if (busy === null) {
        this.busySaid.delete(provider);
        watched.push(provider);
      } else if (!this.busySaid.has(provider)) {
        this.busySaid.add(provider);
        warnings.push(`${provider}'s sessions are left to the watch that holds them: ${watchRunning(provider, busy).message}`);
      }
    }
    return { watched, warnings };
  }

  /** Lets go of every lock; a stop signal's exit removes them too (vault/lock.ts). */
  async release(): Promise<void> {
    const held = [...this.held.values()];
    this.held.clear();
    for (const lock of held) await lock.release();
  }

  /** Null once held, or the error that says who holds it. */
  private async tryTake(provider: string): Promise<LockBusyError | null> {
    const path = watchLockPath(this.env, provider);
    await ensurePrivateDir(dirname(path));
    try {
      this.held.set(provider, await FileLock.acquire(path, { waitMs: 0, what: `the watch of ${provider}` }));
      return null;
    } catch (error) {
      if (error instanceof LockBusyError) return error;
      throw error;
    }
  }
}

/** Who holds the provider's lock and where it is, so a person can stop that watch or judge a leftover. */
function watchRunning(provider: string, busy: LockBusyError): GobstopperError {
  const by = busy.holder ? ` as ${holderText(busy.holder)}` : '';
  const advice = removalAdvice([busy.holder], { wait: 'stop that watch first' });
  return new GobstopperError('watch_running', `another watch of ${provider} is running${by} (lock ${busy.lockPath}); ${advice}`, {
    details: { provider, lock: busy.lockPath, ...(busy.holder ? { pid: busy.holder.pid, host: busy.holder.host } : {}) },
  });
}
