/**
 * `vault --verify`: every snapshot read back as undo reads it (the manifest, each index line against
 * it, every chunk against its name, the whole against its size and source digest), so damage left
 * by a disk fault, a restored backup or a copy to another machine is found before a restore needs
 * the snapshot. Nothing is written, not even a lock: the check takes no custody, as show and diff
 * take none (a hold file is a write, and a read-only vault must be checkable). A prune running
 * meanwhile removes a snapshot's index line, then its manifest, and only then the chunks no
 * remaining manifest uses; so a snapshot that failed and is by then gone from both the index and
 * manifests/ was pruned under the check, not damaged, and is left out of the answer.
 */
import { lstat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DamagedSnapshot, VaultEntry, VaultVerifyCommandOutput } from '../../schemas/generated/types.js';
import { MAX_TRANSCRIPT_LIMIT_BYTES } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';
import { VaultDamagedError } from './errors.js';
import { withForkHint } from './fork-hint.js';
import { readIndex, streamOf } from './index-file.js';
import { manifestOfEntry } from './indexed-manifest.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { listSnapshots, publishedOutputs } from './list.js';
import { loadManifest, type LoadedManifest } from './manifest.js';
import { streamManifestChunks } from './reconstruct.js';
import { listManifestIds } from './selectors.js';

export type { VaultVerifyCommandOutput };

type Problem = DamagedSnapshot['problem'];

export interface VerifyProgress {
  /** Snapshots finished before this one. */
  done: number;
  total: number;
  sha256: string;
  /** Bytes of this snapshot read back so far, of `bytes` (0 until its manifest is read). */
  read: number;
  bytes: number;
}

export interface VerifyRequest {
  /** A session-id prefix or path: only that session's indexed snapshots are checked. */
  session?: string;
  onProgress?: (progress: VerifyProgress) => void;
  env?: NodeJS.ProcessEnv;
}

/**
 * Why a snapshot is checked: a listing shows it, a published fork's receipt names it (undo reaches
 * it through the fork), or nothing does.
 */
type Reach = 'listed' | 'retained' | 'unindexed';

interface Target {
  sha256: string;
  reach: Reach;
  /** The index lines naming it, newest first; empty for a snapshot without one. */
  lines: VaultEntry[];
}

/** Each snapshot once, in listing order, with every line that names it. */
function indexedTargets(entries: readonly VaultEntry[]): Target[] {
  const bySha = new Map<string, Target>();
  for (const entry of entries) {
    const target = bySha.get(entry.sha256) ?? { sha256: entry.sha256, reach: 'listed' as const, lines: [] };
    target.lines.push(entry);
    bySha.set(entry.sha256, target);
  }
  return [...bySha.values()];
}

/** The lines that make different claims about a snapshot (a line archived again repeats one). */
function distinctClaims(lines: readonly VaultEntry[]): VaultEntry[] {
  const seen = new Map<string, VaultEntry>();
  for (const line of lines) {
    const claim = `${streamOf(line)}\0${line.bytes}\0${line.source_sha256}`;
    if (!seen.has(claim)) seen.set(claim, line);
  }
  return [...seen.values()];
}

function otherProblem(error: unknown): Problem {
  if (error instanceof GobstopperError) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: 'unreadable', message: error.message };
  throw error;
}

function manifestProblem(error: unknown, target: Target): Problem {
  if (error instanceof GobstopperError && error.code === 'snapshot_not_found') {
    return { code: 'manifest_missing', message: `manifest missing: ${target.lines.length > 0 ? 'the index lists the snapshot, ' : ''}manifests/ does not hold it` };
  }
  if (error instanceof VaultDamagedError) return { code: 'manifest_unreadable', message: `manifest unreadable: ${error.problem}` };
  return otherProblem(error);
}

function lineProblem(error: unknown): Problem {
  if (error instanceof VaultDamagedError) return { code: 'index_mismatch', message: `index line does not match the manifest: ${error.problem}` };
  return otherProblem(error);
}

async function contentProblem(error: unknown, layout: VaultLayout): Promise<Problem> {
  if (!(error instanceof VaultDamagedError)) return otherProblem(error);
  if (dirname(error.file) !== layout.chunks) return { code: 'content_mismatch', message: `size or hash mismatch: ${error.problem}` };
  const chunk = basename(error.file);
  if (!(await present(error.file))) return { code: 'chunk_missing', message: `missing chunk ${chunk}` };
  return { code: 'chunk_damaged', message: `chunk ${chunk} is damaged: ${error.problem}` };
}

const present = (path: string) => lstat(path).then(
  () => true,
  () => false,
);

/** The first problem reading `target` back, or null when every byte of it is intact. */
async function problemOf(layout: VaultLayout, target: Target, env: NodeJS.ProcessEnv, onRead: (loaded: LoadedManifest, read: number) => void): Promise<Problem | null> {
  let loaded: LoadedManifest;
  try {
    loaded = await loadManifest(layout, target.sha256, env);
  } catch (error) {
    return manifestProblem(error, target);
  }
  for (const line of distinctClaims(target.lines)) {
    try {
      await manifestOfEntry(layout, line, env);
    } catch (error) {
      return lineProblem(error);
    }
  }
  let read = 0;
  onRead(loaded, read);
  try {
    await streamManifestChunks(layout, loaded, (chunk) => {
      read += chunk.length;
      onRead(loaded, read);
    });
  } catch (error) {
    return contentProblem(error, layout);
  }
  return null;
}

/** The snapshots a session selector names, newest first; a selector naming none is refused. */
async function sessionTargets(layout: VaultLayout, session: string): Promise<Target[]> {
  return withForkHint(layout, session, async () => {
    const entries = await listSnapshots(layout, session);
    if (entries.length === 0) throw new GobstopperError('session_not_archived', `no snapshots of sessions matching '${session}' (gobstopper vault lists them)`);
    return indexedTargets(entries);
  });
}

/**
 * Damage whose snapshot a prune removed while it was checked: its manifest is gone, and so is every
 * line naming it from the index as it is now.
 */
async function prunedMeanwhile(layout: VaultLayout, damaged: readonly DamagedSnapshot[]): Promise<Set<string>> {
  const gone = new Set<string>();
  for (const d of damaged) if (!(await present(join(layout.manifests, d.sha256)))) gone.add(d.sha256);
  if (gone.size === 0) return gone;
  for (const entry of await readIndex(layout)) gone.delete(entry.sha256);
  return gone;
}

/**
 * GOBSTOPPER_MAX_TRANSCRIPT_BYTES bounds what a parse holds in memory; this check holds one chunk at
 * a time, so a snapshot archived under a higher limit than the one set now is read back rather than
 * called damaged. Only a size no limit could have let in is still refused.
 */
function anySizeAllowed(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GOBSTOPPER_MAX_TRANSCRIPT_BYTES: String(MAX_TRANSCRIPT_LIMIT_BYTES) };
}

export async function verifyVault(layout: VaultLayout, request: VerifyRequest = {}): Promise<VaultVerifyCommandOutput> {
  const env = anySizeAllowed(request.env ?? process.env);
  let targets: Target[];
  let unindexed: string[] = [];
  let indexProblem: Problem | null = null;
  if (request.session !== undefined) {
    targets = await sessionTargets(layout, request.session);
  } else {
    // A damaged index is the damage this check most often meets: said, with the repair, and every
    // stored snapshot still read back (none listed, so all as ones no line names).
    const listing = await listSnapshots(layout).then(
      (entries) => ({ entries, problem: null }),
      (error: unknown) => {
        if (error instanceof VaultDamagedError && error.file === layout.index) return { entries: [] as VaultEntry[], problem: { code: error.code, message: error.message } };
        throw error;
      },
    );
    const entries = listing.entries;
    indexProblem = listing.problem;
    targets = indexedTargets(entries);
    if (await vaultExists(layout)) {
      const indexed = new Set(entries.map((e) => e.sha256));
      const withoutLine = (await listManifestIds(layout)).filter((sha) => !indexed.has(sha)).sort();
      // A receipt that cannot be read names no publication: its outputs then count as unindexed.
      const outputs = await publishedOutputs(layout).catch(() => new Set<string>());
      unindexed = withoutLine.filter((sha) => !outputs.has(sha));
      // A publication's retained output first (undo reaches it through its fork), then the rest.
      targets.push(...withoutLine.filter((sha) => outputs.has(sha)).map((sha) => ({ sha256: sha, reach: 'retained' as const, lines: [] })));
      targets.push(...unindexed.map((sha) => ({ sha256: sha, reach: 'unindexed' as const, lines: [] })));
    }
  }

  const damaged: DamagedSnapshot[] = [];
  for (const [done, target] of targets.entries()) {
    const report = (loaded: LoadedManifest | null, read: number) =>
      request.onProgress?.({ done, total: targets.length, sha256: target.sha256, read, bytes: loaded?.manifest.bytes ?? 0 });
    report(null, 0);
    const problem = await problemOf(layout, target, env, report);
    if (problem === null) continue;
    const newest = target.lines[0];
    damaged.push({ sha256: target.sha256, session_id: newest?.session_id ?? null, provider: newest?.provider ?? null, indexed: newest !== undefined, problem });
  }

  // prune reads the index first and refuses a damaged one, so none can have run under this check.
  const pruned = indexProblem === null ? await prunedMeanwhile(layout, damaged) : new Set<string>();
  const stillThere = (sha: string) => !pruned.has(sha);
  const checked = targets.filter((t) => stillThere(t.sha256));
  const reached = (reach: Reach) => checked.filter((t) => t.reach === reach).length;
  return {
    verified: checked.length,
    listed: reached('listed'),
    retained: reached('retained'),
    damaged: damaged.filter((d) => stillThere(d.sha256)),
    unindexed: unindexed.filter(stillThere).length,
    unindexed_snapshots: unindexed.filter(stillThere),
    index_problem: indexProblem,
  };
}
