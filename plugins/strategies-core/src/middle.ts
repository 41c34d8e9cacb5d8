/**
 * `middle`: models attend least to the middle of a long context ("lost in the middle"), so the
 * oldest and newest `keep_recent_tool_outputs` outputs stay and the ones between them go first.
 */
import type { StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { elidableItems, reclaims } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext } from '../../../sdk/strategy/state-card-digest.js';

export function proposeMiddle(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keepEach } = params.policy;
  const elidable = elidableItems(params.items);
  if (elidable.length === 0) return noPlan('no elidable tool outputs');
  const head = Math.min(keepEach, elidable.length);
  const tail = Math.min(keepEach, elidable.length - head);
  const candidates = elidable.slice(head, elidable.length - tail).filter(reclaims);
  if (candidates.length === 0) return noPlan(`no tool outputs between the ${head} oldest and ${tail} newest kept ones`);
  const selection = chooseWithDigest(params.context_tokens, floor, candidates, cardContext(params.items, providerOf(params)));
  if (!selection) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  return digestPlanResult(
    params,
    selection,
    `${exceedsTrigger(params)}; keeping ${head} head + ${tail} tail, eliding ${selection.chosen.length} middle outputs`,
  );
}
