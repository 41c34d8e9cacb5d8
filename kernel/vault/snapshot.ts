/**
 * The snapshot service: archive a session file and record it in the index, as one step other
 * services (apply, fork, undo, `snapshot`) call in-process.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { faultPoint } from '../publish/faults.js';
import { withSharedCustody } from './custody.js';
import { appendIndexEntries, entryProblem, readIndex, withIndexLock } from './index-file.js';
import { ensureVault, type VaultLayout } from './layout.js';
import { checkSource, storeSnapshot, type StoreOptions, type StoredSnapshot } from './store.js';

export interface SnapshotRequest extends StoreOptions {
  path: string;
  sessionId: string;
  provider: string;
  /** Why: a strategy id, or snapshot, pre-undo, post-compact, fork, restore. */
  strategy: string;
  /** Unix seconds for the index entry; defaults to now. */
  ts?: number;
}

export interface SnapshotResult {
  entry: VaultEntry;
  stored: StoredSnapshot;
  /** false when the stream's newest line already recorded these bytes under this label: `entry` is that line. */
  newLine: boolean;
}

/** The directory's real path plus the file name: the file itself must not be a link. */
export async function canonicalSourcePath(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return join(await realpath(dirname(absolute)), basename(absolute));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new GobstopperError('source_missing', `no such file: ${absolute}`);
    throw error;
  }
}

/** Archives `path` and appends its index entry; the entry is written only after read-back succeeded. */
export async function snapshotFile(layout: VaultLayout, request: SnapshotRequest): Promise<SnapshotResult> {
  const path = await canonicalSourcePath(request.path);
  const draft: VaultEntry = {
    ts: request.ts ?? Math.floor(Date.now() / 1000),
    sha256: '0'.repeat(64),
    path,
    session_id: request.sessionId,
    provider: request.provider,
    bytes: 0,
    record_count: 0,
    strategy: request.strategy,
    source_sha256: '0'.repeat(64),
  };
  // Refuse bad metadata before any bytes are stored.
  const problem = entryProblem(draft);
  if (problem) throw new GobstopperError('invalid_entry', `cannot archive ${path}: ${problem}`);
  // A source refused on its face (too large, a link, not a file) leaves no vault behind either.
  await checkSource(path, request.env);
  await ensureVault(layout);
  return withSharedCustody(layout, async () => {
    // A damaged index would refuse the entry only after every chunk was written: fail closed first,
    // so a refused snapshot leaves the vault as it was.
    await withIndexLock(layout, () => readIndex(layout));
    const stored = await storeSnapshot(layout, path, request);
    const archived: VaultEntry = { ...draft, sha256: stored.manifestSha256, bytes: stored.bytes, record_count: stored.recordCount, source_sha256: stored.sourceSha256 };
    faultPoint('vault.before_index', request.fault, request.env);
    const [entry] = await appendIndexEntries(layout, [archived]);
    return { entry: entry!, stored, newLine: entry === archived };
  });
}

/**
 * Stores `path` without an index entry (candidate output bytes) and runs `then` while prune is still
 * held off, so the caller can reference the manifest from a receipt or a pin before it could be
 * collected.
 */
export async function storeRetained<T>(layout: VaultLayout, path: string, options: StoreOptions, then: (stored: StoredSnapshot) => Promise<T>): Promise<T> {
  await ensureVault(layout);
  return withSharedCustody(layout, async () => then(await storeSnapshot(layout, path, options)));
}

/** Reads of a file its client keeps appending to, and the pause before each retry. */
const SETTLE_PAUSES_MS = [150, 600];

/**
 * Archives a file that may be being written to (a live session asked for with `snapshot`): a read
 * that the file changed under is thrown away and the file read again, a few times, since a client
 * appends a record at a time. What is archived is the file as one read found it, whole.
 */
export async function snapshotSettled(layout: VaultLayout, request: SnapshotRequest, pauses: readonly number[] = SETTLE_PAUSES_MS): Promise<SnapshotResult> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await snapshotFile(layout, request);
    } catch (error) {
      if (!(error instanceof GobstopperError) || error.code !== 'source_changed') throw error;
      const pause = pauses[attempt - 1];
      if (pause === undefined) {
        if (attempt === 1) throw error;
        throw new GobstopperError('source_changed', `${request.path} changed while it was read, ${attempt} times in a row: its client is writing to it; nothing was recorded, try again when it is idle`, { cause: error });
      }
      await sleep(pause);
    }
  }
}
