/** `diff <a> <b>`: records added and removed between two snapshots, compared by record sha256. */
import { createHash } from 'node:crypto';
import type { DiffCommandOutput } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { snapshotNotFound } from './errors.js';
import { readIndex } from './index-file.js';
import { parseJsonLine, recordType } from './json-text.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { forEachRecord } from './records.js';
import { checkShaPrefix, resolveShaPrefix } from './selectors.js';
import { sortedCounts } from './show.js';

export type { DiffCommandOutput };

interface Side {
  sha: string;
  recordCount: number;
  /** Each record's sha256 and top-level type, in the snapshot's order. */
  records: Array<{ hash: string; type: string }>;
  types: Record<string, number>;
}

async function readSide(layout: VaultLayout, sha: string, env: NodeJS.ProcessEnv): Promise<Side> {
  const records: Side['records'] = [];
  const types: Record<string, number> = {};
  const { recordCount } = await forEachRecord(
    layout,
    sha,
    ({ bytes }) => {
      const type = recordType(parseJsonLine(bytes));
      types[type] = (types[type] ?? 0) + 1;
      const hash = createHash('sha256').update(bytes).digest('hex');
      records.push({ hash, type });
    },
    env,
  );
  return { sha, recordCount, records, types };
}

/**
 * The records of `from` that `other` has no match for. Records are matched one for one, so a record
 * `from` repeats more often than `other` counts once per extra copy (the later copies), and
 * record_count_b - added = record_count_a - removed always holds.
 */
function only(from: Side, other: Side): { hashes: string[]; byType: Record<string, number> } {
  const unmatched = new Map<string, number>();
  for (const { hash } of other.records) unmatched.set(hash, (unmatched.get(hash) ?? 0) + 1);
  const hashes: string[] = [];
  const byType: Record<string, number> = {};
  for (const { hash, type } of from.records) {
    const left = unmatched.get(hash) ?? 0;
    if (left > 0) {
      unmatched.set(hash, left - 1);
      continue;
    }
    hashes.push(hash);
    byType[type] = (byType[type] ?? 0) + 1;
  }
  return { hashes, byType: sortedCounts(byType) };
}

export async function diffSnapshots(layout: VaultLayout, a: string, b: string, env: NodeJS.ProcessEnv = process.env): Promise<DiffCommandOutput> {
  // Both ids are checked for form before the vault is asked about either: a malformed one is a
  // usage error whether or not a vault exists yet.
  checkShaPrefix(a, 'snapshot a');
  checkShaPrefix(b, 'snapshot b');
  if (!(await vaultExists(layout))) throw snapshotNotFound(a.toLowerCase());
  const shaA = await snapshotOf(layout, a, 'snapshot a');
  const shaB = await snapshotOf(layout, b, 'snapshot b');
  const sideA = await readSide(layout, shaA, env);
  const sideB = shaB === shaA ? sideA : await readSide(layout, shaB, env);
  const added = only(sideB, sideA);
  const removed = only(sideA, sideB);
  return {
    sha_a: shaA,
    sha_b: shaB,
    record_count_a: sideA.recordCount,
    record_count_b: sideB.recordCount,
    added_count: added.hashes.length,
    removed_count: removed.hashes.length,
    added: added.hashes,
    removed: removed.hashes,
    added_by_type: added.byType,
    removed_by_type: removed.byType,
    type_summary_a: sortedCounts(sideA.types),
    type_summary_b: sortedCounts(sideB.types),
  };
}

/**
 * The snapshot a prefix names. A session id's prefix (hex, as Claude Code's are) reads as a snapshot
 * prefix here and matches none: said as such, with where that session's snapshot ids are listed.
 */
async function snapshotOf(layout: VaultLayout, prefix: string, what: string): Promise<string> {
  try {
    return await resolveShaPrefix(layout, prefix, what);
  } catch (error) {
    if (!(error instanceof GobstopperError) || error.code !== 'snapshot_not_found') throw error;
    const lower = prefix.toLowerCase();
    const sessions = [...new Set((await readIndex(layout)).filter((e) => e.session_id.toLowerCase().startsWith(lower)).map((e) => e.session_id))];
    if (sessions.length === 0) throw error;
    // Naming one of several would send the user to the history of a session they may not mean.
    if (sessions.length > 1) {
      throw new GobstopperError('snapshot_not_found', `no snapshot ${lower} in the vault; ${prefix} starts the ids of ${sessions.length} archived sessions (${sessions.join(', ')}), and diff compares two snapshots (gobstopper history <session> lists a session's snapshot ids)`);
    }
    throw new GobstopperError('snapshot_not_found', `no snapshot ${lower} in the vault; ${prefix} starts the id of archived session ${sessions[0]}, and diff compares two snapshots (gobstopper history ${sessions[0]} lists its snapshot ids)`);
  }
}