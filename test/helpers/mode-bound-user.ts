import { execFileSync, spawnSync } from 'node:child_process';
import { binPath, type RunOptions } from './cli.js';
import type { TempHome } from './temp-home.js';

/**
 * How to run the CLI as a user whom file modes bind. Root writes through any mode, so under root the
 * home is handed to `nobody` and the CLI runs as that user; null when it cannot run the CLI here
 * (a checkout it may not read).
 */
export function modeBoundUser(h: TempHome): RunOptions | null {
  if (process.getuid?.() !== 0) return {};
  const nobody = { uid: 65534, gid: 65534 };
  execFileSync('chown', ['-R', `${nobody.uid}:${nobody.gid}`, h.root]);
  const probe = spawnSync(process.execPath, [binPath, '--version'], { cwd: h.root, env: { PATH: process.env.PATH ?? '', ...h.env }, stdio: 'ignore', ...nobody });
  return probe.status === 0 ? { user: nobody } : null;
}
