/**
 * Content-addressed chunk files `chunks/<sha256>`. A chunk that already exists is reused only after
 * its bytes compare equal to the new ones, so a damaged chunk is found when it would be relied on.
 */
import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { vaultDamaged } from './errors.js';
import { sha256Hex } from '../digest.js';
import { checkPrivateFile, openPrivateForRead, publishNewPrivateFile, readFully, writeAllDefault, type WriteAll } from './private-fs.js';
import { withScratch } from './scratch.js';

export function chunkPath(chunksDir: string, sha: string): string {
  return join(chunksDir, sha);
}

function damagedChunk(file: string, problem: string) {
  return vaultDamaged(
    file,
    problem,
    `move ${file} out of the vault; snapshots that use it cannot be read until it is written again, which gobstopper snapshot of a session file still holding those bytes does`,
  );
}

/** A chunk that is not there has nothing to move aside. */
function missingChunk(file: string) {
  return vaultDamaged(
    file,
    'chunk is missing',
    `restore ${file} from a backup; without it, snapshots that use it cannot be read until it is written again, which gobstopper snapshot of a session file still holding those bytes does`,
  );
}

/**
 * Reads one chunk and checks it is exactly `length` bytes hashing to `sha`. `into` (at least
 * `length` long) avoids an allocation per chunk for sequential readers.
 */
export async function readChunk(chunksDir: string, sha: string, length: number, into?: Buffer): Promise<Buffer> {
  const file = chunkPath(chunksDir, sha);
  const opened = await openPrivateForRead(file);
  if (!opened) throw missingChunk(file);
  const { handle, stats } = opened;
  try {
    if (stats.size !== length) throw damagedChunk(file, `chunk is ${stats.size} bytes, the manifest expects ${length}`);
    const buffer = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
    const got = await readFully(handle, buffer, 0);
    if (got !== length) throw damagedChunk(file, `chunk is truncated (${got} of ${length} bytes readable)`);
    if (sha256Hex(buffer) !== sha) throw damagedChunk(file, 'chunk bytes do not hash to its name');
    return buffer;
  } finally {
    await handle.close();
  }
}

/**
 * Checks without reading it that a chunk is there as a private regular file of the size the
 * manifest expects: what prune can afford for every chunk it keeps (content is checked on read).
 */
export async function checkChunkPresent(chunksDir: string, sha: string, length: number): Promise<void> {
  const file = chunkPath(chunksDir, sha);
  let stats: Stats;
  try {
    stats = await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw missingChunk(file);
    throw error;
  }
  checkPrivateFile(file, stats);
  if (stats.size !== length) throw damagedChunk(file, `chunk is ${stats.size} bytes, the manifest expects ${length}`);
}

/** Compares an existing chunk with `data`; null when there is no such chunk. */
async function compareExisting(file: string, data: Buffer): Promise<boolean | null> {
  const opened = await openPrivateForRead(file);
  if (!opened) return null;
  const { handle, stats } = opened;
  try {
    if (stats.size !== data.length) return false;
    return await withScratch(data.length, async (existing) => {
      const got = await readFully(handle, existing, 0);
      return got === data.length && existing.equals(data);
    });
  } finally {
    await handle.close();
  }
}

/** Stores `data` as `chunks/<sha>`; true when new bytes were written, false when reused. */
export async function storeChunk(chunksDir: string, sha: string, data: Buffer, writeAll: WriteAll = writeAllDefault): Promise<boolean> {
  const file = chunkPath(chunksDir, sha);
  let same = await compareExisting(file, data);
  if (same === null) {
    if ((await publishNewPrivateFile(chunksDir, sha, data, writeAll)) === 'created') return true;
    // Another snapshotter published the same chunk between our check and our link.
    same = await compareExisting(file, data);
  }
  if (same) return false;
  throw damagedChunk(file, 'an existing chunk differs from the bytes its name promises');
}
