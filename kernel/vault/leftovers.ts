/**
 * Files that runs killed midway leave where no later run of theirs looks again: the lock of an
 * operation that will never be retried under its id (each undo and fork picks a new one), a receipt's
 * temporary file, a staging file (a hard link to a fork already published, once the fork is
 * deleted the only copy of its bytes), a fork's partial copy beside the sessions (publication
 * across file systems). `prune --apply` removes those whose process is gone.
 */
import { join } from 'node:path';
import { stagingDir, type PathEnv } from '../paths.js';
import { sweepDeadCopiesOf } from '../publish/publish.js';
import { sweepStaleStaging } from '../publish/staging.js';
import type { VaultLayout } from './layout.js';
import { processAlive, removeStaleLock } from './lock.js';
import { isTempName, namesIn, unlinkQuietly } from './private-fs.js';

/** The pid in a temporary name (`.tmp-<pid>-<hex>`), or null. */
function ownerOf(name: string): number | null {
  const match = /^\.tmp-(\d+)-/.exec(name);
  return match ? Number(match[1]) : null;
}

/**
 * Removes what dead runs left in the operations and staging directories, and beside `forkPaths`
 * (every fork path a receipt named, those of receipts just settled too); returns how many files.
 */
export async function sweepDeadRunLeftovers(layout: VaultLayout, env: PathEnv, forkPaths: readonly string[] = []): Promise<number> {
  let removed = 0;
  for (const name of await namesIn(layout.operations)) {
    const path = join(layout.operations, name);
    if (name.endsWith('.lock')) {
      if (await removeStaleLock(path)) removed += 1;
      continue;
    }
    const owner = isTempName(name) ? ownerOf(name) : null;
    if (owner !== null && !processAlive(owner)) {
      await unlinkQuietly(path);
      removed += 1;
    }
  }
  return removed + (await sweepStaleStaging(stagingDir(env))) + (await sweepDeadCopiesOf(forkPaths));
}
