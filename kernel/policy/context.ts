/** How much context a session holds, as the host counts it for every decision. */
import type { Transcript, TranscriptItem, UsageSample } from '../../schemas/generated/types.js';
import { CHARS_PER_TOKEN, isElidable } from '../../sdk/tokens.js';
import { GobstopperError } from '../errors.js';

/**
 * Provider-reported occupancy, only when the provider stands behind it: state `reported`, no reason
 * attached, and not a partial component set.
 */
export function reportedContext(usage: UsageSample): number | null {
  if (usage.context_state !== 'reported') return null;
  if (usage.context_reason != null) return null;
  if (usage.context_components != null) return null;
  return usage.context_tokens;
}

export function estimatedContext(items: readonly TranscriptItem[]): number {
  let total = 0;
  for (const item of items) total += item.est_tokens;
  return total;
}

/** Reported usage first; otherwise the sum of the per-record estimates. */
export function contextTokens(transcript: Pick<Transcript, 'items' | 'usage'>): number {
  return reportedContext(transcript.usage) ?? estimatedContext(transcript.items);
}

/** Tokens held by elidable payloads, before any stub is paid for (feeds adaptive tightening). */
export function elidableTokens(items: readonly TranscriptItem[]): number {
  let total = 0;
  // No more than the record costs: a payload the client cuts is sent, and elidable, only in part.
  for (const item of items) if (isElidable(item)) total += Math.min(item.est_tokens, Math.ceil((item.elidable_bytes ?? 0) / CHARS_PER_TOKEN));
  return total;
}

/**
 * A session whose provider could not read its context (a duplicate call id, a line that is not a
 * record: the provider then marks every item inert) has no context to compare with a trigger.
 * Planning it would answer "context ~0 tokens, nothing to do", which is wrong: it is refused,
 * naming the first error the provider found.
 */
export function requireReadableContext(transcript: Pick<Transcript, 'items' | 'usage' | 'findings' | 'session'>): void {
  const { usage, items } = transcript;
  if (usage.context_state !== 'unknown' || items.length === 0 || items.some((i) => i.est_tokens > 0)) return;
  const first = (transcript.findings ?? []).find((f) => f.severity === 'error');
  const why = first ? `: ${first.message}` : '';
  throw new GobstopperError('context_unreadable', `${transcript.session.path}: the provider cannot read this session's context (${usage.context_reason ?? 'unknown'})${why}; gobstopper verify ${transcript.session.path} lists every finding`, {
    details: { context_reason: usage.context_reason ?? null, finding: first?.code ?? null },
  });
}

/**
 * Refuses a transcript the client cannot resume as a session (a sub-agent's file, a
 * composite of mixed records): a fork of it could never be resumed, so there is nothing to plan or
 * measure. detect and bench leave such files out for the same reason.
 */
export function requireResumableSession(session: Pick<Transcript['session'], 'kind' | 'path'>): void {
  const kind = session.kind ?? 'session';
  const what = unresumableKind(kind);
  if (what === null) return;
  throw new GobstopperError('not_a_session', `${session.path} is ${what}, not a session the client can resume; only sessions are planned, compacted, forked, measured and rehearsed`, {
    details: { session_kind: kind },
  });
}

/** What a transcript of this kind is, when its client cannot resume it as a session; null for a session. */
export function unresumableKind(kind: Transcript['session']['kind']): string | null {
  if ((kind ?? 'session') === 'session') return null;
  return kind === 'subagent' ? "a sub-agent's transcript" : 'a composite transcript of mixed records';
}
