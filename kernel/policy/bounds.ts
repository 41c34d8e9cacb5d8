/**
 * Policy bounds, checked on the layered policy before and after adaptive tuning. Every violation is
 * listed in one message so a user fixes the file once.
 */
import { GobstopperError } from '../errors.js';
import type { PolicyValues } from './defaults.js';
import { effectiveTrigger, isQuotaPressure } from './quota.js';

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

export function policyBoundsViolations(policy: Bounded): BoundsViolation[] {
  const problems: BoundsViolation[] = [];
  const whole = (key: BoundedKey, min: number, max: number) => {
    const value = policy[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      problems.push({ keys: [key], message: `${key} must be a whole number from ${min} to ${max} (got ${String(value)})` });
      return false;
    }
    return true;
  };
  const triggerOk = whole('trigger_tokens', 1, MAX_POLICY_TOKENS);
  const floorOk = whole('floor_tokens', 0, MAX_POLICY_TOKENS);
  if (triggerOk && floorOk && policy.floor_tokens >= policy.trigger_tokens) {
    problems.push({
      keys: ['floor_tokens', 'trigger_tokens'],
      message: `floor_tokens (${policy.floor_tokens}) must be below trigger_tokens (${policy.trigger_tokens})`,
    });
  }
  whole('keep_recent_tool_outputs', 0, MAX_ITEM_COUNT);
  whole('keep_recent_turns', 0, MAX_ITEM_COUNT);
  whole('min_interval_secs', 0, MAX_INTERVAL_SECS);
  whole('apply_hold_secs', 0, MAX_INTERVAL_SECS);
  whole('min_savings_tokens', 0, MAX_POLICY_TOKENS);
  whole('block_tokens', 0, MAX_POLICY_TOKENS);
  whole('result_max_bytes', 0, MAX_POLICY_TOKENS);
  const threshold = policy.keep_score_threshold;
  if (threshold !== null && !(typeof threshold === 'number' && Number.isFinite(threshold) && threshold >= 0 && threshold <= 1)) {
    problems.push({ keys: ['keep_score_threshold'], message: `${THRESHOLD_MESSAGE} (got ${String(threshold)})` });
  }
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
  const text = problems.map((p) => {
    const origins = p.keys.map((k) => (options.origin ? options.origin(k) : null)).filter((o): o is string => o !== null);
    return (origins.length > 0 ? `${p.message} [${origins.join('; ')}]` : p.message) + flagHint(p, policy, fromFlag);
  });
  const stage = options.stage ? ` (${options.stage})` : '';
  // A bound a flag broke is the command line's mistake: a usage error.
  const byFlag = problems.some((p) => p.keys.some(fromFlag));
  throw new GobstopperError('invalid_policy', `invalid policy bounds: ${text.join('; ')}${stage}`, {
    exit: byFlag ? 2 : 1,
    details: { problems: problems.map((p) => p.message) },
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
