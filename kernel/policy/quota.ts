/** Quota pressure moves the trigger: later when quota is plentiful, earlier when it is scarce. */
import type { QuotaPressure } from '../../schemas/generated/types.js';

export const QUOTA_PRESSURE_FACTOR: Record<QuotaPressure, number> = { low: 1.15, normal: 1.0, high: 0.7 };

/**
 * The trigger that fires under `pressure`. Not capped at the configured trigger's bound: low
 * pressure on a 10,000,000 trigger fires at 11,500,000, as the scaling says.
 */
export function effectiveTrigger(triggerTokens: number, pressure: QuotaPressure): number {
  return Math.max(1, Math.round(triggerTokens * QUOTA_PRESSURE_FACTOR[pressure]));
}

export function isQuotaPressure(value: unknown): value is QuotaPressure {
  return value === 'low' || value === 'normal' || value === 'high';
}
