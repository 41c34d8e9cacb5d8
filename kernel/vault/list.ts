/** `vault [session]` and `history <session>`: index queries, newest first by append order. */
import type { VaultEntry } from '../../schemas/generated/types.js';
import { readIndex } from './index-file.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { filterBySession, selectOneSession } from './selectors.js';

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
  return selectOneSession(await newestFirst(layout), selector);
}
