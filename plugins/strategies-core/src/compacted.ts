/** `compacted`: the elide selection, oldest first, paid for with a state card describing what went. */
import type { StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { staleCandidates, noCandidatesReason } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext } from '../../../sdk/strategy/state-card-digest.js';

export function proposeCompacted(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const candidates = staleCandidates(params.items, keep);
  if (candidates.length === 0) return noPlan(noCandidatesReason(params.items, keep));
  const selection = chooseWithDigest(params.context_tokens, floor, candidates, cardContext(params.items, providerOf(params)));
  if (!selection) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  return digestPlanResult(params, selection, `${exceedsTrigger(params)}; appending a state card for ${selection.chosen.length} elided item${selection.chosen.length === 1 ? '' : 's'}`);
}
