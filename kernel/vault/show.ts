/** `show <sha|session>`: one verified snapshot's size, record types and label. */
import type { ShowCommandOutput, VaultEntry } from '../../schemas/generated/types.js';
import { snapshotNotFound } from './errors.js';
import { readIndex } from './index-file.js';
import { parseJsonLine, recordType } from './json-text.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { forEachRecord } from './records.js';
import { looksLikeSnapshotId, resolveShaPrefix, selectOneSession } from './selectors.js';

export type { ShowCommandOutput };

/** Record counts by top-level `type`, from a verified snapshot. */
async function recordTypeSummary(layout: VaultLayout, sha: string, env: NodeJS.ProcessEnv = process.env) {
  const types: Record<string, number> = {};
  const { loaded, recordCount } = await forEachRecord(
    layout,
    sha,
    ({ bytes }) => {
      const type = recordType(parseJsonLine(bytes));
      types[type] = (types[type] ?? 0) + 1;
    },
    env,
  );
  return { loaded, recordCount, types };
}

/** A hex string of 16+ characters is a snapshot prefix; anything else selects a session's newest snapshot. */
export async function showSnapshot(layout: VaultLayout, target: string, env: NodeJS.ProcessEnv = process.env): Promise<ShowCommandOutput> {
  if (!(await vaultExists(layout))) throw snapshotNotFound(target);
  const entries = await readIndex(layout);
  let sha: string;
  let label: VaultEntry | undefined;
  if (looksLikeSnapshotId(target)) {
    sha = await resolveShaPrefix(layout, target);
    label = entries.findLast((e) => e.sha256 === sha);
  } else {
    const session = await selectOneSession(entries, target);
    label = session[session.length - 1]!;
    sha = label.sha256;
  }
  const { loaded, recordCount, types } = await recordTypeSummary(layout, sha, env);
  return {
    sha256: sha,
    source_sha256: loaded.manifest.source_sha256,
    bytes: loaded.manifest.bytes,
    record_count: recordCount,
    record_types: sortedCounts(types),
    provider: label?.provider ?? null,
    session_id: label?.session_id ?? null,
    path: label?.path ?? null,
    strategy: label?.strategy ?? null,
    ts: label?.ts ?? null,
  };
}

/** Most frequent first, then by name, so output is stable. */
export function sortedCounts(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) out[k] = v;
  return out;
}
