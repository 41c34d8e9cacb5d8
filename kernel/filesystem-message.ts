/**
 * A file-system failure the kernel did not expect (a full disk, a vault made unwritable, a file
 * standing where a directory belongs) as what happened, where, and what to do, instead of Node's
 * bare errno text. Nothing was published: every write goes through private staging or
 * content-addressed files first.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';

export interface ErrnoLike {
  code?: unknown;
  path?: unknown;
  /** The second path of a two-path call (link, rename, copyfile): where it was going. */
  dest?: unknown;
  syscall?: unknown;
}

const ADVICE: Record<string, string> = {
  ENOSPC: 'the disk is full; free some space and run the command again',
  EDQUOT: 'the disk quota is used up; free some space and run the command again',
  // A shell's `ulimit -f` (or the file system's largest file) stops a chunk or a fork mid-write.
  EFBIG: 'the file would grow past the largest file this process may write (ulimit -f) or the file system holds; raise that limit and run the command again',
  EROFS: 'the file system is read-only; point XDG_DATA_HOME (or the session home) at a writable one',
  EISDIR: 'a directory stands where a file is expected; move it aside',
};

/** Calls that only look or read: the advice for a refusal is about reading. */
const READING_CALLS = new Set(['read', 'stat', 'lstat', 'scandir', 'opendir', 'readlink', 'realpath', 'access']);
/** Calls that change something: the advice is about writing. (`open` may be either.) */
const WRITING_CALLS = new Set(['write', 'mkdir', 'rename', 'link', 'symlink', 'unlink', 'rmdir', 'rm', 'copyfile', 'chmod', 'utime', 'futime', 'fsync']);

function permissionAdvice(code: 'EACCES' | 'EPERM', syscall: unknown, path: string | null, dest: string | null): string {
  const what = code === 'EACCES' ? 'permission denied' : 'the operation is not permitted there';
  const call = typeof syscall === 'string' ? syscall : '';
  if (dest) return `${what}; check that you own ${dirname(dest)} and can write to it`;
  if (READING_CALLS.has(call)) return `${what}; check that you can read it and enter every directory on the way to it`;
  if (WRITING_CALLS.has(call)) return `${what}; check that you own that directory and can write to it`;
  // An open that was to create the file is refused by its directory: the file is not there to fix.
  if (call === 'open' && path !== null && isMissing(path)) return `${what}; it does not exist yet, so check that you own ${dirname(path)} and can write to it`;
  return `${what}; check the permissions of that file and of every directory on the way to it`;
}

/** True only when the path is known not to exist; a directory that cannot be searched says nothing. */
function isMissing(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

/** The nearest existing ancestor of `path`, when it is not a directory (what ENOTDIR means). */
function fileInTheWay(path: string): string | null {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const st = statSync(dir, { throwIfNoEntry: false });
      if (st) return st.isDirectory() ? null : dir;
    } catch {
      // ENOTDIR again: the file is further up.
    }
  }
  return null;
}

export function filesystemMessage(error: ErrnoLike): string | null {
  const code = typeof error.code === 'string' ? error.code : '';
  // Node asks for the working directory (project config search, relative paths) with no path to
  // name: its "uv_cwd" text says nothing of a directory deleted or moved from under the shell.
  if (error.syscall === 'uv_cwd' && code === 'ENOENT') return 'the current directory no longer exists (deleted or moved); cd to an existing directory and run the command again (ENOENT)';
  const advice = filesystemAdvice(error);
  if (advice === null) return null;
  const path = typeof error.path === 'string' ? error.path : null;
  const dest = typeof error.dest === 'string' ? error.dest : null;
  // A link or rename is refused for the directory it writes into, which is dest's, not path's.
  const where = dest ? ` from ${path ?? 'a file'} to ${dest}` : path ? ` on ${path}` : '';
  const what = typeof error.syscall === 'string' ? `${error.syscall} failed${where}` : `a file operation failed${where}`;
  return `${what}: ${advice}`;
}

/**
 * What to do about a file-system failure, with its errno (`the disk is full; free some space and
 * run the command again (ENOSPC)`), for a message that already says which file it was; null for
 * an error that is not one the kernel knows how to advise on.
 */
export function filesystemAdvice(error: ErrnoLike): string | null {
  const code = typeof error.code === 'string' ? error.code : '';
  const path = typeof error.path === 'string' ? error.path : null;
  const dest = typeof error.dest === 'string' ? error.dest : null;
  if (code === 'ENOTDIR') {
    const blocker = path ? fileInTheWay(path) : null;
    return `${blocker ? `${blocker} is a file where a directory is expected` : 'a file stands where a directory is expected'}; move it aside (${code})`;
  }
  const advice = code === 'EACCES' || code === 'EPERM' ? permissionAdvice(code, error.syscall, path, dest) : ADVICE[code];
  return advice ? `${advice} (${code})` : null;
}

/** What went wrong, in one message: a file-system failure as filesystemMessage says it, else the error's own words. */
export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return filesystemMessage(error as ErrnoLike) ?? error.message;
}
