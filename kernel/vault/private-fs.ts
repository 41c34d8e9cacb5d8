/**
 * File primitives for state that must stay private and must never be overwritten by accident:
 * 0700 directories, 0600 files, no symlinks or special files, writes through a private temp file
 * that is fsynced and then linked into place (link fails on an existing name, so it never clobbers).
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, stat, unlink, link, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { creatingFile, keepOnExit, removeOnExit } from '../exit-cleanup.js';
import { insecureVault } from './errors.js';
import { withScratch } from './scratch.js';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fsConstants;

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Writes the whole buffer. Injected in tests to simulate a full disk (ENOSPC) or a torn write. */
export type WriteAll = (handle: FileHandle, data: Buffer) => Promise<void>;

/**
 * A full disk, a quota or a file-size limit arises only from a write or its fsync, and a
 * FileHandle's error names no file: without one, "the disk is full" does not say which disk (the
 * vault's, or the sessions' where a fork is copied across file systems). The file being written is
 * named on the error.
 */
export function nameFullDisk(error: unknown, path: string): unknown {
  const e = error as NodeJS.ErrnoException | null;
  if (e && (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'EFBIG') && typeof e.path !== 'string') e.path = path;
  return error;
}

export const writeAllDefault: WriteAll = async (handle, data) => {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await handle.write(data, offset, data.length - offset, null);
    offset += bytesWritten;
  }
};

function ownerMismatch(st: Stats): boolean {
  const uid = process.getuid?.();
  return uid !== undefined && st.uid !== uid;
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** Checks an existing directory; false when it does not exist. */
export async function checkPrivateDir(path: string): Promise<boolean> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  if (st.isSymbolicLink()) throw insecureVault(path, 'is a symbolic link', 'gobstopper keeps its state only in real directories; replace the link with a directory');
  if (!st.isDirectory()) throw insecureVault(path, 'is not a directory', 'move it aside so gobstopper can create the directory');
  if (ownerMismatch(st)) throw insecureVault(path, `is owned by uid ${st.uid}, not by you`, 'fix its ownership (chown) or point XDG_DATA_HOME elsewhere');
  if ((st.mode & 0o077) !== 0) throw insecureVault(path, `has mode ${octal(st.mode)}, readable by others`, `run chmod 700 ${path}${ALL_AT_ONCE}`);
  return true;
}

/**
 * Creates the missing directories above a private one, one level at a time. Node's recursive mkdir
 * retries forever where a parent exists but refuses children with ENOENT (under /proc); here that
 * answer ends the attempt with the directory it could not create.
 */
async function makeParents(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; ; at = dirname(at)) {
    try {
      await stat(at);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.push(at);
      if (dirname(at) === at) break;
    }
  }
  for (const at of missing.reverse()) {
    try {
      await mkdir(at, { mode: PRIVATE_DIR_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/**
 * Creates a private directory (parents too, 0700 as the XDG spec asks) or checks the existing one.
 * Only the leaf's mode is enforced: parents such as ~/.local/share belong to the user.
 */
export async function ensurePrivateDir(path: string): Promise<void> {
  if (await checkPrivateDir(path)) return;
  try {
    await makeParents(dirname(path));
    await mkdir(path, { mode: PRIVATE_DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  await checkPrivateDir(path);
}

/** A vault opened up by one recursive chmod has hundreds of files: say how to close them all at once. */
const ALL_AT_ONCE = " (or chmod -R go-rwx on gobstopper's data directory to fix every file at once)";

/** Rejects anything but a regular file of ours that nobody else can read or write. */
export function checkPrivateFile(path: string, st: Stats): void {
  if (st.isSymbolicLink()) throw insecureVault(path, 'is a symbolic link', 'replace the link with a copy of the file it points to (removing it would lose the data); gobstopper never reads its data files through links');
  if (!st.isFile()) throw insecureVault(path, 'is not a regular file', 'move it aside; gobstopper keeps its data in regular files only');
  if (ownerMismatch(st)) throw insecureVault(path, `is owned by uid ${st.uid}, not by you`, 'fix its ownership (chown)');
  if ((st.mode & 0o077) !== 0) throw insecureVault(path, `has mode ${octal(st.mode)}, readable by others`, `run chmod 600 ${path}${ALL_AT_ONCE}`);
}

function isSymlinkOpenError(error: unknown): boolean {
  // O_NOFOLLOW on a symlink fails with ELOOP (Linux) or EMLINK (some BSDs).
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ELOOP' || code === 'EMLINK';
}

/**
 * Opens a private file for reading without following a symlink or blocking on a FIFO, and checks
 * what was actually opened (fstat), so a swap between check and open cannot fool it.
 */
export async function openPrivateForRead(path: string): Promise<{ handle: FileHandle; stats: Stats } | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (isSymlinkOpenError(error)) throw insecureVault(path, 'is a symbolic link', 'replace the link with a copy of the file it points to (removing it would lose the data); gobstopper never reads its data files through links');
    throw error;
  }
  try {
    const stats = await handle.stat();
    checkPrivateFile(path, stats);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads up to `buffer.length` bytes at `position`, looping over short reads. */
export async function readFully(handle: FileHandle, buffer: Buffer, position: number | null): Promise<number> {
  let got = 0;
  while (got < buffer.length) {
    const { bytesRead } = await handle.read(buffer, got, buffer.length - got, position === null ? null : position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

export class FileTooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(`${path} is ${size} bytes, over the ${limit}-byte limit`);
  }
}

/** A whole private file, or null when absent. Bigger than `maxBytes` throws FileTooLargeError. */
export async function readPrivateFile(path: string, maxBytes: number): Promise<Buffer | null> {
  const opened = await openPrivateForRead(path);
  if (!opened) return null;
  const { handle, stats } = opened;
  try {
    if (stats.size > maxBytes) throw new FileTooLargeError(path, stats.size, maxBytes);
    // One byte past the expected size detects a file that grew after fstat.
    const buffer = Buffer.allocUnsafe(stats.size + 1);
    const got = await readFully(handle, buffer, 0);
    if (got > maxBytes) throw new FileTooLargeError(path, got, maxBytes);
    return buffer.subarray(0, got);
  } finally {
    await handle.close();
  }
}

export function tempName(prefix = '.tmp'): string {
  return `${prefix}-${process.pid}-${randomBytes(8).toString('hex')}`;
}

export async function fsyncDir(path: string): Promise<void> {
  const handle = await open(path, O_RDONLY | O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function unlinkQuietly(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch {
    // Already gone; nothing to clean.
  }
  keepOnExit(path);
}

/** Creates a new private file exclusively (O_EXCL | O_NOFOLLOW), 0600. */
export async function createExclusive(path: string, readable = false): Promise<FileHandle> {
  try {
    return await creatingFile(() => open(path, (readable ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE));
  } catch (error) {
    if (isSymlinkOpenError(error)) throw insecureVault(path, 'is a symbolic link', 'replace the link with a copy of the file it points to (removing it would lose the data)');
    throw error;
  }
}

export class ReadBackMismatchError extends Error {
  readonly code = 'write_verify_failed';
  constructor(readonly path: string) {
    super(`${path}: the bytes read back after writing differ from the bytes written (a failing disk?); nothing was kept`);
  }
}

/**
 * Writes `data` to a fresh private temp file in `dir`, fsynced, then reads it back and compares it
 * with `data`, so what is later linked into place is known to hold exactly those bytes. Removes the
 * temp file on any failure.
 */
export async function writePrivateTemp(dir: string, data: Buffer, writeAll: WriteAll = writeAllDefault): Promise<string> {
  return fillPrivateTemp(join(dir, tempName()), true, async (handle, temp) => {
    await writeAll(handle, data);
    await handle.sync();
    const same = await withScratch(data.length + 1, async (back) => {
      const got = await readFully(handle, back, 0);
      return got === data.length && back.subarray(0, got).equals(data);
    });
    if (!same) throw new ReadBackMismatchError(temp);
  });
}

/**
 * Creates the private file `temp` exclusively and lets `fill` write it; on any failure the file is
 * closed and removed, so no half-written temp file is left behind. Returns `temp`.
 */
export async function fillPrivateTemp(temp: string, readable: boolean, fill: (handle: FileHandle, temp: string) => Promise<void>): Promise<string> {
  // Interrupted before its caller links or removes it, the temp file goes with the process. Taken
  // down before the open: a signal can land between the file's creation and the code after the await.
  const forget = removeOnExit(temp);
  const handle = await createExclusive(temp, readable).catch((error: unknown) => {
    forget();
    throw error;
  });
  try {
    await fill(handle, temp);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlinkQuietly(temp);
    throw nameFullDisk(error, temp);
  }
  await handle.close();
  return temp;
}

/**
 * Publishes `data` as `dir/name` unless that name exists. `link` is the no-clobber step: it fails
 * with EEXIST instead of replacing. The directory is not fsynced here so callers storing many
 * files can sync it once.
 */
export async function publishNewPrivateFile(dir: string, name: string, data: Buffer, writeAll: WriteAll = writeAllDefault): Promise<'created' | 'exists'> {
  const temp = await writePrivateTemp(dir, data, writeAll);
  try {
    await link(temp, join(dir, name));
    return 'created';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
    throw error;
  } finally {
    await unlinkQuietly(temp);
  }
}

/** Atomically replaces `path` with `data` (private temp, fsync, rename, directory fsync). */
export async function replacePrivateFile(path: string, data: Buffer, writeAll: WriteAll = writeAllDefault): Promise<void> {
  const dir = dirname(path);
  const temp = await writePrivateTemp(dir, data, writeAll);
  try {
    await rename(temp, path);
    keepOnExit(temp);
  } catch (error) {
    await unlinkQuietly(temp);
    throw error;
  }
  await fsyncDir(dir);
}

/** The names in `dir`; none when it does not exist (a vault directory nothing was written to yet). */
export async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

export function isTempName(name: string): boolean {
  return basename(name).startsWith('.tmp-');
}

export { unlinkQuietly };
