/** Quota pressure moves the trigger: later when quota is plentiful, earlier when it is scarce. */
import type { QuotaPressure } from '../../schemas/generated/types.js';
import { MAX_POLICY_TOKENS } from './bounds.js';

export const QUOTA_PRESSURE_FACTOR: Record<QuotaPressure, number> = { low: 1.15, normal: 1.0, high: 0.7 };

/** The trigger that fires under `pressure`, kept within the bounds a configured trigger has. */
export function effectiveTrigger(triggerTokens: number, pressure: QuotaPressure): number {
  return Math.min(MAX_POLICY_TOKENS, Math.max(1, Math.round(triggerTokens * QUOTA_PRESSURE_FACTOR[pressure])));
}

export function isQuotaPressure(value: unknown): value is QuotaPressure {
  return value === 'low' || value === 'normal' || value === 'high';
}
