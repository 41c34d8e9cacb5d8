import { mkdirSync } from 'node:fs';
import { withLock } from '../../vault/lock.js';
import { pluginsLockPath } from './locations.js';

/** A bundle copy takes seconds at most; a holder slower than this is named in the error instead. */
const PLUGINS_LOCK_WAIT_MS = 30_000;

/**
 * `plugin add` and `plugin remove` change the plugins directory and the trust file together, and
 * the trust file is read, changed and written whole: two of them at once would lose a pin (a bundle
 * on disk that is never used) or race each other's copy into the same version directory. One at a
 * time, then.
 */
export async function withPluginsLock<T>(dataDir: string, body: () => T | Promise<T>): Promise<T> {
  // Private like the rest of gobstopper's data directory, which this may be the first to create.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return withLock(pluginsLockPath(dataDir), { waitMs: PLUGINS_LOCK_WAIT_MS, what: 'the plugins directory' }, async () => body());
}
