/**
 * How much of the prompt cache a plan keeps: the estimated tokens before the first record it
 * changes. One rule for the host (validate/projection.ts, whose numbers gates and reports use) and
 * for a strategy that ranks plans itself (`auto` when the host sent no prefix), so the two agree.
 */
import type { Edit, TranscriptItem } from '../../schemas/generated/types.js';

/** Tool results named by a cache edit, each once however many of its ids are dropped. */
export function cacheEditTargets(items: readonly TranscriptItem[], ids: readonly string[]): TranscriptItem[] {
  const wanted = new Set(ids);
  return items.filter((item) => item.kind === 'tool_result' && (item.tool_use_ids ?? []).some((id) => wanted.has(id)));
}

function firstElided(edits: readonly Edit[]): number {
  let first = Infinity;
  for (const edit of edits) if (edit.op === 'elide') for (const line of edit.line_indexes) if (line < first) first = line;
  return first;
}

/**
 * Estimated tokens before the first record the edits change. A provider's own compaction keeps the
 * whole context (the client decides what it drops), a state card alone keeps every item, and a cache
 * edit starts at the first tool result it drops. Never more than the context: item estimates can
 * outweigh a context the client reported, and a prefix larger than its context would inflate every
 * score built on it. `firstElidedLine` is the first elided line when the caller already knows it.
 */
export function prefixTokensOf(items: readonly TranscriptItem[], edits: readonly Edit[], contextTokensBefore: number, firstElidedLine = firstElided(edits)): number {
  let firstChanged = firstElidedLine;
  if (firstChanged === Infinity) {
    if (edits.some((e) => e.op === 'provider_compact')) return contextTokensBefore;
    const cacheEdit = edits.find((e) => e.op === 'cache_edit');
    if (cacheEdit) for (const item of cacheEditTargets(items, cacheEdit.tool_use_ids)) firstChanged = Math.min(firstChanged, item.line_index);
  }
  let total = 0;
  for (const item of items) if (item.line_index < firstChanged) total += item.est_tokens;
  return Math.min(total, contextTokensBefore);
}
