/**
 * The "nothing to do" answer, exactly in the shape integrators already parse. Projections are filled in
 * only when a proposal was made and turned down.
 */
import type { NoPlanReasonCode, PlanCommandNoPlan, ResolvedPolicy } from '../../schemas/generated/types.js';

export const NO_PLAN_REASONS: readonly NoPlanReasonCode[] = [
  'below_trigger',
  'strategy_returned_no_plan',
  'empty_external_edits',
  'minimum_savings_not_met',
  'external_nonreducing_plan',
];

export function noPlan(
  reason: NoPlanReasonCode,
  policy: Pick<ResolvedPolicy, 'effective_trigger_tokens' | 'floor_tokens' | 'min_savings_tokens' | 'adaptive_reasons'>,
  contextTokensBefore: number,
  projectedAfter: number | null = null,
): PlanCommandNoPlan {
  const outcome: PlanCommandNoPlan = {
    status: 'no_plan',
    reason_code: reason,
    context_tokens_before: contextTokensBefore,
    effective_trigger_tokens: policy.effective_trigger_tokens,
    target_context_tokens: policy.floor_tokens,
    min_savings_tokens: policy.min_savings_tokens,
    projected_context_tokens_after: projectedAfter,
    projected_savings_tokens: projectedAfter === null ? null : Math.max(0, contextTokensBefore - projectedAfter),
  };
  if (policy.adaptive_reasons?.length) adaptiveWords.set(outcome, [...policy.adaptive_reasons]);
  return outcome;
}

/** Why adaptive mode moved the trigger or floor this answer used; beside it, as the rationale is. */
const adaptiveWords = new WeakMap<PlanCommandNoPlan, string[]>();

export function adaptiveReasonsOf(outcome: PlanCommandNoPlan): readonly string[] {
  return adaptiveWords.get(outcome) ?? [];
}

/**
 * What a strategy said when it proposed nothing, kept beside the answer rather than in it: the JSON
 * shape of a no-plan is fixed, but a person reading why nothing happens wants the strategy's words.
 */
const strategyWords = new WeakMap<PlanCommandNoPlan, string>();

export function withStrategyRationale(outcome: PlanCommandNoPlan, rationale: string): PlanCommandNoPlan {
  if (rationale.trim()) strategyWords.set(outcome, rationale);
  return outcome;
}

export function strategyRationaleOf(outcome: PlanCommandNoPlan): string | null {
  return strategyWords.get(outcome) ?? null;
}
