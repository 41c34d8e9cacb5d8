/**
 * The private staging area `<data>/staging/` (0700). The kernel creates each staging file empty,
 * exclusively and 0600, and hands its path to the provider plugin that renders into it; nothing in
 * staging is visible to a client until `publishNoClobber` links it into the provider's store.
 */
import { constants as fsConstants } from 'node:fs';
import { access, open, readdir, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GobstopperError } from '../errors.js';
import { removeOnExit } from '../exit-cleanup.js';
import { processAlive } from '../vault/lock.js';
import { stagingDir, type PathEnv } from '../paths.js';
import { createExclusive, ensurePrivateDir, fsyncDir, nameFullDisk, tempName, unlinkQuietly, writeAllDefault, type WriteAll } from '../vault/private-fs.js';
import { streamManifestChunks } from '../vault/reconstruct.js';
import { loadManifest } from '../vault/manifest.js';
import { LineCounter } from '../vault/line-count.js';
import type { VaultLayout } from '../vault/layout.js';
import { faultPoint, type FaultHook } from './faults.js';
import { openRegular } from './publish.js';

const STAGING_NAME = /^stage-(\d+)-[0-9a-f]{16}\.jsonl$/;

/** Removes staging files left by processes that died mid-run (their pid is in the name). */
export async function sweepStaleStaging(dir: string): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const match = STAGING_NAME.exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    await unlinkQuietly(join(dir, name));
    removed += 1;
  }
  return removed;
}

export interface StagingOptions {
  /** Overrides `<data>/staging` (tests). */
  dir?: string;
  fault?: FaultHook;
}

/**
 * The directories a staging file's creation made, by its path: discarding the file removes them
 * again once empty, so a command refused after it staged (a damaged vault, a chunk that does not
 * read back) leaves the data directory as it found it, even on a first run.
 */
const dirsMadeFor = new Map<string, string[]>();

/** A new empty private staging file; the caller renders into it, then publishes or discards it. */
export async function createStagingFile(env: PathEnv = process.env, options: StagingOptions = {}): Promise<string> {
  const dir = options.dir ?? stagingDir(env);
  const made = await missingDirs(dir);
  await ensurePrivateDir(dir);
  await sweepStaleStaging(dir);
  const path = join(dir, `${tempName('stage')}.jsonl`);
  // A stop signal before publication leaves no staged fork behind (publication links it, so removing
  // this name afterwards loses nothing either). Noted before the open, which a signal can follow.
  const forget = removeOnExit(path);
  const handle = await createIn(dir, path).catch(async (error: unknown) => {
    forget();
    await removeIfEmpty(made);
    throw error;
  });
  await handle.close();
  if (made.length > 0) dirsMadeFor.set(path, made);
  faultPoint('staging.after_create', options.fault);
  return path;
}

/**
 * Flushes a rendered staging file to disk. Providers do not (sdk/staging.ts): the kernel starts this
 * once a render is done, beside the checks that read the file, so the flush waits on no one and
 * `publishNoClobber`'s own fsync before the link finds nothing left to write.
 */
export async function flushStaging(path: string): Promise<void> {
  const handle = await openRegular(path, 'staging file');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function createIn(dir: string, path: string): ReturnType<typeof createExclusive> {
  try {
    return await createExclusive(path);
  } catch (error) {
    // Another run that made the directory removes it once empty: it may have, since ours was checked.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await ensurePrivateDir(dir);
    return createExclusive(path);
  }
}

export async function discardStaging(path: string): Promise<void> {
  await unlinkQuietly(path);
  const made = dirsMadeFor.get(path);
  if (!made) return;
  dirsMadeFor.delete(path);
  await removeIfEmpty(made);
}

/**
 * Something was published: the data directory is not as the command found it any more, and a
 * staging directory left in place is one fewer to make next time, even when the data directory has
 * since been made read-only (a watch whose state cannot be saved still compacts).
 */
export function keepStagingDirs(): void {
  dirsMadeFor.clear();
}

/** Deepest first; one another run has started using meanwhile is not empty and stays. */
async function removeIfEmpty(dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) await rmdir(dir).catch(() => undefined);
}

/** Runs `use` on a staging file that only answers a question (a copy checked, then dropped). */
export async function withThrowawayStaging<T>(env: PathEnv, use: (path: string) => Promise<T>): Promise<T> {
  const staging = await createStagingFile(env);
  try {
    return await use(staging);
  } finally {
    await discardStaging(staging);
  }
}

/** `dir` and each ancestor of it that does not exist yet, deepest first. */
async function missingDirs(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let d = dir; !(await access(d).then(() => true, () => false)); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  return missing;
}

/**
 * Fills an empty staging file with the exact bytes of an archived snapshot (a retained output being
 * republished, or a restore). On any failure, including a full disk, the staging file is removed so
 * nothing partial remains. Its lines are counted on the way: an index line put back for the state
 * records them, and the manifest does not.
 */
export async function restoreSnapshotToStaging(
  layout: VaultLayout,
  manifestSha256: string,
  stagingPath: string,
  options: { writeAll?: WriteAll; env?: NodeJS.ProcessEnv } = {},
): Promise<{ bytes: number; sourceSha256: string; recordCount: number }> {
  const writeAll = options.writeAll ?? writeAllDefault;
  const loaded = await loadManifest(layout, manifestSha256, options.env);
  const handle = await open(stagingPath, fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW);
  const lines = new LineCounter();
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size !== 0) throw new GobstopperError('staging_invalid', `${stagingPath} is not an empty staging file`);
    // The staging file is only published after the stream's own end-of-snapshot checks pass.
    await streamManifestChunks(layout, loaded, (chunk) => {
      lines.push(chunk);
      return writeAll(handle, chunk);
    });
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlinkQuietly(stagingPath);
    throw nameFullDisk(error, stagingPath);
  }
  await handle.close();
  await fsyncDir(dirname(stagingPath));
  return { bytes: loaded.manifest.bytes, sourceSha256: loaded.manifest.source_sha256, recordCount: lines.count };
}
