/**
 * Numbers derived from a plan alone: which records it touches, how much of the cached prefix it
 * keeps, and the cache-preservation score that ranks rewrites.
 */
import type { CompactionPlan, Edit, TranscriptItem } from '../../schemas/generated/types.js';

/** Prefix share is cubed: a rewrite that touches early records invalidates the provider's prompt cache. */
export const PREFIX_EXPONENT = 3;

export type EditOp = Edit['op'];

export function editOps(plan: CompactionPlan): EditOp[] {
  return plan.edits.map((e) => e.op);
}

/** Provider controls change nothing on disk; the other ops rewrite the file. */
export function isProviderOnly(plan: CompactionPlan): boolean {
  return plan.edits.length > 0 && plan.edits.every((e) => e.op === 'provider_compact');
}

export function rewritesFile(plan: CompactionPlan): boolean {
  return plan.edits.some((e) => e.op === 'elide' || e.op === 'inject_digest');
}

/** Plans the best-row ranking may pick: file rewrites only, no provider or API-layer controls. */
export function hasControlEdit(plan: CompactionPlan): boolean {
  return plan.edits.some((e) => e.op === 'provider_compact' || e.op === 'cache_edit');
}

export function elidedLineCount(plan: CompactionPlan): number {
  let n = 0;
  for (const e of plan.edits) if (e.op === 'elide') n += e.line_indexes.length;
  return n;
}

/** The earliest record the plan edits, or null when it edits none (a digest alone, a provider control). */
export function firstEditedLine(plan: CompactionPlan, items: readonly TranscriptItem[]): number | null {
  let first: number | null = null;
  const consider = (line: number) => {
    if (first === null || line < first) first = line;
  };
  let cacheIds: Set<string> | null = null;
  for (const e of plan.edits) {
    if (e.op === 'elide') for (const line of e.line_indexes) consider(line);
    else if (e.op === 'cache_edit') {
      cacheIds ??= new Set();
      for (const id of e.tool_use_ids) cacheIds.add(id);
    }
  }
  if (cacheIds !== null) {
    for (const item of items) if (item.tool_use_ids?.some((id) => cacheIds!.has(id))) consider(item.line_index);
  }
  return first;
}

/**
 * Estimated tokens before the first edited record: the part of the prompt a provider can still serve
 * from its cache. A provider control keeps the whole context by this measure; a plan that edits no
 * record (a digest alone) keeps every item.
 */
export function prefixTokens(plan: CompactionPlan, items: readonly TranscriptItem[]): number {
  if (plan.edits.some((e) => e.op === 'provider_compact')) return plan.context_tokens_before;
  const first = firstEditedLine(plan, items);
  let sum = 0;
  for (const item of items) if (first === null || item.line_index < first) sum += item.est_tokens;
  // As the host's projection does (validate/projection.ts): a prefix is part of its context.
  return Math.min(sum, plan.context_tokens_before);
}

/** saved x (prefix / context)^3, with context at least 1. */
export function cachePreservationScore(saved: number, prefix: number, before: number): number {
  return saved * Math.pow(prefix / Math.max(1, before), PREFIX_EXPONENT);
}
