/**
 * A session that was never archived may be a fork or restore gobstopper published: its history is
 * its source's, so the error that says nothing matched names that source.
 */
import type { OperationReceipt } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { readableReceipts } from '../publish/receipt.js';
import type { VaultLayout } from './layout.js';
import { looksLikePath, pathForms } from './selectors.js';

/** The completed publications `selector` names (by output id prefix or path), one per output. */
async function publishedMatches(layout: VaultLayout, selector: string): Promise<OperationReceipt[]> {
  const receipts = (await readableReceipts(layout).catch(() => [])).filter((r) => r.completed);
  const forms = looksLikePath(selector) ? await pathForms(selector) : null;
  const prefix = selector.toLowerCase();
  const byOutput = new Map<string, OperationReceipt>();
  for (const r of receipts) {
    if (forms ? forms.has(r.path) : r.output_session_id.toLowerCase().startsWith(prefix)) byOutput.set(r.output_session_id, r);
  }
  return [...byOutput.values()].sort((a, b) => a.output_session_id.localeCompare(b.output_session_id));
}

const madeFrom = (r: OperationReceipt) => `${r.kind === 'compact' ? 'compacted fork' : r.kind} gobstopper published from ${r.source_session_id}`;

/**
 * The error to give instead of `cause` (nothing archived matches `selector`) when the selector
 * names files gobstopper published: the one fork's source, or the forks it could mean. Null when
 * it names none.
 */
export async function forkHintFor(layout: VaultLayout, selector: string, cause: GobstopperError): Promise<GobstopperError | null> {
  const matches = await publishedMatches(layout, selector);
  if (matches.length === 0) return null;
  if (matches.length > 1) {
    const shown = matches.slice(0, 5).map((r) => `${r.output_session_id.slice(0, 8)} (from ${r.source_session_id.slice(0, 8)})`);
    return new GobstopperError('session_not_archived', `${cause.message}; '${selector}' matches ${matches.length} forks gobstopper published, ${shown.join(', ')}${matches.length > 5 ? ', …' : ''}: give more of the id`, {
      exit: cause.exit,
      details: cause.details,
      cause,
    });
  }
  const r = matches[0]!;
  // Whole ids in the commands: sessions a client starts within a minute share their first eight
  // characters (Codex's time-ordered ids), and a cut id would be refused as ambiguous.
  return new GobstopperError(
    'session_not_archived',
    `${r.output_session_id} has not been archived itself: it is a ${madeFrom(r)}; gobstopper history ${r.source_session_id} lists that session's archived states, and gobstopper undo ${r.output_session_id} restores the one it was made from`,
    { exit: cause.exit, details: { ...cause.details, source_session_id: r.source_session_id }, cause },
  );
}

/** Runs a session lookup; a session that is not archived but was published gets the way to its source's history. */
export async function withForkHint<T>(layout: VaultLayout, selector: string, lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    if (!(error instanceof GobstopperError) || error.code !== 'session_not_archived') throw error;
    throw (await forkHintFor(layout, selector, error)) ?? error;
  }
}
