/**
 * What prune says when a snapshot it keeps cannot be read back. Prune refuses until every kept
 * snapshot is whole, so its advice has to end that refusal: moving a damaged chunk aside only turns
 * it into a missing one. The bytes come back from a file that still holds them (archiving that file
 * again writes the chunk), or from a backup; without either, the snapshots that need them are lost,
 * and what still names them (index lines, receipts, pins) is what keeps prune asking for them.
 * Errors are shown as one line of at most 600 characters, so the message names files inside the
 * vault by short ids and --json's details carry them in full.
 */
import { lstat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { OperationReceipt, VaultEntry } from '../../schemas/generated/types.js';
import { maxTranscriptBytes } from '../../sdk/limits.js';
import { sha256Hex } from '../digest.js';
import { receiptPath } from '../publish/receipt.js';
import { vaultDamaged, type VaultDamagedError } from './errors.js';
import type { VaultLayout } from './layout.js';
import { CHUNK_BYTES } from './limits.js';
import { readFully } from './private-fs.js';
import { openSource } from './store.js';

/** What names the snapshots prune keeps. */
export interface Claims {
  entries: readonly VaultEntry[];
  receipts: readonly OperationReceipt[];
  pinned: ReadonlySet<string>;
}

/** A kept snapshot that uses a chunk, and where in its bytes the chunk lies. */
export interface ChunkUse {
  sha256: string;
  offset: number;
  length: number;
}

/** The files a snapshot was archived from: its lines' sessions, a receipt's source or fork. */
function filesOf(sha: string, claims: Claims): string[] {
  const files = claims.entries.filter((e) => e.sha256 === sha).map((e) => e.path);
  for (const r of claims.receipts) {
    if (r.snapshot_manifest_sha256 === sha) files.push(r.source_path);
    if (r.output_manifest_sha256 === sha) files.push(r.path);
  }
  return [...new Set(files)];
}

/**
 * Whether archiving `path` now would cut the very chunk: its bytes where the snapshot had them, and
 * a chunk shorter than the cut size only where the file still ends (a session appended to since
 * holds the bytes, but snapshot cuts a longer chunk from them).
 */
async function holdsChunk(path: string, use: ChunkUse, chunk: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  try {
    const { handle, stats } = await openSource(path, maxTranscriptBytes(env));
    try {
      if (use.length < CHUNK_BYTES && stats.size !== use.offset + use.length) return false;
      const buffer = Buffer.alloc(use.length);
      return (await readFully(handle, buffer, use.offset)) === use.length && sha256Hex(buffer) === chunk;
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

const short = (sha: string) => `${sha.slice(0, 16)}…`;

/** The lost snapshots as a person would look them up: one by id and session, several by count. */
function describe(shas: readonly string[], claims: Claims): string {
  if (shas.length > 1) return `${shas.length} snapshots (gobstopper vault --verify names each)`;
  const sha = shas[0]!;
  const line = claims.entries.find((e) => e.sha256 === sha);
  const receipt = claims.receipts.find((r) => r.snapshot_manifest_sha256 === sha || r.output_manifest_sha256 === sha);
  const session = line ? `${line.provider} ${line.session_id}` : receipt ? `${receipt.provider} ${receipt.snapshot_manifest_sha256 === sha ? receipt.source_session_id : receipt.output_session_id}` : null;
  return `snapshot ${short(sha)}${session ? ` of ${session}` : ''}`;
}

interface Drop {
  steps: string;
  details: { lost_snapshots: string[]; receipts: string[]; manifests: string[] };
}

/** How to stop prune asking for snapshots that are lost: what names them goes, and so do they. */
function dropSteps(layout: VaultLayout, shas: readonly string[], claims: Claims, manifestsStored: boolean): Drop {
  const lost = new Set(shas);
  const them = shas.length === 1 ? 'its' : 'their';
  const steps: string[] = [];
  if (claims.entries.some((e) => lost.has(e.sha256))) steps.push(`delete ${them} lines from ${basename(layout.index)}`);
  if (shas.some((sha) => claims.pinned.has(sha))) steps.push(`move ${them} pins out of pins/`);
  const receipts = claims.receipts.filter((r) => lost.has(r.snapshot_manifest_sha256) || lost.has(r.output_manifest_sha256)).map((r) => r.operation);
  const manifests = manifestsStored ? shas : [];
  const moved = [...receipts.map((op) => `operations/${short(op)}.json`), ...manifests.map((sha) => `manifests/${short(sha)}`)];
  if (moved.length > 0) steps.push(`move ${moved.length > 2 ? `${them} ${receipts.length > 0 ? 'receipts and ' : ''}manifests` : moved.join(' and ')} out of the vault`);
  return {
    steps: `${steps.join(', ')}, then prune again`,
    details: { lost_snapshots: [...shas], receipts: receipts.map((op) => receiptPath(layout, op)), manifests: manifests.map((sha) => join(layout.manifests, sha)) },
  };
}

/**
 * The chunk failure `error` (missing, cut or not hashing to its name) with advice that leads
 * somewhere: archive again a file that still holds the chunk, or else restore it from a backup or
 * drop the snapshots that use it.
 */
export async function unreadableKeptChunk(layout: VaultLayout, error: VaultDamagedError, uses: readonly ChunkUse[], claims: Claims, env: NodeJS.ProcessEnv): Promise<VaultDamagedError> {
  const file = error.file;
  const missing = !(await lstat(file).then(() => true, () => false));
  // snapshot refuses to write the good bytes over a damaged chunk still in place.
  const aside = missing ? '' : 'move it out of the vault, then ';
  for (const use of uses) {
    for (const path of filesOf(use.sha256, claims)) {
      if (await holdsChunk(path, use, basename(file), env)) {
        return vaultDamaged(file, error.problem, `${aside}run gobstopper snapshot ${path} to write it again (that file still holds its bytes)${missing ? ', or restore it from a backup' : ''}`, { rewrite_from: path });
      }
    }
  }
  const shas = [...new Set(uses.map((u) => u.sha256))];
  const drop = dropSteps(layout, shas, claims, true);
  return vaultDamaged(
    file,
    error.problem,
    `${missing ? '' : 'move it out of the vault and '}restore it from a backup; no archived file holds its bytes any more, so without one ${describe(shas, claims)} cannot be recovered: to drop ${shas.length === 1 ? 'it' : 'them'}, ${drop.steps} (--json names the files in full)`,
    drop.details,
  );
}

/** A snapshot prune keeps whose manifest is gone: written again from an unchanged file, restored, or dropped. */
export function missingKeptManifest(layout: VaultLayout, sha: string, claims: Claims): VaultDamagedError {
  // The same bytes make the same manifest: a source unchanged since can write it again.
  const again = filesOf(sha, claims).map((path) => `, or, if ${path} is unchanged since, run gobstopper snapshot ${path} to write it again`).join('');
  const drop = dropSteps(layout, [sha], claims, false);
  return vaultDamaged(
    join(layout.manifests, sha),
    'a snapshot the index, a receipt or a pin references is missing',
    `restore it from a backup${again}; without either, ${describe([sha], claims)} cannot be recovered: to drop it, ${drop.steps}`,
    drop.details,
  );
}
