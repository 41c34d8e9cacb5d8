/**
 * Where a bench looked for sessions, and what a bench that measured nothing says of why. The
 * command prints it and the HTML report shows it: a report read later, away from the terminal,
 * must not be a page of empty charts that leaves the reader guessing.
 */
import type { BenchRow } from '../../schemas/generated/types.js';
import { discoveryWindow } from '../policy/defaults.js';
import { describeWindow, formatTs } from '../text/human.js';
import { formatInt } from '../text/numbers.js';
import { futureSinceNote } from '../text/since.js';

/** Times are Unix seconds. */
export type BenchWindow = { kind: 'since'; since: number; now: number } | { kind: 'recent'; max_age_secs: number } | { kind: 'all' };

/** --since wins, then --all, then [discovery] max_age_secs (0 there meaning every age). */
export function benchWindow(since: number | null, all: boolean | undefined, nowSeconds: number, maxAgeSecs: number): BenchWindow {
  if (since !== null) return { kind: 'since', since, now: nowSeconds };
  const recent = all ? null : discoveryWindow(maxAgeSecs);
  return recent === null ? { kind: 'all' } : { kind: 'recent', max_age_secs: recent };
}

/** The window is named: a bare "none found" after --since hides a window that starts later than meant. */
export function noSessionsMessage(window: BenchWindow): string {
  if (window.kind === 'since') return `No sessions updated since ${formatTs(window.since)} UTC${futureSinceNote(window.since, window.now)}.`;
  if (window.kind === 'recent') return `No sessions found in the last ${describeWindow(window.max_age_secs)} (gobstopper bench --all measures older ones).`;
  return 'No sessions found.';
}

/** Where the sessions a bench measured came from, said under its table: "updated since …", "from the last 7 days". */
export function windowPhrase(window: BenchWindow): string {
  if (window.kind === 'since') return `updated since ${formatTs(window.since)} UTC`;
  if (window.kind === 'recent') return `from the last ${describeWindow(window.max_age_secs)}`;
  return 'of every age';
}

export const ALL_BELOW_TRIGGER_MESSAGE = 'every session is under the trigger, so no strategy planned anything; --trigger and --floor measure them at a lower one';

/**
 * Nothing fired anywhere. Only when nothing failed either (a failure row has no reason code): a
 * failed row says nothing about the trigger, and a lower one would not measure it.
 */
export function allBelowTrigger(rows: readonly BenchRow[]): boolean {
  return rows.length > 0 && rows.every((r) => r.reason_code === 'below_trigger');
}

export interface BenchTotals {
  sessions: number;
  sessions_measured: number;
  rows: readonly BenchRow[];
}

/** Why a bench has nothing to show, or null when it has something. */
export function nothingMeasuredReason(totals: BenchTotals, window: BenchWindow): string | null {
  if (totals.sessions === 0) return noSessionsMessage(window);
  if (totals.sessions_measured === 0) return `Not one of the ${formatInt(totals.sessions)} session(s) found could be measured: each failed, or every strategy failed on it (the failures are listed below).`;
  // The command prints it as a note after its counts; standing alone it is a sentence.
  if (allBelowTrigger(totals.rows)) return `${ALL_BELOW_TRIGGER_MESSAGE[0]!.toUpperCase()}${ALL_BELOW_TRIGGER_MESSAGE.slice(1)}.`;
  return null;
}
