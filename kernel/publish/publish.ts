/**
 * Publishing a staged file as a new session file without ever replacing anything. The target must
 * not exist (checked with lstat, so a dangling symlink counts), its parent must be a real directory,
 * and the final step is link(2), which fails rather than overwrite. Across filesystems the bytes are
 * first copied to a private temp file beside the target, then linked the same way.
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants, type Stats } from 'node:fs';
import { access, link, lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { GobstopperError } from '../errors.js';
import { filesystemAdvice, type ErrnoLike } from '../filesystem-message.js';
import { creatingFile } from '../exit-cleanup.js';
import { fillPrivateTemp, fsyncDir, readFully, tempName, unlinkQuietly, writeAllDefault, type WriteAll } from '../vault/private-fs.js';
import { faultPoint, type FaultHook } from './faults.js';
import { processAlive } from '../vault/lock.js';

export interface PublishOptions {
  /** The digest the staged bytes were verified at; publication refuses anything else. */
  expectedSha256?: string;
  expectedBytes?: number;
  fault?: FaultHook;
  writeAll?: WriteAll;
}

export interface Published {
  path: string;
  sha256: string;
  bytes: number;
}

const COPY_BLOCK = 1024 * 1024;

function targetExists(target: string): GobstopperError {
  return new GobstopperError('target_exists', `${target} already exists; gobstopper never overwrites a file (move it aside and run the command again)`);
}

/** Refuses a target that exists in any form, or whose parent is not a real directory. */
export async function checkPublishTarget(target: string): Promise<void> {
  if (!isAbsolute(target)) throw new GobstopperError('target_invalid', `publication target must be an absolute path, got ${target}`);
  let existing: Stats | null = null;
  try {
    existing = await lstat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existing?.isSymbolicLink()) throw new GobstopperError('target_exists', `${target} is a symbolic link; gobstopper never writes through or over a link`);
  if (existing) throw targetExists(target);
  const parent = dirname(target);
  let st;
  try {
    st = await lstat(parent);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new GobstopperError('target_invalid', `the directory ${parent} does not exist (it held the session; recreate it, mkdir -p ${parent}, to publish there)`);
    throw error;
  }
  if (st.isSymbolicLink()) throw new GobstopperError('target_invalid', `${parent} is a symbolic link; forks are published only into real directories`);
  if (!st.isDirectory()) throw new GobstopperError('target_invalid', `${parent} is not a directory`);
  // Asked now, so that a project directory this user cannot write to (or a read-only mount) is
  // refused before the source is archived and a receipt written, not at the link.
  await access(parent, fsConstants.W_OK | fsConstants.X_OK).catch((error: ErrnoLike) => {
    const advice = filesystemAdvice(error);
    if (advice === null || typeof error.code !== 'string') throw error;
    throw new GobstopperError(error.code.toLowerCase(), `the fork goes beside the session, into ${parent}, which cannot be written to: ${advice}`, { details: { path: parent } });
  });
}

/** Hashes an open file from the start. */
async function hashHandle(handle: FileHandle): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(COPY_BLOCK);
  let position = 0;
  for (;;) {
    const got = await readFully(handle, buffer, position);
    if (got === 0) break;
    hash.update(buffer.subarray(0, got));
    position += got;
    if (got < buffer.length) break;
  }
  return { sha256: hash.digest('hex'), bytes: position };
}

/** Opens a regular file for reading, refusing a link, a missing file and anything else (a FIFO would block). */
export async function openRegular(path: string, what: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw new GobstopperError('symlink_refused', `${what} ${path} is a symbolic link`);
    if (code === 'ENOENT') throw new GobstopperError('staging_missing', `${what} ${path} does not exist`);
    throw error;
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    throw new GobstopperError('not_regular_file', `${what} ${path} is not a regular file`);
  }
  return handle;
}

/** Digest and size of a regular file, refusing links and special files. */
export async function hashRegularFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const handle = await openRegular(path, 'file');
  try {
    return await hashHandle(handle);
  } finally {
    await handle.close();
  }
}

/** sha256 of the first `length` bytes of a regular file (fewer when it is shorter). */
export async function hashRegularFilePrefix(path: string, length: number): Promise<string> {
  const handle = await openRegular(path, 'file');
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(COPY_BLOCK);
    let position = 0;
    while (position < length) {
      const got = await readFully(handle, buffer.subarray(0, Math.min(buffer.length, length - position)), position);
      if (got === 0) break;
      hash.update(buffer.subarray(0, got));
      position += got;
    }
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** The temp copy of `name` beside it: `.<name>.gobstopper-<pid>-<16 hex>`. */
const copyTempPattern = (name: string) => new RegExp(`^\\.${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.gobstopper-(\\d+)-[0-9a-f]{16}$`);

/**
 * Removes temp copies of `name` left in `dir` by runs that died while copying (their process is
 * gone): they sit beside the user's sessions, hidden, and nothing else would ever remove them.
 */
async function sweepDeadCopies(dir: string, name: string): Promise<void> {
  await sweepDeadCopiesIn(dir, [copyTempPattern(name)]);
}

async function sweepDeadCopiesIn(dir: string, patterns: readonly RegExp[]): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    const pid = patterns.map((pattern) => pattern.exec(entry)?.[1]).find((found) => found !== undefined);
    if (pid === undefined || processAlive(Number(pid))) continue;
    const path = join(dir, entry);
    if ((await lstat(path).catch(() => null))?.isFile()) {
      await unlinkQuietly(path);
      removed += 1;
    }
  }
  return removed;
}

/**
 * Dead runs' temp copies of each of `targets` (fork paths receipts name), each directory read
 * once. A run killed mid-copy is swept by the next publication of the same name, but none comes
 * once its receipt is settled or its source changed; `prune --apply` sweeps them instead.
 */
export async function sweepDeadCopiesOf(targets: readonly string[]): Promise<number> {
  const byDir = new Map<string, RegExp[]>();
  for (const target of new Set(targets)) {
    const dir = dirname(target);
    byDir.set(dir, [...(byDir.get(dir) ?? []), copyTempPattern(basename(target))]);
  }
  let removed = 0;
  for (const [dir, patterns] of byDir) removed += await sweepDeadCopiesIn(dir, patterns);
  return removed;
}

/** Copies `source` into a new private temp file in `dir` (fsynced); returns its path. */
async function copyToTemp(source: FileHandle, dir: string, name: string, writeAll: WriteAll): Promise<string> {
  await sweepDeadCopies(dir, name);
  return fillPrivateTemp(join(dir, `.${name}.${tempName('gobstopper')}`), false, async (handle) => {
    const buffer = Buffer.allocUnsafe(COPY_BLOCK);
    let position = 0;
    for (;;) {
      const got = await readFully(source, buffer, position);
      if (got === 0) break;
      await writeAll(handle, buffer.subarray(0, got));
      position += got;
      if (got < buffer.length) break;
    }
    await handle.sync();
  });
}

/**
 * Publishes `staging` as `target`. The staged bytes are checked against the expected digest first,
 * the target is never replaced, file and directory are fsynced, the published bytes are re-read and
 * checked, and the staging file is removed afterwards.
 */
export async function publishNoClobber(staging: string, target: string, options: PublishOptions = {}): Promise<Published> {
  await checkPublishTarget(target);
  const source = await openRegular(staging, 'staging file');
  let staged: { sha256: string; bytes: number };
  try {
    staged = await hashHandle(source);
    if (options.expectedSha256 !== undefined && staged.sha256 !== options.expectedSha256) {
      throw new GobstopperError('staging_changed', `the staged output changed after it was verified (sha256 ${staged.sha256.slice(0, 16)}, expected ${options.expectedSha256.slice(0, 16)}); nothing was published`);
    }
    if (options.expectedBytes !== undefined && staged.bytes !== options.expectedBytes) {
      throw new GobstopperError('staging_changed', `the staged output is ${staged.bytes} bytes, ${options.expectedBytes} were verified; nothing was published`);
    }
    await source.sync();
    faultPoint('publish.before_link', options.fault);
    try {
      // A stop waits for a link in flight, so it can say whether the fork is there.
      await creatingFile(() => link(staging, target));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw targetExists(target);
      // Another filesystem, or one without hard links: copy beside the target, then link there.
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
      const temp = await copyToTemp(source, dirname(target), basename(target), options.writeAll ?? writeAllDefault);
      try {
        await creatingFile(() => link(temp, target));
      } catch (linkError) {
        if ((linkError as NodeJS.ErrnoException).code === 'EEXIST') throw targetExists(target);
        throw linkError;
      } finally {
        await unlinkQuietly(temp);
      }
    }
  } finally {
    await source.close();
  }
  await fsyncDir(dirname(target));
  faultPoint('publish.after_link', options.fault);
  const published = await hashRegularFile(target);
  if (published.sha256 !== staged.sha256 || published.bytes !== staged.bytes) {
    throw new GobstopperError('publish_mismatch', `${target} does not hold the staged bytes after publication; inspect it before using it`);
  }
  await unlinkQuietly(staging);
  await fsyncDir(dirname(staging)).catch(() => undefined);
  return { path: target, ...published };
}
