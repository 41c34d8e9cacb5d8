/**
 * Snapshot manifests: the chunk list of one archived file. The id of a snapshot is the sha256 of the
 * manifest's exact bytes, so the serialisation (compact, fixed field order) is part of the format.
 */
import { join } from 'node:path';
import { validateVaultManifest } from '../../schemas/generated/validators.js';
import type { VaultManifest } from '../../schemas/generated/types.js';
import { maxTranscriptBytes } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';
import { snapshotNotFound, vaultDamaged } from './errors.js';
import type { VaultLayout } from './layout.js';
import { CHUNK_BYTES, MANIFEST_SCHEMA_VERSION, MAX_MANIFEST_BYTES } from './limits.js';
import { FileTooLargeError, readPrivateFile } from './private-fs.js';
import { sha256Hex } from '../digest.js';

export type { VaultManifest };

export function serializeManifest(sourceSha256: string, bytes: number, chunks: string[]): Buffer {
  const manifest: VaultManifest = { schema_version: MANIFEST_SCHEMA_VERSION as 3, source_sha256: sourceSha256, bytes, chunks };
  return Buffer.from(JSON.stringify(manifest), 'utf8');
}

export function expectedChunkCount(bytes: number): number {
  return Math.ceil(bytes / CHUNK_BYTES);
}

/** Byte length chunk `i` of a `bytes`-long source must have. */
export function chunkLength(bytes: number, i: number): number {
  return Math.min(CHUNK_BYTES, bytes - i * CHUNK_BYTES);
}

export interface LoadedManifest {
  sha256: string;
  manifest: VaultManifest;
  /** Size of the manifest file itself. */
  fileBytes: number;
}

/**
 * Reads and checks `manifests/<sha>`: its bytes hash to its name, it is a well-formed v3 manifest,
 * its chunk count matches its size, and it is within the reconstruction bound.
 */
export async function loadManifest(layout: VaultLayout, sha: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedManifest> {
  const file = join(layout.manifests, sha);
  let data: Buffer | null;
  try {
    data = await readPrivateFile(file, MAX_MANIFEST_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw vaultDamaged(file, `manifest is ${error.size} bytes, over the ${MAX_MANIFEST_BYTES}-byte manifest limit`, 'move the file out of the vault; it is not a gobstopper manifest');
    throw error;
  }
  if (data === null) throw snapshotNotFound(sha);
  return parseManifest(file, sha, data, env);
}

export function parseManifest(file: string, sha: string, data: Buffer, env: NodeJS.ProcessEnv = process.env): LoadedManifest {
  const moveAside = `move ${file} out of the vault (snapshot ${sha.slice(0, 16)} cannot be recovered from it); if the session file it archived is unchanged since, gobstopper snapshot <session> writes the same snapshot again (gobstopper vault --json names its session)`;
  if (sha256Hex(data) !== sha) throw vaultDamaged(file, 'manifest bytes do not hash to its name', moveAside);
  let manifest: unknown;
  try {
    manifest = JSON.parse(data.toString('utf8'));
  } catch {
    throw vaultDamaged(file, 'manifest is not JSON', moveAside);
  }
  if (!validateVaultManifest(manifest)) throw vaultDamaged(file, 'manifest does not match the v3 manifest schema', moveAside);
  const m = manifest as VaultManifest;
  if (m.chunks.length !== expectedChunkCount(m.bytes)) {
    throw vaultDamaged(file, `manifest lists ${m.chunks.length} chunks for ${m.bytes} bytes`, moveAside);
  }
  const bound = maxTranscriptBytes(env);
  if (m.bytes > bound) {
    throw new GobstopperError('transcript_too_large', `snapshot ${sha.slice(0, 16)} is ${m.bytes} bytes, over the ${bound}-byte transcript limit (raise GOBSTOPPER_MAX_TRANSCRIPT_BYTES to read it)`);
  }
  return { sha256: sha, manifest: m, fileBytes: data.length };
}
