/** `elide`: observation masking, oldest stale tool outputs first, until the projection reaches the floor. */
import type { StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { elisionSavings } from '../../../sdk/tokens.js';
import { staleCandidates, noCandidatesReason } from '../../../sdk/strategy/candidates.js';
import { belowTrigger, belowTriggerResult, elideEdit, exceedsTrigger, noPlan } from '../../../sdk/strategy/plan.js';

export function proposeElide(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const candidates = staleCandidates(params.items, keep);
  if (candidates.length === 0) return noPlan(noCandidatesReason(params.items, keep));

  let projected = params.context_tokens;
  const chosen: number[] = [];
  for (const item of candidates) {
    if (projected <= floor) break;
    chosen.push(item.line_index);
    projected = Math.max(0, projected - elisionSavings(item));
  }
  if (chosen.length === 0) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  return {
    edits: [elideEdit(chosen)],
    rationale: `${exceedsTrigger(params)}; eliding ${chosen.length} of ${candidates.length} stale tool outputs`,
    context_tokens_after: projected,
  };
}
