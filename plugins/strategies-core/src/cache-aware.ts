/**
 * `cache_aware`: elides the newest stale outputs just before the protected tail, so the oldest part
 * of the transcript stays byte-identical and the provider's prompt cache keeps matching it.
 */
import type { StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { itemsBefore, staleCandidates, noCandidatesReason } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext } from '../../../sdk/strategy/state-card-digest.js';

export function proposeCacheAware(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const candidates = staleCandidates(params.items, keep).reverse();
  if (candidates.length === 0) return noPlan(noCandidatesReason(params.items, keep));
  const selection = chooseWithDigest(params.context_tokens, floor, candidates, cardContext(params.items, providerOf(params)));
  if (!selection) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  const prefixItems = itemsBefore(params.items, selection.chosen[0]!.line_index);
  return digestPlanResult(
    params,
    selection,
    `${exceedsTrigger(params)}; eliding ${selection.chosen.length} latest stale outputs before tail to keep ${prefixItems} prefix records in cache`,
  );
}
