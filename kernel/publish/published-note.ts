import { lstatSync } from 'node:fs';
import { noteForStop } from '../exit-cleanup.js';

/**
 * What an interrupt reports once a fork or restore is already in the provider's store: the file is
 * there to resume, and the receipt that may still be pending is completed by the same command run
 * again (publication is idempotent), which also prints the resume command.
 */
export function publishedNote(path: string): string {
  return `${path} was already published; run the same command again to finish its record and see how to resume it`;
}

/**
 * Notes, for a stop, a publication about to be linked at `path` (a name that was free): the link
 * lands before the command gets to say so, and the fork is then re-read whole (seconds for a large
 * one), so a stop in between asks whether the file is there rather than assuming it is not.
 */
export function notePublishing(path: string): void {
  noteForStop(() => (lstatSync(path, { throwIfNoEntry: false })?.isFile() ? publishedNote(path) : null));
}
