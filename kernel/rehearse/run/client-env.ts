import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** A key only the stub accepts; the clients need some key to start, and never a real one. */
export const DUMMY_API_KEY = 'gobstopper-rehearsal-offline-key';

/**
 * The environment every rehearsed client starts from, built from nothing: the caller's variables
 * (credentials, proxies, config homes) are never passed on. Only PATH is kept, because a client's
 * launcher may need to find `node`. Every home and temp directory points into the private work dir.
 */
export function baseClientEnv(home: string, parentEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const dirs = {
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_RUNTIME_DIR: join(home, '.runtime'),
    TMPDIR: join(home, '.tmp'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return {
    PATH: parentEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    ...dirs,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
  };
}
