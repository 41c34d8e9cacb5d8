/**
 * Archiving a file's exact bytes: one streaming pass hashes the whole source, cuts it into 1 MiB
 * chunks and stores each new one (several in flight); every stored byte is read back and compared
 * before the snapshot counts. The same pass notes the records holding a state card, whose cards are
 * then recorded in the snapshot's card file.
 */
import { constants as fsConstants, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { maxTranscriptBytes } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';
import { storeChunk } from './chunks.js';
import { vaultDamaged } from './errors.js';
import type { VaultLayout } from './layout.js';
import { CHUNK_BYTES } from './limits.js';
import { indexStoredCards } from './card-index.js';
import { CardScanner } from './card-scan.js';
import { sha256Hex } from '../digest.js';
import { chunkLength, loadManifest, serializeManifest } from './manifest.js';
import { sharedBuffer, streamingSha256 } from './sha256-stream.js';
import { fsyncDir, publishNewPrivateFile, readFully, writeAllDefault, type WriteAll } from './private-fs.js';
import { faultPoint, type FaultHook } from '../publish/faults.js';

export interface StoreOptions {
  /** Refuse unless the bytes read hash to this (the source the caller planned against). */
  expectedSourceSha256?: string;
  /** The error for bytes that do not hash to expectedSourceSha256 (default: the file changed after it was read). */
  mismatch?: (sha256: string) => GobstopperError;
  env?: NodeJS.ProcessEnv;
  /** Test seam: how chunk and manifest bytes reach the disk. */
  writeAll?: WriteAll;
  fault?: FaultHook;
}

export interface StoredSnapshot {
  manifestSha256: string;
  sourceSha256: string;
  bytes: number;
  /** Physical lines: newline count, plus one for an unterminated last line. */
  recordCount: number;
  chunkCount: number;
  newChunks: number;
  newChunkBytes: number;
  /** The file the bytes were read from, unchanged from open to end of read. */
  file: { dev: number; ino: number; size: number; mtimeMs: number };
}

/** Opens a source for archiving: no symlink, no FIFO or device, within the transcript limit. */
export async function openSource(path: string, limit: number): Promise<{ handle: FileHandle; stats: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw new GobstopperError('symlink_refused', `${path} is a symbolic link; pass the real file`);
    if (code === 'ENOENT') throw new GobstopperError('source_missing', `no such file: ${path}`);
    throw error;
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new GobstopperError('not_regular_file', `${path} is not a regular file; only regular files are archived`);
  }
  if (stats.size > limit) {
    await handle.close();
    throw new GobstopperError('transcript_too_large', `${path} is ${stats.size} bytes, over the ${limit}-byte transcript limit (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)`);
  }
  return { handle, stats };
}

/** What openSource would refuse, found before the caller creates anything in the vault. */
export async function checkSource(path: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { handle } = await openSource(path, maxTranscriptBytes(env));
  await handle.close();
}

/** Chunks being written at once: fsyncs overlap each other and the hashing of the next chunks. */
const CHUNKS_IN_FLIGHT = 4;

interface ChunkTask {
  buffer: Buffer;
  done: Promise<boolean>;
  /** The whole-source digest has consumed this buffer. */
  hashed: Promise<void>;
}

/**
 * Stores `path` in the vault without indexing it. The caller must hold shared custody (see
 * custody.ts) from before this call until the snapshot is indexed or pinned.
 *
 * Read-back: every new chunk is re-read after its fsync and compared with the source bytes it was
 * hashed from before it is linked into place, and an existing chunk is reused only after the same
 * comparison; the whole-source digest is computed over exactly those bytes. The manifest is then
 * re-read and parsed, and every chunk it names is checked to be present at its size. Together this
 * reconstructs the snapshot against the source without hashing every byte a second time.
 */
export async function storeSnapshot(layout: VaultLayout, path: string, options: StoreOptions = {}): Promise<StoredSnapshot> {
  const env = options.env ?? process.env;
  const limit = maxTranscriptBytes(env);
  const writeAll = options.writeAll ?? writeAllDefault;
  const { handle, stats: before } = await openSource(path, limit);
  const sourceHash = streamingSha256(before.size);
  const chunks: string[] = [];
  const tasks: ChunkTask[] = [];
  let total = 0;
  const records = new CardScanner();
  let sourceSha256: string;
  try {
    for (;;) {
      // A buffer is reused only once the chunk written from it has been stored.
      const reuse = tasks.length >= CHUNKS_IN_FLIGHT ? tasks[tasks.length - CHUNKS_IN_FLIGHT]! : null;
      if (reuse) await Promise.all([reuse.done, reuse.hashed]);
      const buffer = reuse?.buffer ?? sharedBuffer(CHUNK_BYTES);
      // Fill the whole chunk before cutting: fixed 1 MiB offsets are what make appends deduplicate.
      const got = await readFully(handle, buffer, null);
      if (got === 0) break;
      total += got;
      if (total > limit) throw new GobstopperError('transcript_too_large', `${path} grew past the ${limit}-byte transcript limit while it was read (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)`);
      const data = buffer.subarray(0, got);
      const hashed = sourceHash.update(data);
      hashed.catch(() => undefined);
      records.push(data);
      const sha = sha256Hex(data);
      chunks.push(sha);
      const done = storeChunk(layout.chunks, sha, data, writeAll);
      // Settled below; a failure must not surface as an unhandled rejection meanwhile.
      done.catch(() => undefined);
      tasks.push({ buffer, done, hashed });
      if (got < CHUNK_BYTES) break;
    }
    faultPoint('vault.after_read', options.fault, env);
    const after = await handle.stat();
    if (after.size !== total || after.mtimeMs !== before.mtimeMs || after.size !== before.size) {
      throw new GobstopperError('source_changed', `${path} changed while it was archived; nothing was recorded, try again when it is idle`);
    }
    await Promise.all(tasks.map((t) => t.hashed));
    sourceSha256 = await sourceHash.digest();
  } finally {
    // Every write in flight finishes (or cleans up after itself) before this returns or throws.
    await Promise.allSettled(tasks.flatMap((t) => [t.done, t.hashed]));
    await handle.close();
    await sourceHash.close();
  }
  const results = await Promise.all(tasks.map((t) => t.done));
  let newChunks = 0;
  let newChunkBytes = 0;
  results.forEach((created, i) => {
    if (created) {
      newChunks += 1;
      newChunkBytes += chunkLength(total, i);
    }
  });
  if (options.expectedSourceSha256 !== undefined && options.expectedSourceSha256 !== sourceSha256) {
    throw options.mismatch?.(sourceSha256) ?? new GobstopperError('source_changed', `${path} changed after it was read (sha256 ${sourceSha256.slice(0, 16)}, expected ${options.expectedSourceSha256.slice(0, 16)}); nothing was recorded, run the command again`);
  }
  await fsyncDir(layout.chunks);
  faultPoint('vault.after_chunks', options.fault, env);

  const manifestBytes = serializeManifest(sourceSha256, total, chunks);
  const manifestSha256 = sha256Hex(manifestBytes);
  await publishNewPrivateFile(layout.manifests, manifestSha256, manifestBytes, writeAll);
  await fsyncDir(layout.manifests);
  faultPoint('vault.after_manifest', options.fault, env);
  await checkStored(layout, manifestSha256, sourceSha256, total, chunks, env);
  // Only now are the bytes the cards are read from known to be the source's.
  await indexStoredCards(layout, { manifestSha256, sourceSha256, bytes: total, chunks }, records.finish(), writeAll);

  const recordCount = records.recordCount;
  const file = { dev: before.dev, ino: before.ino, size: before.size, mtimeMs: before.mtimeMs };
  return { manifestSha256, sourceSha256, bytes: total, recordCount, chunkCount: chunks.length, newChunks, newChunkBytes, file };
}

/** The stored manifest parses back to exactly this snapshot and every chunk it names is in place. */
async function checkStored(layout: VaultLayout, manifestSha256: string, sourceSha256: string, total: number, chunks: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const file = `${layout.manifests}/${manifestSha256}`;
  const { manifest } = await loadManifest(layout, manifestSha256, env);
  if (manifest.source_sha256 !== sourceSha256 || manifest.bytes !== total || manifest.chunks.join() !== chunks.join()) {
    throw vaultDamaged(file, 'the stored manifest does not describe the archived bytes', `move ${file} out of the vault and archive again`);
  }
  for (const [i, sha] of chunks.entries()) {
    const chunk = join(layout.chunks, sha);
    let size: number;
    try {
      size = (await lstat(chunk)).size;
    } catch {
      size = -1;
    }
    if (size !== chunkLength(total, i)) throw vaultDamaged(chunk, 'a chunk of the new snapshot is missing or has the wrong size', `move ${file} out of the vault and archive again`);
  }
}
