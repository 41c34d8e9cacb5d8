/**
 * The host's own projection of a plan: what the context will be after it, and how much of the prompt
 * cache prefix it keeps. A strategy's numbers are advice; these are the ones gates and reports use.
 */
import type { Edit, TranscriptItem } from '../../schemas/generated/types.js';
import { digestOverheadTokens } from '../../sdk/state-card.js';
import { cacheEditTargets, prefixTokensOf } from '../../sdk/strategy/prefix.js';
import { elisionSavings } from '../../sdk/tokens.js';
import { elidedItems, type AdmittedEdits } from './edit-rules.js';
import { count, planRejected } from './plan-errors.js';

export interface ProjectionInput {
  items: readonly TranscriptItem[];
  edits: readonly Edit[];
  context_tokens_before: number;
  floor_tokens: number;
  /**
   * What admitting the edits found. Read from the edits when not given, over items whose line
   * indexes must then be unique (admission refuses others) and counting only lines that are items'.
   */
  admitted?: AdmittedEdits;
}

/**
 * Elisions reclaim their payload minus the stub left behind; a state card costs its text plus framing.
 * A provider's own compaction lands wherever the provider decides, so the floor is the estimate (it
 * never grows the context). A cache
 * edit reclaims the tool results that carry the dropped ids, less the placeholder the API leaves.
 */
export function projectContextAfter(input: ProjectionInput): number {
  const { items, edits, context_tokens_before: before } = input;
  if (edits.some((e) => e.op === 'provider_compact')) return Math.min(input.floor_tokens, before);
  let reclaimed = 0;
  let added = 0;
  const { elided } = input.admitted ?? elidedItems(items, edits);
  for (let at = 0; at < items.length; at += 1) if (elided[at] === 1) reclaimed += elisionSavings(items[at]!);
  for (const edit of edits) {
    if (edit.op === 'inject_digest') added += digestOverheadTokens(edit.digest);
    if (edit.op === 'cache_edit') for (const item of cacheEditTargets(items, edit.tool_use_ids)) reclaimed += elisionSavings(item);
  }
  return Math.max(0, before - reclaimed) + added;
}

/** Estimated tokens before the first record the plan changes (sdk/strategy/prefix.ts). */
export function prefixTokens(items: readonly TranscriptItem[], edits: readonly Edit[], contextTokensBefore: number, admitted?: AdmittedEdits): number {
  return prefixTokensOf(items, edits, contextTokensBefore, (admitted ?? elidedItems(items, edits)).firstElidedLine);
}

/** A plan that leaves the context as large as it was, or larger, is refused. */
export function assertNoGrowth(before: number, after: number): void {
  if (after >= before) {
    const why = after === before ? `the context would stay at ${count(before)} tokens` : `the context would grow from ${count(before)} to ${count(after)} tokens`;
    throw planRejected('plan_grows_context', why, { context_tokens_before: before, context_tokens_after: after });
  }
}
