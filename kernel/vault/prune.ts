/**
 * `prune`: keep the newest N archived states of each (provider, path, session_id) stream plus every
 * snapshot a receipt or pin references (a pending receipt no run will finish is removed instead:
 * see publish/abandoned.ts), then remove the snapshots this prune dropped from the index
 * and the chunks no remaining snapshot uses. A snapshot with no index line at all is never removed:
 * its line may have been lost (a damaged index repaired by deleting the line, an index emptied by
 * hand), and prune cannot tell that from one it is done with; `--include-unindexed` removes them.
 * Every manifest is validated and every kept chunk checked before anything changes, the index is
 * rewritten before any file is unlinked (a crash leaves snapshots without a line behind, never a
 * line naming removed data; the journal of what it dropped lets the next prune delete those), and
 * the whole run holds the vault exclusively so no snapshot in progress loses its chunks. A removed
 * snapshot's card file goes before its manifest, so a stopped prune leaves no card file naming a
 * snapshot that is gone; one left by other means (a manifest moved aside) goes with the next prune.
 */
import { lstat, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { PruneCommandOutput } from '../../schemas/generated/types.js';
import { usageError } from '../errors.js';
import { judgeReceipts, type Settlement } from '../publish/abandoned.js';
import { listReceipts } from '../publish/receipt.js';
import { withExclusiveCustody } from './custody.js';
import { VaultDamagedError } from './errors.js';
import { readIndex, rewriteIndexLocked, streamOf, withIndexLock } from './index-file.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { CHUNK_BYTES, DEFAULT_PRUNE_KEEP } from './limits.js';
import { cardFilesOutside } from './card-file.js';
import { checkChunkPresent, readChunk } from './chunks.js';
import { chunkLength, loadManifest } from './manifest.js';
import { sweepDeadRunLeftovers } from './leftovers.js';
import { listPinnedManifests } from './pins.js';
import { missingKeptManifest, unreadableKeptChunk, type ChunkUse, type Claims } from './prune-repair.js';
import { clearPruneJournal, readPruneJournal, writePruneJournal } from './prune-journal.js';
import { fsyncDir, isTempName, namesIn } from './private-fs.js';
import { listManifestIds } from './selectors.js';
import { quotedFlagNumber } from '../text/numbers.js';

export type { PruneCommandOutput };

export interface PruneRequest {
  keep?: number;
  apply?: boolean;
  /** Also remove snapshots with no index line that nothing references (a failed apply's candidate, a crashed snapshot). */
  includeUnindexed?: boolean;
}

const HEX64 = /^[0-9a-f]{64}$/;

async function sizeOf(path: string): Promise<number> {
  try {
    return (await lstat(path)).size;
  } catch {
    return 0;
  }
}

export async function pruneVault(layout: VaultLayout, request: PruneRequest = {}, env: NodeJS.ProcessEnv = process.env): Promise<PruneCommandOutput> {
  const keep = request.keep ?? DEFAULT_PRUNE_KEEP;
  const apply = request.apply ?? false;
  if (!Number.isInteger(keep) || keep < 1 || keep > 1_000_000) throw usageError('invalid_keep', `--keep must be a whole number from 1 to 1000000, got ${quotedFlagNumber(keep, 1, 1_000_000)}`);
  const empty: PruneCommandOutput = {
    streams: 0,
    kept_entries: 0,
    dropped_entries: 0,
    manifests_removed: 0,
    chunks_removed: 0,
    bytes_reclaimed: 0,
    unindexed_kept: 0,
    unindexed_snapshots: [],
    dry_run: !apply,
    keep,
  };
  if (!(await vaultExists(layout))) return empty;

  // A preview changes nothing, so it takes no lock: taking one writes to the vault (a read-only
  // vault could not be previewed) and clears dead snapshotters' holds. A snapshot in progress may
  // show in it as an unindexed one.
  const guarded = (body: () => Promise<PruneCommandOutput>) => (apply ? withExclusiveCustody(layout, () => withIndexLock(layout, body)) : body());
  // Holds the operation locks of the receipts it judged until the prune is over.
  let judged: Settlement | undefined;
  return guarded(async () => {
    const entries = await readIndex(layout);
    const receipts = await listReceipts(layout);
    // A pending receipt no run will finish references nothing: its snapshot falls under the
    // keep-newest rule, and its never-published candidate goes as a snapshot dropped on purpose.
    // Judged now and settled below, so a damaged vault still stops the prune before any change.
    judged = await judgeReceipts(layout, receipts, { lock: apply });
    const abandoned = new Set(judged.abandoned.map((r) => r.operation));
    const abandonedOutputs = new Set(judged.abandoned.map((r) => r.output_manifest_sha256));
    const referenced = new Set<string>();
    for (const receipt of receipts) {
      if (abandoned.has(receipt.operation)) continue;
      referenced.add(receipt.snapshot_manifest_sha256);
      referenced.add(receipt.output_manifest_sha256);
    }
    const pinned = new Set(await listPinnedManifests(layout));
    for (const sha of pinned) referenced.add(sha);

    // The newest `keep` archived states per stream, by append order. A state is a snapshot, not
    // an index line: archiving the same bytes again under another label (snapshot, fork, apply)
    // adds a line, and counting lines pushed the only copy of an older state out of the window.
    const statesPerStream = new Map<string, Set<string>>();
    const keepFlags = new Array<boolean>(entries.length).fill(false);
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!;
      const key = streamOf(entry);
      let states = statesPerStream.get(key);
      if (!states) statesPerStream.set(key, (states = new Set()));
      if (!states.has(entry.sha256) && states.size < keep) states.add(entry.sha256);
      keepFlags[i] = states.has(entry.sha256) || referenced.has(entry.sha256);
    }
    const kept = entries.filter((_, i) => keepFlags[i]);
    // Streams this prune takes a state from: their kept states must be readable, byte for byte,
    // before an older copy goes (a chunk damaged in place keeps its size).
    const losing = new Set(entries.filter((_, i) => !keepFlags[i]).map(streamOf));
    const mustRead = new Set(kept.filter((e) => losing.has(streamOf(e))).map((e) => e.sha256));

    const liveManifests = new Set<string>(referenced);
    for (const entry of kept) liveManifests.add(entry.sha256);
    const indexed = new Set(entries.map((e) => e.sha256));
    // Snapshots an earlier prune dropped from the index and was stopped before deleting.
    const unfinished = await readPruneJournal(layout);

    // Validate every stored manifest before deciding anything; a damaged one stops the prune.
    const stored = new Set(await listManifestIds(layout));
    const liveChunks = new Map<string, number>();
    // Which kept snapshots use each kept chunk, said when one cannot be read.
    const chunkUses = new Map<string, ChunkUse[]>();
    const readChunks = new Set<string>();
    const unindexed: string[] = [];
    const deadManifests: string[] = [];
    for (const sha of stored) {
      const { manifest } = await loadManifest(layout, sha, env);
      const keptUnindexed = !liveManifests.has(sha) && !indexed.has(sha) && !request.includeUnindexed && !unfinished.has(sha) && !abandonedOutputs.has(sha);
      if (keptUnindexed) unindexed.push(sha);
      if (liveManifests.has(sha) || keptUnindexed) {
        manifest.chunks.forEach((chunk, i) => {
          const length = chunkLength(manifest.bytes, i);
          liveChunks.set(chunk, length);
          const uses = chunkUses.get(chunk) ?? [];
          uses.push({ sha256: sha, offset: i * CHUNK_BYTES, length });
          chunkUses.set(chunk, uses);
        });
      } else deadManifests.push(sha);
      if (mustRead.has(sha)) for (const chunk of manifest.chunks) readChunks.add(chunk);
    }
    // What stays must still be readable: a missing or cut chunk is reported, not pruned around.
    // Every kept chunk is checked for its size; those of streams losing a state are read whole.
    const claims: Claims = { entries: kept, receipts: receipts.filter((r) => !abandoned.has(r.operation)), pinned };
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    for (const [chunk, length] of liveChunks) {
      try {
        if (readChunks.has(chunk)) await readChunk(layout.chunks, chunk, length, buffer);
        else await checkChunkPresent(layout.chunks, chunk, length);
      } catch (error) {
        if (!(error instanceof VaultDamagedError)) throw error;
        throw await unreadableKeptChunk(layout, error, chunkUses.get(chunk) ?? [], claims, env);
      }
    }
    for (const sha of liveManifests) if (!stored.has(sha)) throw missingKeptManifest(layout, sha, claims);
    const chunkNames = await namesIn(layout.chunks);
    const deadChunks = chunkNames.filter((name) => HEX64.test(name) && !liveChunks.has(name));

    const dead = new Set(deadManifests);
    const staying = new Set([...stored].filter((sha) => !dead.has(sha)));
    const deadCardFiles = await cardFilesOutside(layout, staying);

    let bytesReclaimed = 0;
    for (const name of deadCardFiles) bytesReclaimed += await sizeOf(join(layout.cards, name));
    for (const sha of deadManifests) bytesReclaimed += await sizeOf(join(layout.manifests, sha));
    for (const sha of deadChunks) bytesReclaimed += await sizeOf(join(layout.chunks, sha));

    if (apply) {
      if (deadManifests.length > 0) await writePruneJournal(layout, deadManifests);
      // Before any line or file goes: a receipt must never name a snapshot that is gone.
      await judged.settle();
      if (kept.length !== entries.length) await rewriteIndexLocked(layout, kept);
      const cardNames = await namesIn(layout.cards);
      for (const name of deadCardFiles) await rm(join(layout.cards, name), { force: true });
      for (const name of cardNames) if (isTempName(name)) await unlink(join(layout.cards, name)).catch(() => undefined);
      if (cardNames.length > 0) await fsyncDir(layout.cards);
      for (const sha of deadManifests) await unlink(join(layout.manifests, sha));
      // Temp files are leftovers of interrupted writes: no writer can be running now.
      for (const name of await namesIn(layout.manifests)) if (isTempName(name)) await unlink(join(layout.manifests, name)).catch(() => undefined);
      await fsyncDir(layout.manifests);
      for (const sha of deadChunks) await unlink(join(layout.chunks, sha));
      for (const name of chunkNames) if (isTempName(name)) await unlink(join(layout.chunks, name)).catch(() => undefined);
      await fsyncDir(layout.chunks);
      await clearPruneJournal(layout);
      // Read before the settlement: a receipt it removed no longer names its fork's path.
      await sweepDeadRunLeftovers(layout, env, receipts.map((r) => r.path));
    }
    return {
      streams: statesPerStream.size,
      kept_entries: kept.length,
      dropped_entries: entries.length - kept.length,
      manifests_removed: deadManifests.length,
      chunks_removed: deadChunks.length,
      bytes_reclaimed: bytesReclaimed,
      unindexed_kept: unindexed.length,
      unindexed_snapshots: unindexed.sort(),
      dry_run: !apply,
      keep,
    };
  }).finally(() => judged?.release());
}
