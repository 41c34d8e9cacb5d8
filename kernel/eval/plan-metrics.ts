/**
 * Numbers derived from a plan alone: which records it touches, how much of the cached prefix it
 * keeps, and the cache-preservation score that ranks rewrites.
 */
import type { CompactionPlan, Edit, TranscriptItem } from '../../schemas/generated/types.js';
import { prefixTokens as hostPrefixTokens } from '../validate/projection.js';

/** Prefix share is cubed: a rewrite that touches early records invalidates the provider's prompt cache. */
export const PREFIX_EXPONENT = 3;

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

/** saved x (prefix / context)^3, with context at least 1. */
export function cachePreservationScore(saved: number, prefix: number, before: number): number {
  return saved * Math.pow(prefix / Math.max(1, before), PREFIX_EXPONENT);
}
