/**
 * Policy bounds, checked on the layered policy before and after adaptive tuning. Every violation is
 * listed in one message so a user fixes the file once.
 */
import { GobstopperError } from '../errors.js';
import type { PolicyValues } from './defaults.js';

export const MAX_POLICY_TOKENS = 10_000_000;
export const MAX_INTERVAL_SECS = 86_400;
export const MAX_ITEM_COUNT = 100_000;
/** The largest context size a command takes as a number, as the original's policy_check tool bounds it. */
export const MAX_CONTEXT_TOKENS = 100_000_000;

export const THRESHOLD_MESSAGE = 'keep_score_threshold must be a finite value between 0 and 1';

type BoundedKey =
  | 'trigger_tokens'
  | 'floor_tokens'
  | 'min_savings_tokens'
  | 'keep_recent_tool_outputs'
  | 'keep_score_threshold'
  | 'min_interval_secs'
  | 'apply_hold_secs'
  | 'block_tokens'
  | 'keep_recent_turns'
  | 'result_max_bytes'
  | 'quota_pressure';

type Bounded = Pick<PolicyValues, Exclude<BoundedKey, 'quota_pressure'>> & Partial<Pick<PolicyValues, 'quota_pressure'>>;

export interface BoundsViolation {
  keys: BoundedKey[];
  message: string;
}

/** The range of each whole-number key; each holds whatever the other keys are. */
export const WHOLE_NUMBER_RANGES = {
  trigger_tokens: { min: 1, max: MAX_POLICY_TOKENS },
  floor_tokens: { min: 0, max: MAX_POLICY_TOKENS },
  keep_recent_tool_outputs: { min: 0, max: MAX_ITEM_COUNT },
  keep_recent_turns: { min: 0, max: MAX_ITEM_COUNT },
  min_interval_secs: { min: 0, max: MAX_INTERVAL_SECS },
  apply_hold_secs: { min: 0, max: MAX_INTERVAL_SECS },
  min_savings_tokens: { min: 0, max: MAX_POLICY_TOKENS },
  block_tokens: { min: 0, max: MAX_POLICY_TOKENS },
  result_max_bytes: { min: 0, max: MAX_POLICY_TOKENS },
} as const satisfies Partial<Record<BoundedKey, { min: number; max: number }>>;

export type WholeNumberKey = keyof typeof WHOLE_NUMBER_RANGES;

/** What is wrong with one key's value taken alone ("must be a whole number from 1 to ..."), or null. */
export function singleKeyViolation(key: WholeNumberKey | 'keep_score_threshold', value: unknown): string | null {
  if (key === 'keep_score_threshold') {
    const ok = value === null || (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1);
    return ok ? null : THRESHOLD_MESSAGE;
  }
  const { min, max } = WHOLE_NUMBER_RANGES[key];
  const ok = typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
  return ok ? null : `${key} must be a whole number from ${min} to ${max}`;
}

export function policyBoundsViolations(policy: Bounded): BoundsViolation[] {
  const problems: BoundsViolation[] = [];
  const check = (key: WholeNumberKey | 'keep_score_threshold') => {
    const problem = singleKeyViolation(key, policy[key]);
    if (problem !== null) problems.push({ keys: [key], message: `${problem} (got ${String(policy[key])})` });
    return problem === null;
  };
  const triggerOk = check('trigger_tokens');
  const floorOk = check('floor_tokens');
  if (triggerOk && floorOk && policy.floor_tokens >= policy.trigger_tokens) {
    problems.push({
      keys: ['floor_tokens', 'trigger_tokens'],
      message: `floor_tokens (${policy.floor_tokens}) must be below trigger_tokens (${policy.trigger_tokens})`,
    });
  }
  for (const key of ['keep_recent_tool_outputs', 'keep_recent_turns', 'min_interval_secs', 'apply_hold_secs', 'min_savings_tokens', 'block_tokens', 'result_max_bytes'] as const) check(key);
  check('keep_score_threshold');
  return problems;
}

/**
 * Throws `invalid_policy` ("invalid policy bounds: ...") when any bound is broken. `origin` names
 * where a key's value came from, so the message points at the table to fix.
 */
export function assertPolicyBounds(
  policy: Bounded,
  options: { stage?: string; origin?: (key: BoundedKey) => string | null; fromFlag?: (key: BoundedKey) => boolean } = {},
): void {
  const problems = policyBoundsViolations(policy);
  if (problems.length === 0) return;
  const fromFlag = options.fromFlag ?? (() => false);
  const originsOf = (p: BoundsViolation) => p.keys.map((k) => (options.origin ? options.origin(k) : null)).filter((o): o is string => o !== null);
  const text = problems.map((p) => {
    const origins = originsOf(p);
    return (origins.length > 0 ? `${p.message} [${origins.join('; ')}]` : p.message) + flagHint(p, policy, fromFlag);
  });
  const stage = options.stage ? ` (${options.stage})` : '';
  // A bound a flag broke is the command line's mistake: a usage error.
  const byFlag = problems.some((p) => p.keys.some(fromFlag));
  throw new GobstopperError('invalid_policy', `invalid policy bounds: ${text.join('; ')}${stage}`, {
    exit: byFlag ? 2 : 1,
    // For a script: each broken bound with the keys it involves and where each value came from.
    details: { problems: problems.map((p) => p.message), violations: problems.map((p) => ({ keys: p.keys, message: p.message, origins: originsOf(p) })) },
  });
}

/** `--trigger` alone below the configured floor (or `--floor` alone above the trigger) says which flag to add. */
function flagHint(p: BoundsViolation, policy: Bounded, fromFlag: (key: BoundedKey) => boolean): string {
  if (p.keys.length !== 2) return '';
  const trigger = fromFlag('trigger_tokens');
  const floor = fromFlag('floor_tokens');
  if (trigger && !floor) return `; add --floor below ${policy.trigger_tokens}`;
  if (floor && !trigger) return `; add --trigger above ${policy.floor_tokens}`;
  return '';
}
