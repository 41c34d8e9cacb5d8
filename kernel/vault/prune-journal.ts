/**
 * What a prune has dropped from the index but not yet deleted. Written before the index loses the
 * snapshots' lines, removed once their files are gone: a prune stopped in between leaves snapshots
 * without a line, which a later prune would otherwise keep as possibly lost lines (see prune.ts).
 * The journal says they were dropped on purpose, so the next prune finishes the job.
 */
import { rm } from 'node:fs/promises';
import type { VaultLayout } from './layout.js';
import { readPrivateFile, replacePrivateFile } from './private-fs.js';

const HEX64 = /^[0-9a-f]{64}$/;
/** About 67 bytes a dropped snapshot: room for a million of them. */
const MAX_JOURNAL_BYTES = 64 * 1024 * 1024;

/** The snapshot ids a stopped prune had dropped; empty when there is no journal (or it is unreadable). */
export async function readPruneJournal(layout: VaultLayout): Promise<Set<string>> {
  const bytes = await readPrivateFile(layout.pruneJournal, MAX_JOURNAL_BYTES).catch(() => null);
  if (bytes === null) return new Set();
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    const dropped = (value as { dropped?: unknown } | null)?.dropped;
    // A journal that is not what prune writes names nothing: it must never make a snapshot go.
    return new Set(Array.isArray(dropped) ? dropped.filter((id): id is string => typeof id === 'string' && HEX64.test(id)) : []);
  } catch {
    return new Set();
  }
}

export async function writePruneJournal(layout: VaultLayout, dropped: readonly string[]): Promise<void> {
  await replacePrivateFile(layout.pruneJournal, Buffer.from(JSON.stringify({ dropped }) + '\n', 'utf8'));
}

export async function clearPruneJournal(layout: VaultLayout): Promise<void> {
  await rm(layout.pruneJournal, { force: true });
}
