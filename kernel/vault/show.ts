/** `show <sha|session>`: one verified snapshot's size, record types and label. */
import type { ShowCommandOutput, VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { readIndex } from './index-file.js';
import { parseJsonLine, recordType } from './json-text.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { forEachRecord } from './records.js';
import { forkHintFor } from './fork-hint.js';
import { manifestOfEntry } from './indexed-manifest.js';
import { publishedEntry, readableReceipts, sourceEntry } from '../publish/receipt.js';
import type { OperationReceipt } from '../../schemas/generated/types.js';
import { isHexPrefix, looksLikeSnapshotId, MIN_SHA_PREFIX, refuseOverlongSnapshotId, resolveShaPrefix, selectOneSession } from './selectors.js';

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

/**
 * The newest snapshot of the session `target` selects. Nothing archived under it: a fork
 * gobstopper published gets the way to its source's history, and a hex prefix that names neither
 * may still name a snapshot (diff and undo --sha take 4+ characters), shown with its index line.
 */
async function sessionOrSnapshot(layout: VaultLayout, entries: VaultEntry[], target: string): Promise<{ sha: string; label: VaultEntry | undefined }> {
  let session: VaultEntry[];
  try {
    session = await selectOneSession(entries, target);
  } catch (error) {
    if (!(error instanceof GobstopperError) || error.code !== 'session_not_archived') throw error;
    const hint = await forkHintFor(layout, target, error);
    if (hint) throw hint;
    if (!isHexPrefix(target) || target.length < MIN_SHA_PREFIX) throw error;
    const sha = await resolveShaPrefix(layout, target).catch((lookup: unknown) => {
      // No such snapshot either. A prefix copied from history (of a snapshot since pruned) was
      // meant as a snapshot as often as a session, so both are said. An ambiguous prefix says so.
      if (!(lookup instanceof GobstopperError && lookup.code === 'snapshot_not_found')) throw lookup;
      throw new GobstopperError(error.code, `nothing archived matches '${target}': no archived session nor snapshot has that prefix (gobstopper vault lists them; apply and snapshot archive a session)`);
    });
    return { sha, label: entries.findLast((e) => e.sha256 === sha) };
  }
  const newest = session[session.length - 1]!;
  return { sha: newest.sha256, label: newest };
}

/** A hex string of 16+ characters is a snapshot prefix; anything else selects a session's newest snapshot (or, failing that, a snapshot). */
export async function showSnapshot(layout: VaultLayout, target: string, env: NodeJS.ProcessEnv = process.env): Promise<ShowCommandOutput> {
  refuseOverlongSnapshotId(target);
  // Without a vault the target is still read as it would be with one (an empty selector is a usage
  // error, a session is a session not archived), so only the data's answer depends on the vault.
  const entries = (await vaultExists(layout)) ? await readIndex(layout) : [];
  let sha: string;
  let label: VaultEntry | undefined;
  if (looksLikeSnapshotId(target)) {
    sha = await resolveShaPrefix(layout, target);
    label = entries.findLast((e) => e.sha256 === sha);
  } else {
    ({ sha, label } = await sessionOrSnapshot(layout, entries, target));
  }
  // A session's snapshot is found through its index line, which must name what it says it does.
  if (label) await manifestOfEntry(layout, label, env);
  // Not indexed: the receipts may name it. Best effort: a receipt that cannot be read only leaves
  // the snapshot unlabelled (vault --verify is where damage is reported).
  const receipts = label ? [] : await readableReceipts(layout).catch(() => [] as OperationReceipt[]);
  // A publication's retained output is described by its receipt.
  const publication = receipts.find((r) => r.output_manifest_sha256 === sha) ?? null;
  if (publication) label = publishedEntry(publication);
  const { loaded, recordCount, types } = await recordTypeSummary(layout, sha, env);
  // A source state whose index line was lost is still named by the receipt of the operation that
  // archived it, when that receipt records exactly these bytes (as undo restores it by).
  const source = label ? null : (receipts.find((r) => r.snapshot_manifest_sha256 === sha && r.source_sha256 === loaded.manifest.source_sha256 && r.bytes_before === loaded.manifest.bytes) ?? null);
  if (source) label = sourceEntry(source);
  const shown: ShowCommandOutput = {
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
  if (publication) shown.output_of_operation = publication.operation;
  if (source) shown.source_of_operation = source.operation;
  return shown;
}

/** Most frequent first, then by name, so output is stable. */
export function sortedCounts(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) out[k] = v;
  return out;
}
