import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { WatchLocks, watchLockPath } from '../../../kernel/watch/watch-locks.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

let home: TempHome | undefined;
const taken: WatchLocks[] = [];
afterEach(async () => {
  for (const locks of taken.splice(0)) await locks.release();
  home?.cleanup();
});

async function take(providers: string[]): Promise<WatchLocks> {
  const locks = await WatchLocks.take(home!.env, providers);
  taken.push(locks);
  return locks;
}

describe('watch locks', () => {
  it('are one per provider, in a directory of their own under the data directory', () => {
    expect(watchLockPath({ XDG_DATA_HOME: '/d', HOME: '/h' }, 'codex')).toBe('/d/gobstopper/locks/watch-codex.lock');
  });

  it('refuse a watch that shares a provider, naming it, and leave none of its other locks behind', async () => {
    home = makeTempHome();
    await take(['codex', 'claude_code']);
    const refused = WatchLocks.take(home.env, ['devin', 'codex']);
    await expect(refused).rejects.toMatchObject({ code: 'watch_running', details: { provider: 'codex', lock: watchLockPath(home.env, 'codex'), pid: process.pid } });
    expect(existsSync(watchLockPath(home.env, 'devin'))).toBe(false);
    // A watch of another provider runs beside it.
    await take(['devin']);
  });

  it('let go of every lock on release', async () => {
    home = makeTempHome();
    const locks = await take(['codex', 'claude_code']);
    await locks.release();
    for (const provider of ['codex', 'claude_code']) expect(existsSync(watchLockPath(home.env, provider))).toBe(false);
    await take(['codex', 'claude_code']);
  });

  it('cover a provider that appears while the watch runs, unless another watch holds it: that one is left to it, said once', async () => {
    home = makeTempHome();
    const all = await take(['claude_code']);
    const other = await take(['plugin_provider']);
    const first = await all.cover(['claude_code', 'codex', 'plugin_provider']);
    expect(first.watched).toEqual(['claude_code', 'codex']);
    expect(first.warnings).toEqual([expect.stringMatching(/^plugin_provider's sessions are left to the watch that holds them: another watch of plugin_provider is running as process \d+ \(lock .*watch-plugin_provider\.lock\); /)]);
    expect(existsSync(watchLockPath(home.env, 'codex'))).toBe(true);
    expect((await all.cover(['claude_code', 'codex', 'plugin_provider'])).warnings).toEqual([]);
    await other.release();
    expect(await all.cover(['claude_code', 'codex', 'plugin_provider'])).toEqual({ watched: ['claude_code', 'codex', 'plugin_provider'], warnings: [] });
    await all.release();
    expect(existsSync(watchLockPath(home.env, 'plugin_provider'))).toBe(false);
  });
});
