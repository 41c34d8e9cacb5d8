/**
 * Output files the bench and study write: always new files. The path is checked before any work
 * starts (so a long bench does not fail at the end) and linked into place only when whole, so a file
 * that appeared meanwhile is never overwritten either, and an interrupted write leaves none.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants as fsConstants, fsyncSync, linkSync, lstatSync, openSync, rmSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { GobstopperError, usageError } from '../errors.js';

/** What lstat says of `path`; null when nothing is there. */
function entryAt(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: a component of the directory is a file; the directory check below says so.
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new GobstopperError('output_write_failed', `cannot write ${path}: ${code ?? (error as Error).message}`, { details: { path } });
  }
}

/** A name ending in a separator names no file whatever is on disk: the command line is wrong. */
const notAFile = (path: string) => usageError('output_not_a_file', `${path} names a directory, not a file; name a new file inside it`, { path });

/**
 * Something already at the path is what the disk holds, not a malformed name: the same command
 * line works once it is moved away, so it is an error (exit 1), a directory there as much as a file.
 */
function outputExists(path: string): GobstopperError {
  return new GobstopperError('output_exists', `refusing to overwrite ${path}: it already exists; choose a new file name`, { details: { path } });
}

function outputIsDirectory(path: string): GobstopperError {
  return new GobstopperError('output_exists', `${path} is an existing directory, not a file; name a new file inside it`, { details: { path } });
}

/**
 * Throws a clear error when `path` exists (a dangling symlink counts) or its directory does not, or
 * when it names no file: empty, `-`, or ending in a separator (which `resolve` would quietly drop).
 */
export function assertNewOutputPath(path: string): string {
  if (path.trim() === '') throw usageError('output_path_empty', 'an output file name is empty; name a new file');
  // Many tools read - as stdout; written as given, it would be a file of that name in the current directory.
  if (path === '-') throw usageError('output_path_dash', "'-' is not stdout here: it would be a file named - in the current directory; name a new file (./- for that name)");
  if (path.endsWith('/') || path.endsWith(sep)) throw notAFile(path);
  const absolute = resolve(path);
  const entry = entryAt(absolute);
  if (entry?.isDirectory()) throw outputIsDirectory(path);
  if (entry !== null) throw outputExists(path);
  const dir = dirname(absolute);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    const what = entryAt(dir) === null ? 'does not exist' : 'is not a directory';
    throw new GobstopperError('output_dir_missing', `cannot write ${path}: ${dir} ${what}`, { details: { path } });
  }
  // A directory the file cannot be created in fails now, not after the work the file was to hold.
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new GobstopperError('output_write_failed', `cannot write ${path}: ${dir} is not writable (${code})`, { details: { path } });
  }
  return absolute;
}

/**
 * Bytes of the output's name its temporary name keeps. A name may take up to 255 bytes, and the
 * temporary one adds about twenty: whole, a long name that is fine for the output made the write
 * fail with ENAMETOOLONG after all the work was done.
 */
const TEMP_NAME_BYTES = 160;

function namePart(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  return bytes.length <= TEMP_NAME_BYTES ? name : bytes.subarray(0, TEMP_NAME_BYTES).toString('utf8');
}

/** Link errors of file systems without hard links: the file is then created in place instead. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS']);

/**
 * Writes `data` durably to a new file at `path`. It is written under a hidden temporary name beside
 * it and linked into place only when whole, so a run killed while writing leaves no half-written (or
 * empty) file under the name a rerun would then refuse; the link, like an exclusive create, never
 * replaces a file that appeared meanwhile.
 */
export function writeNewFile(path: string, data: string | Buffer, mode = 0o644): void {
  const absolute = assertNewOutputPath(path);
  const temp = tempNameBeside(absolute);
  writeWhole(temp, path, data, mode);
  try {
    linkIntoPlace(temp, absolute, path, () => writeWhole(absolute, path, data, mode));
  } finally {
    rmSync(temp, { force: true });
  }
}

/** The hidden temporary name a new file at `absolute` is written under before it is linked into place. */
export function tempNameBeside(absolute: string): string {
  return join(dirname(absolute), `.${namePart(basename(absolute))}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * Gives the whole file at `temp` its name `absolute` (`path` as the user wrote it, for messages)
 * without ever replacing a file that appeared there meanwhile. On a file system without hard
 * links, `fallback` creates the file in place instead.
 */
export function linkIntoPlace(temp: string, absolute: string, path: string, fallback: () => void): void {
  try {
    linkSync(temp, absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') throw outputExists(path);
    if (!NO_LINKS.has(code)) throw new GobstopperError('output_write_failed', `cannot create ${path}: ${(error as Error).message}`);
    fallback();
  }
}

/** Creates `file` exclusively and writes `data` durably; on a failed write the partial file is removed. */
function writeWhole(file: string, path: string, data: string | Buffer, mode: number): void {
  let fd: number;
  try {
    fd = openSync(file, 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw outputExists(path);
    throw new GobstopperError('output_write_failed', `cannot create ${path}: ${(error as Error).message}`);
  }
  let open = true;
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
    open = false;
    closeSync(fd);
  } catch (error) {
    if (open) closeSync(fd);
    // The file is ours (created exclusively above); a partial one must not look like output.
    unlinkSync(file);
    throw new GobstopperError('output_write_failed', `cannot write ${path}: ${(error as Error).message}`);
  }
}
