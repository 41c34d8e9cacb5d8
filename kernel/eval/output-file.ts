/**
 * Output files the bench and study write: always new files. The path is checked before any work
 * starts (so a long bench does not fail at the end) and created exclusively when written, so a file
 * that appeared meanwhile is never overwritten either.
 */
import { closeSync, fsyncSync, lstatSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { GobstopperError, usageError } from '../errors.js';

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

function outputExists(path: string): GobstopperError {
  return new GobstopperError('output_exists', `refusing to overwrite ${path}: it already exists; choose a new file name`, { details: { path } });
}

/**
 * Throws a clear error when `path` exists (a dangling symlink counts) or its directory does not, or
 * when it names no file: empty, or ending in a separator (which `resolve` would quietly drop).
 */
export function assertNewOutputPath(path: string): string {
  if (path.trim() === '') throw usageError('output_path_empty', 'an output file name is empty; name a new file');
  if (path.endsWith('/') || path.endsWith(sep)) throw usageError('output_not_a_file', `${path} names a directory, not a file; name a new file inside it`, { path });
  const absolute = resolve(path);
  if (exists(absolute)) throw outputExists(path);
  const dir = dirname(absolute);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new GobstopperError('output_dir_missing', `cannot write ${path}: directory ${dir} does not exist`, { details: { path } });
  return absolute;
}

/** Creates `path` exclusively and writes `data` durably; on a failed write the partial file is removed. */
export function writeNewFile(path: string, data: string | Buffer, mode = 0o644): void {
  const absolute = assertNewOutputPath(path);
  let fd: number;
  try {
    fd = openSync(absolute, 'wx', mode);
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
    unlinkSync(absolute);
    throw new GobstopperError('output_write_failed', `cannot write ${path}: ${(error as Error).message}`);
  }
}
