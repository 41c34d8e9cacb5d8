/** `vault [session]` and `history <session>`: index queries, newest first by append order. */
import type { VaultEntry } from '../../schemas/generated/types.js';
import { listReceipts } from '../publish/receipt.js';
import { withForkHint } from './fork-hint.js';
import { readIndex } from './index-file.js';
import { vaultExists, type VaultLayout } from './layout.js';
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

/**
 * Why a listing can hold more lines than states: unchanged bytes archived again under another label
 * (an apply's strategy, snapshot --label) get a line of their own, while a repeat of a session's
 * newest line (same bytes, same label) is not written at all.
 */
export const REARCHIVED_NOTE = 'each time the same bytes are archived under another label, they get a line of their own';

/** How many different states `entries` hold. */
export function distinctStates(entries: readonly VaultEntry[]): number {
  return new Set(entries.map((e) => e.sha256)).size;
}

/** Every archived state of one session. */
export async function sessionHistory(layout: VaultLayout, selector: string): Promise<VaultEntry[]> {
  const entries = await newestFirst(layout);
  return withForkHint(layout, selector, () => selectOneSession(entries, selector));
}

/**
 * Stored snapshots the index does not list (a failed apply's candidate, a line removed from a
 * damaged index, a pinned snapshot), sorted: a listing cannot show them, so it names them. A
 * publication's output is left out: its bytes are the fork, and undo reaches them by the fork.
 */
export async function unlistedSnapshots(layout: VaultLayout, indexed: readonly VaultEntry[]): Promise<string[]> {
  if (!(await vaultExists(layout))) return [];
  const listed = new Set(indexed.map((e) => e.sha256));
  const outputs = await publishedOutputs(layout);
  return (await listManifestIds(layout)).filter((sha) => !listed.has(sha) && !outputs.has(sha)).sort();
}

/** The snapshots operations' receipts name as the bytes they published (or were publishing). */
async function publishedOutputs(layout: VaultLayout): Promise<Set<string>> {
  return new Set((await listReceipts(layout)).map((receipt) => receipt.output_manifest_sha256));
}
