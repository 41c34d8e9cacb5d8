import { lstatSync } from 'node:fs';
import { noteForStop } from '../exit-cleanup.js';
import { publishNoClobber, type Published, type PublishOptions } from './publish.js';

/**
 * What an interrupt reports once a fork or restore is already in the provider's store: the file is
 * there to resume, and the receipt that may still be pending is completed by the same command run
 * again (publication is idempotent), which also prints the resume command.
 */
export function publishedNote(path: string): string {
  return `${path} was already published; run the same command again to finish its record and see how to resume it`;
}

/**
 * What an interrupt reports once the publication is recorded too: nothing is left to finish, but
 * the answer that would have said how to resume it was not printed.
 */
export function completedNote(path: string, resumeCommand: string): string {
  return `${path} was published; resume it with: ${resumeCommand}`;
}

/**
 * publishNoClobber with the stop note kept true throughout: from just before the link, a stop asks
 * whether the file is there (the link lands before the command gets to say so, and the fork is then
 * re-read whole, seconds for a large one); once published, it is; a publication that failed clears
 * the note.
 */
export async function publishNoted(staging: string, target: string, options: PublishOptions): Promise<Published> {
  noteForStop(() => (lstatSync(target, { throwIfNoEntry: false })?.isFile() ? publishedNote(target) : null));
  try {
    const published = await publishNoClobber(staging, target, options);
    noteForStop(publishedNote(target));
    return published;
  } catch (error) {
    noteForStop(null);
    throw error;
  }
}
