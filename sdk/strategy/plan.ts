/** Building blocks of a strategy's answer: the stub, the edits, trigger checks and no-plan replies. */
import type { DigestBlock, Edit, StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../schemas/generated/types.js';

/** The stub every masking strategy leaves behind; providers substitute `{bytes}`. */
export const DEFAULT_STUB = '[output elided by gobstopper: {bytes} bytes]';

export function elideEdit(lines: readonly number[], stubTemplate = DEFAULT_STUB): Edit {
  return { op: 'elide', line_indexes: [...lines].sort((a, b) => a - b), stub_template: stubTemplate };
}

export function digestEdit(digest: DigestBlock): Edit {
  return { op: 'inject_digest', digest };
}

export const linesOf = (items: readonly TranscriptItem[]) => items.map((i) => i.line_index);

/** Every strategy answers "no plan" below the effective trigger; firing happens at >=. */
export function belowTrigger(params: StrategyProposeParams): boolean {
  return params.context_tokens < params.policy.effective_trigger_tokens;
}

export function noPlan(rationale: string): StrategyProposeResult {
  return { edits: [], rationale };
}

export function belowTriggerResult(params: StrategyProposeParams): StrategyProposeResult {
  return noPlan(`context ${params.context_tokens} tokens is below the effective trigger ${params.policy.effective_trigger_tokens}`);
}

/**
 * The common rationale prefix. It names the configured (possibly adapted) trigger, as the original
 * tool's rationales do; when quota pressure moved the trigger it names the one that fired too, so
 * the sentence stays true of the numbers.
 */
export function exceedsTrigger(params: StrategyProposeParams): string {
  const { trigger_tokens: trigger, effective_trigger_tokens: effective, quota_pressure: pressure } = params.policy;
  if (effective === trigger) return `context ${params.context_tokens} tokens exceeds trigger ${trigger}`;
  return `context ${params.context_tokens} tokens exceeds the effective trigger ${effective} (trigger ${trigger} under ${pressure} quota pressure)`;
}

export function providerOf(params: StrategyProposeParams): string {
  return params.session.provider;
}

/** strategy_params as a plain record (the host has checked it against the declared params schema). */
export function strategyParams(params: StrategyProposeParams): Record<string, unknown> {
  const raw = params.policy.strategy_params as unknown;
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

/**
 * The `format` that marks a string in a params_schema as another strategy's id: the host refuses a
 * configured one that no installed or built-in bundle serves when it resolves the policy.
 */
export const STRATEGY_ID_FORMAT = 'strategy-id';

/** A params schema for strategies that take no parameters: any key is a configuration mistake. */
export const NO_PARAMS_SCHEMA = { type: 'object', additionalProperties: false, properties: {} } as const;
