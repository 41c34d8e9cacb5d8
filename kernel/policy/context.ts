/** How much context a session holds, as the host counts it for every decision. */
import type { Transcript, TranscriptItem, UsageSample } from '../../schemas/generated/types.js';
import { isElidable } from '../../sdk/tokens.js';

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
  for (const item of items) if (isElidable(item)) total += Math.ceil((item.elidable_bytes ?? 0) / 4);
  return total;
}
