/**
 * Whether an error code names a failure the file system raised: Node's errno names (`ENOSPC`), or
 * the lowercased form every command's JSON error gives them (`enospc`). A full disk or a directory
 * made unwritable is the machine's state, not the session's.
 */
import { constants } from 'node:os';

const ERRNO_NAMES: ReadonlySet<string> = new Set(Object.keys(constants.errno).map((code) => code.toLowerCase()));

export function isFilesystemCode(code: unknown): boolean {
  return typeof code === 'string' && ERRNO_NAMES.has(code.toLowerCase());
}

/** The errno name of an error Node's file-system calls raised (they name the call), else null: a fault of the code has neither. */
export function systemErrorCode(error: unknown): string | null {
  if (!(error instanceof Error)) return null;
  const { code, syscall } = error as NodeJS.ErrnoException;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && typeof syscall === 'string' ? code : null;
}
