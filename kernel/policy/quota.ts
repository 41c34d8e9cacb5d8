/** Quota pressure moves the trigger: later when quota is plentiful, earlier when it is scarce. */
import type { QuotaPressure, ResolvedPolicy } from '../../schemas/generated/types.js';
import { formatCount } from '../text/human.js';

export const QUOTA_PRESSURE_FACTOR: Record<QuotaPressure, number> = { low: 1.15, normal: 1.0, high: 0.7 };

/**
 * The trigger scaled by `pressure`, before the hold above the floor (heldEffectiveTrigger). Not
 * capped at the configured trigger's bound: low pressure on a 10,000,000 trigger fires at
 * 11,500,000, as the scaling says.
 */
export function effectiveTrigger(triggerTokens: number, pressure: QuotaPressure): number {
  return Math.max(1, Math.round(triggerTokens * QUOTA_PRESSURE_FACTOR[pressure]));
}

type TriggerPolicy = Pick<ResolvedPolicy, 'trigger_tokens' | 'floor_tokens' | 'min_savings_tokens' | 'quota_pressure'>;

/**
 * How far quota pressure may bring the trigger down: to min_savings_tokens above the floor (at least
 * one token), or the configured trigger when that is lower. From under it a cycle toward the floor
 * cannot save the minimum a plan needs: the floor-seeking strategies find nothing to do (while
 * policy-check, which reads no transcript, would call for a compaction), and the floorless ones
 * (structured, cliff, and auto choosing them) compact a session already near the size the floor asks for.
 */
export function pressureHold(policy: Omit<TriggerPolicy, 'quota_pressure'>): number {
  return Math.min(policy.trigger_tokens, policy.floor_tokens + Math.max(1, policy.min_savings_tokens));
}

/** The trigger that fires: scaled by quota pressure, held at pressureHold when scaling would pass it. */
export function heldEffectiveTrigger(policy: TriggerPolicy): number {
  return Math.max(effectiveTrigger(policy.trigger_tokens, policy.quota_pressure), pressureHold(policy));
}

/** Words for a trigger the hold kept up (null when scaling alone set it), for explain and policy-check. */
export function pressureHoldNote(policy: TriggerPolicy): string | null {
  const scaled = effectiveTrigger(policy.trigger_tokens, policy.quota_pressure);
  const held = heldEffectiveTrigger(policy);
  if (held === scaled) return null;
  return (
    `${policy.quota_pressure} quota pressure would bring the trigger ${formatCount(policy.trigger_tokens)} to ${formatCount(scaled)} (×${QUOTA_PRESSURE_FACTOR[policy.quota_pressure]}), too near the floor (${formatCount(policy.floor_tokens)}) for a compaction to save ` +
    `min_savings_tokens (${formatCount(policy.min_savings_tokens)}), so it stays at ${formatCount(held)}`
  );
}

export function isQuotaPressure(value: unknown): value is QuotaPressure {
  return value === 'low' || value === 'normal' || value === 'high';
}
