/**
 * What a watch pass does with one discovered session before reading its transcript: most sessions
 * are settled, live, or plainly under the trigger, and none of those is worth a parse. Pure, so the
 * rules read in one place and are tested without a home.
 */
import type { DetectRow, WatchOutcome } from '../../schemas/generated/types.js';
import { DECISION_TTL_SECS, sameFingerprint, type Fingerprint, type WatchEntry } from './watch-state.js';

export type SkipReason = 'live' | 'settled' | 'published' | 'rate_limited' | 'gone';

export interface TriageInput {
  row: DetectRow;
  /** The file now; null when it is gone or no longer a regular file. */
  fingerprint: Fingerprint | null;
  entry: WatchEntry | undefined;
  /** Digest of the session's policy now (WatchEntry.policy). */
  policy: string;
  /** A fork or restore gobstopper published that no client has written to since. */
  unresumedPublication: boolean;
  effectiveTrigger: number;
  /** Adaptive tuning reads the transcript, so the provider's report alone cannot rule a session out. */
  adaptive: boolean;
  minIntervalSecs: number;
  /** When the events log says this session was last compacted, by any command (last-applied.ts); it holds a file written to since. */
  lastAppliedSecs?: number;
  nowSecs: number;
}

export type Triage =
  | { kind: 'skip'; reason: SkipReason }
  /** A decision made without the transcript (under the trigger; live and over it). */
  | { kind: 'decided'; outcome: Extract<WatchOutcome, 'below_trigger' | 'live_over_trigger'> }
  | { kind: 'evaluate' };

/** Decisions that stand until the file changes; anything else is tried again next pass. */
export const FINAL_OUTCOMES: ReadonlySet<string> = new Set<WatchOutcome>(['compacted', 'would_compact', 'no_plan', 'below_trigger', 'provider_control', 'failed']);

export function triage(input: TriageInput): Triage {
  const { row, fingerprint, entry, nowSecs } = input;
  if (fingerprint === null) return { kind: 'skip', reason: 'gone' };
  if (input.unresumedPublication) return { kind: 'skip', reason: 'published' };
  const over = row.context_tokens !== null && row.context_tokens >= input.effectiveTrigger;
  if (row.active) {
    // Said once per live spell: the entry keeps the note until the session is decided on idle.
    if (over && entry?.outcome !== 'live_over_trigger') return { kind: 'decided', outcome: 'live_over_trigger' };
    return { kind: 'skip', reason: 'live' };
  }
  // A stamp from the future (the clock was set back since, or the state was edited) tells nothing of
  // a decision's age: trusted, it would settle or hold the session for as long as the clock is behind.
  const age = entry === undefined ? -1 : nowSecs - entry.decided_at;
  const fresh = age >= 0 && age <= DECISION_TTL_SECS;
  // A new policy decides again what the old one left alone, but a file already compacted and
  // unchanged since has its fork: another would only be a second copy for someone to choose from.
  // That decision does not lapse after a day either: looked at again, the unchanged file could only
  // give the same fork (published again, had the person deleted it) or, under a newer policy, that copy.
  const lasting = entry?.outcome === 'compacted' && age >= 0;
  const standing = entry !== undefined && (entry.outcome === 'compacted' || entry.policy === input.policy);
  if ((fresh || lasting) && standing && FINAL_OUTCOMES.has(entry.outcome) && sameFingerprint(entry.fingerprint, fingerprint)) return { kind: 'skip', reason: 'settled' };
  // Each stamp is judged on its own: one from the future (a clock set back) must not hide the other.
  // The log's counts only for a file written to since that compaction: one left as it was compacted
  // is looked at, and finds the fork its compaction published, as the watch's own state would say.
  const logged = input.lastAppliedSecs !== undefined && fingerprint.mtime_ms / 1000 > input.lastAppliedSecs ? input.lastAppliedSecs : undefined;
  const since = [entry?.applied_at, logged].flatMap((at) => (at === undefined || nowSecs - at < 0 ? [] : [nowSecs - at]));
  if (since.some((secs) => secs < input.minIntervalSecs)) return { kind: 'skip', reason: 'rate_limited' };
  // Only a context the provider reported is the plan's own number; an estimate may be under it.
  if (!input.adaptive && row.context_basis === 'reported' && row.context_tokens !== null && !over) return { kind: 'decided', outcome: 'below_trigger' };
  return { kind: 'evaluate' };
}
