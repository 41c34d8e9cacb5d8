/**
 * An apply's fork is named after its operation (the source's path and bytes, and the plan), so an
 * apply run again after the vault lost that operation's receipt (the vault deleted, or its receipt
 * moved aside) meets the fork its earlier run published. Without the receipt nothing records which
 * bytes were published there, so the fork is neither taken over nor replaced: the refusal says what
 * the file is and what to do.
 */
import { lstat } from 'node:fs/promises';
import { readPrefix } from '../../sdk/jsonl.js';
import { GobstopperError } from '../errors.js';
import { checkPublishTarget } from '../publish/publish.js';
import { forkTargetOf, resumeCommandText, type ForkPlace } from './publication.js';

/** How far into the file its session id is looked for: the first records carry it. */
const ID_SEARCH_BYTES = 64 * 1024;

/** Whether the regular file at `path` carries `sessionId` in its first records. */
async function holdsSessionId(path: string, sessionId: string): Promise<boolean> {
  const st = await lstat(path).catch(() => null);
  if (!st?.isFile()) return false;
  try {
    return readPrefix(path, ID_SEARCH_BYTES).includes(sessionId);
  } catch {
    return false;
  }
}

/**
 * Refuses a taken fork target, as assertForkTargetFree does, for an operation that has no receipt
 * and whose fork id is derived from the operation (apply's): a file at the target holding that id
 * was written for this operation, and is named as the earlier run's fork.
 */
export async function assertNoUnrecordedFork(place: ForkPlace, now: Date): Promise<void> {
  const target = await forkTargetOf(place, now);
  try {
    await checkPublishTarget(target.target_path);
  } catch (error) {
    if (!(error instanceof GobstopperError && error.code === 'target_exists') || !(await holdsSessionId(target.target_path, place.outputSessionId))) throw error;
    const path = target.target_path;
    const resume = resumeCommandText(target.resume_command, target.resume_cwd, target.resume_env);
    throw new GobstopperError(
      'target_exists',
      `${path} is the fork an earlier apply of these same bytes and plan published, but the vault has no record of it (was the vault deleted?); nothing was written. Resume it as it is (${resume}), or move it elsewhere and run apply again to archive the source and record a new fork`,
      { details: { path, output_session_id: place.outputSessionId, resume_command: resume } },
    );
  }
}
