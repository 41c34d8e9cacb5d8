/** How much of the prompt cache a plan keeps, and the score `auto` ranks plans by. */
import type { CompactionPlan, TranscriptItem } from '../../../schemas/generated/types.js';

export { cachePreservationScore } from '../../../sdk/strategy/cache-score.js';

/** Estimated tokens before the first elided record (every record without one), at most the context. */
export function prefixTokensOf(plan: CompactionPlan, items: readonly TranscriptItem[]): number {
  let first = Number.POSITIVE_INFINITY;
  for (const edit of plan.edits) {
    if (edit.op === 'elide') for (const line of edit.line_indexes) first = Math.min(first, line);
  }
  let total = 0;
  for (const item of items) if (item.line_index < first) total += item.est_tokens;
  return Math.min(total, plan.context_tokens_before);
}
