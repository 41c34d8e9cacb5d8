/** `dedupe`: elides older exact duplicates (same label and payload sha256) of a stale output. */
import type { StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../../schemas/generated/types.js';
import { staleCandidates } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext } from '../../../sdk/strategy/state-card-digest.js';

/** Older members of each (label, payload sha256) group, oldest first; the newest copy stays. */
export function olderDuplicates(candidates: readonly TranscriptItem[]): TranscriptItem[] {
  const newest = new Map<string, number>();
  // JSON keys cannot collide the way a joined string could (a label may contain any separator).
  const key = (item: TranscriptItem) => JSON.stringify([item.label, item.payload_sha256]);
  for (const item of candidates) if (item.payload_sha256) newest.set(key(item), item.line_index);
  return candidates.filter((item) => item.payload_sha256 && newest.get(key(item)) !== item.line_index);
}

export function proposeDedupe(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const duplicates = olderDuplicates(staleCandidates(params.items, keep));
  if (duplicates.length === 0) return noPlan(`no older duplicate tool outputs outside the ${keep} protected recent ones`);
  const selection = chooseWithDigest(params.context_tokens, floor, duplicates, cardContext(params.items, providerOf(params)));
  if (!selection) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  return digestPlanResult(params, selection, `${exceedsTrigger(params)}; deduping ${selection.chosen.length} stale tool outputs`);
}
