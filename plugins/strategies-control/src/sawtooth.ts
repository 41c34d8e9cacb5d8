/**
 * `sawtooth`: fires the provider's own compaction early instead of rewriting anything. The control
 * comes from the provider plugin (`native_control`), so a new provider brings its own.
 */
import type { StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';

/** The host's bound for a provider control description. */
export const MAX_CONTROL_BYTES = 256;

export function usableControl(control: string | null | undefined): control is string {
  return (
    typeof control === 'string' && control !== '' && Buffer.byteLength(control, 'utf8') <= MAX_CONTROL_BYTES && !/[\u0000-\u001f\u007f]/.test(control)
  );
}

export function proposeSawtooth(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const control = params.provider?.native_control;
  if (control == null || control === '') return noPlan(`provider ${providerOf(params)} offers no native compaction control`);
  if (!usableControl(control)) return noPlan(`provider ${providerOf(params)} declares a native control the host would refuse`);
  return {
    edits: [{ op: 'provider_compact', control }],
    rationale: exceedsTrigger(params),
    // The provider chooses its own floor; the configured one is the best estimate.
    context_tokens_after: params.policy.floor_tokens,
  };
}
