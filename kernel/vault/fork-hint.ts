/**
 * A session that was never archived may be a fork or restore gobstopper published: its history is
 * its source's, so the error that says nothing matched names that source.
 */
import { GobstopperError } from '../errors.js';
import { listReceipts } from '../publish/receipt.js';
import type { VaultLayout } from './layout.js';
import { looksLikePath, pathForms } from './selectors.js';

/** What a published file was made from, when `selector` names one (by id prefix or path). */
async function publishedFrom(layout: VaultLayout, selector: string): Promise<{ kind: string; output: string; source: string } | null> {
  const receipts = (await listReceipts(layout).catch(() => [])).filter((r) => r.completed);
  const forms = looksLikePath(selector) ? await pathForms(selector) : null;
  const prefix = selector.toLowerCase();
  const found = receipts.find((r) => (forms ? forms.has(r.path) : r.output_session_id.toLowerCase().startsWith(prefix)));
  return found ? { kind: found.kind === 'compact' ? 'compacted fork' : found.kind, output: found.output_session_id, source: found.source_session_id } : null;
}

/** Runs a session lookup; a session that is not archived but was published gets the way to its source's history. */
export async function withForkHint<T>(layout: VaultLayout, selector: string, lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    if (!(error instanceof GobstopperError) || error.code !== 'session_not_archived') throw error;
    const made = await publishedFrom(layout, selector);
    if (!made) throw error;
    throw new GobstopperError(
      'session_not_archived',
      `${made.output} has not been archived itself: it is a ${made.kind} gobstopper published from ${made.source}; gobstopper history ${made.source.slice(0, 8)} lists that session's archived states, and gobstopper undo ${made.output.slice(0, 8)} restores the one it was made from`,
      { exit: error.exit, details: { ...error.details, source_session_id: made.source }, cause: error },
    );
  }
}
