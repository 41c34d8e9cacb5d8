/**
 * From a layered policy to the ResolvedPolicy a strategy runs with: bounds, adaptive tuning when
 * enabled (then bounds again), and the quota-scaled effective trigger.
 */
import type { ResolvedPolicy } from '../../schemas/generated/types.js';
import { adapt, type AdaptiveSample, type PinnedValues } from './adaptive.js';
import { assertPolicyBounds } from './bounds.js';
import type { PolicyValues } from './defaults.js';
import { heldEffectiveTrigger } from './quota.js';

export function toResolvedPolicy(values: PolicyValues, adaptiveReasons: ResolvedPolicy['adaptive_reasons'] = []): ResolvedPolicy {
  return {
    strategy: values.strategy,
    trigger_tokens: values.trigger_tokens,
    floor_tokens: values.floor_tokens,
    min_savings_tokens: values.min_savings_tokens,
    keep_recent_tool_outputs: values.keep_recent_tool_outputs,
    keep_score_threshold: values.keep_score_threshold,
    min_interval_secs: values.min_interval_secs,
    apply_hold_secs: values.apply_hold_secs,
    block_tokens: values.block_tokens,
    keep_recent_turns: values.keep_recent_turns,
    result_max_bytes: values.result_max_bytes,
    quota_pressure: values.quota_pressure,
    adaptive: values.adaptive,
    effective_trigger_tokens: heldEffectiveTrigger(values),
    adaptive_reasons: adaptiveReasons,
    scorer: values.scorer,
    strategy_params: values.strategy_params,
  };
}

/**
 * The trigger and floor a command line gave (--trigger, --floor): "this run, these numbers", so
 * adaptive tuning leaves them as they are. `sources` is the resolution's record of where each value
 * came from; without one nothing is pinned.
 */
export function pinnedByFlags(sources: Readonly<Record<string, { layer: string } | undefined>> | undefined): PinnedValues {
  return { trigger_tokens: sources?.trigger_tokens?.layer === 'flag', floor_tokens: sources?.floor_tokens?.layer === 'flag' };
}

/**
 * The policy for one decision. `sample` is null when nothing is known about the session (policy-check,
 * config); adaptive tuning then has nothing to work from and the configured values stand. `pinned`
 * values (see pinnedByFlags) are not tuned.
 */
export function effectivePolicy(values: PolicyValues, sample: AdaptiveSample | null, pinned: PinnedValues = {}): ResolvedPolicy {
  assertPolicyBounds(values);
  if (!values.adaptive || sample === null) return toResolvedPolicy(values);
  const adapted = adapt(values, sample, pinned);
  const tuned: PolicyValues = { ...values, trigger_tokens: adapted.trigger_tokens, floor_tokens: adapted.floor_tokens };
  assertPolicyBounds(tuned, { stage: 'after adaptive tuning' });
  return toResolvedPolicy(tuned, adapted.reasons);
}
