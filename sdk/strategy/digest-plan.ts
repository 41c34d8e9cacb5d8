/** Turns a card-carrying selection into a strategy answer, refusing plans the card would make larger. */
import type { StrategyProposeParams, StrategyProposeResult } from '../../schemas/generated/types.js';
import type { DigestSelection } from './choose-with-digest.js';
import { digestEdit, elideEdit, linesOf, noPlan } from './plan.js';

export function digestPlanResult(params: StrategyProposeParams, selection: DigestSelection, rationale: string): StrategyProposeResult {
  // The host rejects growth as an invalid plan; saying "no plan" here is the honest answer.
  if (selection.after >= params.context_tokens) {
    return noPlan(
      `eliding ${selection.chosen.length} stale outputs would reclaim less than the state card costs (projected ${selection.after} of ${params.context_tokens} tokens)`,
    );
  }
  return {
    edits: [elideEdit(linesOf(selection.chosen)), digestEdit(selection.digest)],
    rationale,
    context_tokens_after: selection.after,
  };
}
