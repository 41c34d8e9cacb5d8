/**
 * Streams a snapshot back chunk by chunk: every chunk is hash-verified against its name, the total
 * length and the whole-source digest against the manifest. Nothing a reader computes counts until
 * `reconstructSnapshot` resolves, because only then is the whole snapshot known to be intact.
 */
import { readChunk } from './chunks.js';
import { vaultDamaged } from './errors.js';
import type { VaultLayout } from './layout.js';
import { CHUNK_BYTES } from './limits.js';
import { chunkLength, loadManifest, type LoadedManifest } from './manifest.js';
import { sharedBuffer, streamingSha256 } from './sha256-stream.js';

/**
 * Called with each verified chunk in order. The buffer is reused once the callback returns (or its
 * promise settles); copy what must outlive it.
 */
export type ChunkSink = (chunk: Buffer, offset: number) => void | Promise<void>;

export async function reconstructSnapshot(layout: VaultLayout, sha: string, sink: ChunkSink, env: NodeJS.ProcessEnv = process.env): Promise<LoadedManifest> {
  const loaded = await loadManifest(layout, sha, env);
  await streamManifestChunks(layout, loaded, sink);
  return loaded;
}

/** Chunk buffers in rotation: one being read ahead, one with the sink, one still being hashed. */
const BUFFERS = 3;

export async function streamManifestChunks(layout: VaultLayout, loaded: LoadedManifest, sink: ChunkSink): Promise<void> {
  const { manifest } = loaded;
  const count = manifest.chunks.length;
  const sourceHash = streamingSha256(manifest.bytes);
  try {
    const buffers = Array.from({ length: Math.min(BUFFERS, count) }, () => sharedBuffer(CHUNK_BYTES));
    const hashed: Array<Promise<void>> = [];
    const read = (i: number) => readChunk(layout.chunks, manifest.chunks[i]!, chunkLength(manifest.bytes, i), buffers[i % BUFFERS]);
    let pending = count > 0 ? read(0) : null;
    let offset = 0;
    for (let i = 0; i < count; i++) {
      const chunk = await pending!;
      if (i + 1 < count) {
        // The next read reuses the buffer of chunk i + 1 - BUFFERS, once its hashing is done.
        if (i + 1 >= BUFFERS) await hashed[i + 1 - BUFFERS];
        pending = read(i + 1);
        // Keep a failed read-ahead from surfacing as an unhandled rejection if the sink throws first.
        pending.catch(() => undefined);
      }
      const update = sourceHash.update(chunk);
      update.catch(() => undefined);
      hashed[i] = update;
      const pendingSink = sink(chunk, offset);
      if (pendingSink) await pendingSink;
      offset += chunk.length;
    }
    await Promise.all(hashed);
    const file = `${layout.manifests}/${loaded.sha256}`;
    if (offset !== manifest.bytes) throw vaultDamaged(file, `chunks hold ${offset} bytes, the manifest says ${manifest.bytes}`, `move ${file} out of the vault`);
    if ((await sourceHash.digest()) !== manifest.source_sha256) {
      throw vaultDamaged(file, 'reconstructed bytes do not match the manifest source_sha256', `move ${file} out of the vault; snapshot ${loaded.sha256.slice(0, 16)} cannot be trusted`);
    }
  } finally {
    await sourceHash.close();
  }
}
