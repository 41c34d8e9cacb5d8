/**
 * Where a provider's resume command should start (its `resume_cwd`): the session's recorded
 * directory when it still exists, since that is where the resumed session's tools run; none when it
 * is gone, with the note a user needs, since a `cd` into it would only make the command fail.
 */
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';

export interface ResumeDirectory {
  resume_cwd: string | null;
  /** Set when the recorded directory could not be used. */
  note: string | null;
}

export function resumeDirectory(cwd: string | null | undefined): ResumeDirectory {
  if (!cwd || !isAbsolute(cwd)) return { resume_cwd: null, note: null };
  if (isDirectory(cwd)) return { resume_cwd: cwd, note: null };
  return { resume_cwd: null, note: `the session's directory ${cwd} no longer exists; the resumed session runs in the directory you start it from` };
}

/** Whether `path` is a directory, following links; false for anything missing or unreadable. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
