/** How `vault --verify` words a failure no more specific check explains: its code and message. */
import { GobstopperError } from '../errors.js';
import { filesystemMessage } from '../filesystem-message.js';

export interface CheckProblem {
  code: string;
  message: string;
}

/** A GobstopperError as it is; a file-system error in the words the refusing commands use; anything else is a bug, thrown. */
export function checkProblem(error: unknown): CheckProblem {
  if (error instanceof GobstopperError) return { code: error.code, message: error.message };
  // Node's bare errno text ("EACCES: permission denied, open '…'") says neither what to do nor that
  // the bytes may well be intact; the commands that refuse the same file say both.
  if (error instanceof Error) return { code: 'unreadable', message: filesystemMessage(error as NodeJS.ErrnoException) ?? error.message };
  throw error;
}
