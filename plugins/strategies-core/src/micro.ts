/**
 * `micro`: keeps the newest outputs of every tool (by tool name) and elides the older ones, never
 * touching the protected tail.
 */
import type { StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../../schemas/generated/types.js';
import { elidableItems, protectedLines, reclaims, toolName } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf, strategyParams } from '../../../sdk/strategy/plan.js';
import { cardContext } from '../../../sdk/strategy/state-card-digest.js';

export const MICRO_KEEP_PER_LABEL = 2;

export const MICRO_PARAMS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    keep_per_label: { description: 'Newest outputs kept per tool name.', type: 'integer', minimum: 0, maximum: 100000, default: MICRO_KEEP_PER_LABEL },
  },
};

/** Elidable items beyond the newest `keepPerLabel` of their tool, oldest first, outside the protected tail. */
export function microCandidates(items: readonly TranscriptItem[], keepRecent: number, keepPerLabel: number): TranscriptItem[] {
  const elidable = elidableItems(items);
  const guarded = protectedLines(items, keepRecent);
  const seenPerTool = new Map<string, number>();
  const out: TranscriptItem[] = [];
  for (let i = elidable.length - 1; i >= 0; i--) {
    const item = elidable[i]!;
    const name = toolName(item.label);
    const seen = seenPerTool.get(name) ?? 0;
    seenPerTool.set(name, seen + 1);
    if (seen >= keepPerLabel && !guarded.has(item.line_index) && reclaims(item)) out.push(item);
  }
  return out.reverse();
}

export function proposeMicro(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const configured = strategyParams(params).keep_per_label;
  const keepPerLabel = typeof configured === 'number' && Number.isInteger(configured) && configured >= 0 ? configured : MICRO_KEEP_PER_LABEL;
  const candidates = microCandidates(params.items, keep, keepPerLabel);
  if (candidates.length === 0) return noPlan(`no tool outputs older than the newest ${keepPerLabel} per tool outside the ${keep} protected recent ones`);
  const selection = chooseWithDigest(params.context_tokens, floor, candidates, cardContext(params.items, providerOf(params)));
  if (!selection) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  return digestPlanResult(params, selection, `${exceedsTrigger(params)}; micro-stubbing ${selection.chosen.length} stale tool outputs`);
}
