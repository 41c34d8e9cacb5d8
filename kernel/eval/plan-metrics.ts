/**
 * Numbers derived from a plan alone: which records it touches, how much of the cached prefix it
 * keeps, and the cache-preservation score that ranks rewrites.
 */
import type { CompactionPlan, Edit, TranscriptItem } from '../../schemas/generated/types.js';
import { prefixTokens as hostPrefixTokens } from '../validate/projection.js';


export type EditOp = Edit['op'];

export function editOps(plan: CompactionPlan): EditOp[] {
  return plan.edits.map((e) => e.op);
}

/** Provider controls and cache edits change nothing on disk; elisions and state cards rewrite the file. */
export function rewritesFile(plan: CompactionPlan): boolean {
  return plan.edits.some((e) => e.op === 'elide' || e.op === 'inject_digest');
}

/** A provider or API-layer control: run by the client, never rendered, never the best row. */
export function isControlOp(op: EditOp): boolean {
  return op === 'provider_compact' || op === 'cache_edit';
}

/** The records a compaction event says it covered: each elided line, and the records each card sums up. */
export function itemsCovered(plan: CompactionPlan): number {
  let n = 0;
  for (const e of plan.edits) {
    if (e.op === 'elide') n += e.line_indexes.length;
    else if (e.op === 'inject_digest') n += e.digest.covers_items;
  }
  return n;
}

export function elidedLineCount(plan: CompactionPlan): number {
  let n = 0;
  for (const e of plan.edits) if (e.op === 'elide') n += e.line_indexes.length;
  return n;
}

/**
 * Estimated tokens before the first edited record: the part of the prompt a provider can still serve
 * from its cache. The host's own measure (validate/projection.ts), so an eval row and `plan` agree:
 * a provider control keeps the whole context, a digest alone keeps every item, and a cache edit
 * starts at the first tool result it drops.
 */
export function prefixTokens(plan: CompactionPlan, items: readonly TranscriptItem[]): number {
  return hostPrefixTokens(items, plan.edits, plan.context_tokens_before);
}

export { cachePreservationScore, scoreText } from '../../sdk/strategy/cache-score.js';
