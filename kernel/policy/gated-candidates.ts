/**
 * What the savings gate did to the candidates a selector (`auto`, `agentic`) asked for through
 * host/propose. A selector that proposes nothing after the gate refused every candidate did not find
 * nothing to do: each candidate had a plan, too small to pay for a compaction cycle. The host then
 * answers as it would for the closest candidate asked directly: minimum_savings_not_met, with its
 * projection. The tally rides beside the selector's result, not in it: the protocol's shape is fixed.
 */
import type { PlanCommandNoPlan, PlanCommandPlan, StrategyProposeResult } from '../../schemas/generated/types.js';

export class CandidateTally {
  private admitted = false;
  /** The lowest projected context among the candidates the gate refused. */
  private closest: number | null = null;

  note(outcome: PlanCommandPlan | PlanCommandNoPlan): void {
    if (outcome.status === 'plan') this.admitted = true;
    else if (outcome.reason_code === 'minimum_savings_not_met' && outcome.projected_context_tokens_after !== null) {
      this.closest = Math.min(this.closest ?? Infinity, outcome.projected_context_tokens_after);
    }
  }

  /** Marks `result` with the closest refused projection, when no candidate was admitted and one was refused. */
  attach<R extends StrategyProposeResult>(result: R): R {
    if (!this.admitted && this.closest !== null) gated.set(result, this.closest);
    return result;
  }
}

const gated = new WeakMap<StrategyProposeResult, number>();

/** The projection of the closest candidate the gate refused, when every candidate was refused by it. */
export function gatedProjectionOf(result: StrategyProposeResult): number | null {
  return gated.get(result) ?? null;
}
