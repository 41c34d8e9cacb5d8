/** `dedupe`: elides older exact duplicates (same label and payload sha256) of a stale output. */
import type { StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../../schemas/generated/types.js';
import { staleCandidates } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext } from '../../../sdk/strategy/state-card-digest.js';

/**
 * Older members of each (label, payload sha256) group, oldest first: those on another line than
 * the group's newest member, which stays.
 *
 * Walked newest first, so the first member met of a group is its newest. Groups are found by the
 * hash string first and the label second: both are strings the items already hold (V8 keeps a
 * string's hash with it), where a joined key would be a new string to build and hash per item.
 */
export function olderDuplicates(candidates: readonly TranscriptItem[]): TranscriptItem[] {
  /** Payload hash -> the label and line of its newest member, or the newest line of each label. */
  const newest = new Map<string, { label: string; line: number } | Map<string, number>>();
  const older = new Uint8Array(candidates.length);
  for (let i = candidates.length - 1; i >= 0; i -= 1) {
    const { payload_sha256: sha, label, line_index: line } = candidates[i]!;
    if (!sha) continue;
    const group = newest.get(sha);
    let kept: number | undefined;
    if (group === undefined) newest.set(sha, { label, line });
    else if (group instanceof Map) {
      kept = group.get(label);
      if (kept === undefined) group.set(label, line);
    } else if (group.label === label) kept = group.line;
    else newest.set(sha, new Map([[group.label, group.line], [label, line]]));
    if (kept !== undefined && kept !== line) older[i] = 1;
  }
  return candidates.filter((_, i) => older[i] === 1);
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
