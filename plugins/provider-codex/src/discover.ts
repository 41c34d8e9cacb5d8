/**
 * provider/discover: every rollout under the Codex home, newest first, described from heads and
 * tails only. The client keeps live rollouts in `sessions/YYYY/MM/DD/` and moves archived ones to
 * `archived_sessions/`.
 */
import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DiscoveredSession, ProviderDiscoverParams, ProviderDiscoverResult, UnreadableTranscript } from '../../../sdk/index.js';
import { listStoreDir } from '../../../sdk/store-dir.js';
import { noteLinked, noteNotListed, notATranscript, noteUnreadable } from '../../../sdk/unreadable.js';
import { isDirectory } from '../../../sdk/resume-dir.js';
import { describeRollout } from './describe.js';
import { isRolloutFileName } from './rollout-name.js';

const ROLLOUT_DIRS = ['sessions', 'archived_sessions'];
/** sessions/YYYY/MM/DD/<file>: files sit at most four levels below a rollout folder. */
const MAX_DEPTH = 4;
const MAX_FILES = 100_000;

export function codexHome(params: { home?: string | null }, env: NodeJS.ProcessEnv = process.env): string {
  if (params.home) return resolve(params.home);
  if (env.CODEX_HOME) return resolve(env.CODEX_HOME);
  return join(env.HOME || homedir(), '.codex');
}

/**
 * Rollout files below `root`; symbolic links are not followed. A rollout name that is a link is
 * passed to `onLink`, so the user hears why that session is not listed; so is what `listStoreDir`
 * cannot list or name, to `onHidden`.
 */
export function findRollouts(
  root: string,
  limit = MAX_FILES,
  onLink: (path: string) => void = () => {},
  onHidden: (path: string, reason: string) => void = () => {},
): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const entry of listStoreDir(dir, onHidden)) {
      if (found.length >= limit) return;
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < MAX_DEPTH) walk(path, depth + 1);
      else if (entry.isFile() && isRolloutFileName(entry.name)) found.push(path);
      else if (entry.isSymbolicLink() && isRolloutFileName(entry.name)) onLink(path);
    }
  };
  walk(root, 1);
  return found;
}

export function discover(params: ProviderDiscoverParams, now = Date.now()): ProviderDiscoverResult {
  const home = codexHome(params);
  const minMtime = params.max_age_secs === null || params.max_age_secs === undefined ? -Infinity : now - params.max_age_secs * 1000;
  const sessions: DiscoveredSession[] = [];
  const unreadable: UnreadableTranscript[] = [];
  for (const dir of ROLLOUT_DIRS) {
    for (const path of findRollouts(
      join(home, dir),
      MAX_FILES,
      (link) => noteLinked(unreadable, link),
      (hidden, reason) => noteNotListed(unreadable, hidden, reason),
    )) {
      let found: DiscoveredSession | null;
      try {
        // Age is checked on the inode first so old rollouts cost a stat, not a read.
        if (minMtime !== -Infinity && lstatSync(path).mtimeMs < minMtime) continue;
        found = describeRollout(path);
        if (found === null && lstatSync(path).size > 0) noteNotListed(unreadable, path, notATranscript('Codex'));
      } catch (error) {
        // A file that vanished since it was listed is simply gone; one that cannot be read (no
        // permission, an I/O error) is a session the user would otherwise never hear of.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') noteUnreadable(unreadable, path, error);
        continue;
      }
      if (found === null) continue;
      if ((found.session.mtime_ms ?? 0) < minMtime) continue;
      if (found.session.kind === 'subagent' && !params.include_subagents) continue;
      sessions.push(found);
    }
  }
  sessions.sort((a, b) => (b.session.mtime_ms ?? 0) - (a.session.mtime_ms ?? 0));
  const searched = ROLLOUT_DIRS.map((dir) => join(home, dir)).map((path) => ({ path, exists: isDirectory(path) }));
  return unreadable.length > 0 ? { sessions, unreadable, searched } : { sessions, searched };
}
