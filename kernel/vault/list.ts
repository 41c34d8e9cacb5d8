/** `vault [session]` and `history <session>`: index queries, newest first by append order. */
import type { VaultEntry } from '../../schemas/generated/types.js';
import { listReceipts } from '../publish/receipt.js';
import { withForkHint } from './fork-hint.js';
import { readIndex } from './index-file.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { listPinnedManifests } from './pins.js';
import { filterBySession, listManifestIds, selectOneSession } from './selectors.js';

async function newestFirst(layout: VaultLayout): Promise<VaultEntry[]> {
  if (!(await vaultExists(layout))) return [];
  return (await readIndex(layout)).reverse();
}

/** Every archived state, or those of sessions matching `session` (id prefix or path). */
export async function listSnapshots(layout: VaultLayout, session?: string): Promise<VaultEntry[]> {
  const entries = await newestFirst(layout);
  return session === undefined ? entries : filterBySession(entries, session);
}

/** Every archived state of one session. */
export async function sessionHistory(layout: VaultLayout, selector: string): Promise<VaultEntry[]> {
  const entries = await newestFirst(layout);
  return withForkHint(layout, selector, () => selectOneSession(entries, selector));
}

/**
 * Stored snapshots that no index line, receipt or pin names (a failed apply's candidate, a line
 * deleted to repair the index): the listing cannot show them, prune lists them by id.
 */
export async function unlistedSnapshots(layout: VaultLayout, indexed: readonly VaultEntry[]): Promise<number> {
  if (!(await vaultExists(layout))) return 0;
  const named = new Set(indexed.map((e) => e.sha256));
  for (const receipt of await listReceipts(layout)) {
    named.add(receipt.snapshot_manifest_sha256);
    named.add(receipt.output_manifest_sha256);
  }
  for (const sha of await listPinnedManifests(layout)) named.add(sha);
  return (await listManifestIds(layout)).filter((sha) => !named.has(sha)).length;
}
