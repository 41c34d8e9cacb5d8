import { describe, expect, it } from 'vitest';
import { assertPolicyBounds } from '../../../kernel/policy/bounds.js';
import { defaultPolicy } from '../../../kernel/policy/defaults.js';
import { effectivePolicy, toResolvedPolicy } from '../../../kernel/policy/effective-policy.js';
import { effectiveTrigger } from '../../../kernel/policy/quota.js';
import { validateResolvedPolicy } from '../../../schemas/generated/validators.js';

function boundsError(overrides: Partial<ReturnType<typeof defaultPolicy>>): string | null {
  try {
    assertPolicyBounds({ ...defaultPolicy(), ...overrides });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('policy bounds', () => {
  it('accepts the defaults', () => {
    expect(boundsError({})).toBeNull();
  });

  it.each([
    ['floor equal to trigger', { trigger_tokens: 50_000, floor_tokens: 50_000 }, 'floor_tokens (50000) must be below trigger_tokens (50000)'],
    ['floor above trigger', { trigger_tokens: 50_000, floor_tokens: 60_000 }, 'must be below trigger_tokens'],
    ['zero trigger', { trigger_tokens: 0 }, 'trigger_tokens must be a whole number from 1 to 10000000'],
    ['trigger over ten million', { trigger_tokens: 10_000_001 }, 'trigger_tokens must be a whole number from 1 to 10000000'],
    ['threshold above 1', { keep_score_threshold: 1.5 }, 'keep_score_threshold must be a finite value between 0 and 1'],
    ['negative threshold', { keep_score_threshold: -0.1 }, 'keep_score_threshold must be a finite value between 0 and 1'],
    ['NaN threshold', { keep_score_threshold: Number.NaN }, 'keep_score_threshold must be a finite value between 0 and 1 (got NaN)'],
    ['infinite threshold', { keep_score_threshold: Number.POSITIVE_INFINITY }, 'keep_score_threshold must be a finite value between 0 and 1'],
    ['interval over a day', { min_interval_secs: 86_401 }, 'min_interval_secs must be a whole number from 0 to 86400'],
    ['hold over a day', { apply_hold_secs: 90_000 }, 'apply_hold_secs'],
    ['keep too many outputs', { keep_recent_tool_outputs: 100_001 }, 'keep_recent_tool_outputs'],
    ['min savings too large', { min_savings_tokens: 10_000_001 }, 'min_savings_tokens'],
  ])('rejects %s', (_name, overrides, fragment) => {
    const message = boundsError(overrides);
    expect(message).toMatch(/^invalid policy bounds: /);
    expect(message).toContain(fragment);
  });

  it('lists every violation in one message', () => {
    const message = boundsError({ trigger_tokens: 50_000, floor_tokens: 60_000, keep_score_threshold: 2 }) ?? '';
    expect(message).toContain('floor_tokens (60000) must be below trigger_tokens (50000)');
    expect(message).toContain('keep_score_threshold');
  });

  it('accepts the threshold edges 0 and 1', () => {
    expect(boundsError({ keep_score_threshold: 0 })).toBeNull();
    expect(boundsError({ keep_score_threshold: 1 })).toBeNull();
  });
});

describe('quota pressure', () => {
  it('scales the trigger ×1.15 / ×1.0 / ×0.7, rounded', () => {
    expect(effectiveTrigger(250_000, 'low')).toBe(287_500);
    expect(effectiveTrigger(250_000, 'normal')).toBe(250_000);
    expect(effectiveTrigger(250_000, 'high')).toBe(175_000);
    expect(effectiveTrigger(3, 'low')).toBe(3);
    expect(effectiveTrigger(5, 'high')).toBe(4);
  });

  it('never goes below 1, and scales the largest trigger too', () => {
    expect(effectiveTrigger(1, 'high')).toBe(1);
    expect(effectiveTrigger(10_000_000, 'low')).toBe(11_500_000);
    expect(boundsError({ trigger_tokens: 10_000_000, quota_pressure: 'low' })).toBeNull();
  });

  it('accepts a floor that high pressure would bring the trigger down to, as the configured bounds hold', () => {
    expect(boundsError({ trigger_tokens: 70_000, floor_tokens: 60_000, quota_pressure: 'high' })).toBeNull();
  });

  it('stops high pressure min_savings_tokens above the floor, never raising the configured trigger', () => {
    const held = (trigger_tokens: number, floor_tokens: number, min_savings_tokens = 4_096) =>
      toResolvedPolicy({ ...defaultPolicy(), trigger_tokens, floor_tokens, min_savings_tokens, quota_pressure: 'high' }).effective_trigger_tokens;
    expect(held(70_000, 60_000)).toBe(64_096);
    expect(held(250_000, 40_000)).toBe(175_000);
    // Under the configured trigger when that is lower: pressure then moves nothing.
    expect(held(62_000, 60_000)).toBe(62_000);
    // With no minimum, still above the floor.
    expect(held(20_000, 14_000, 0)).toBe(14_001);
    const low = toResolvedPolicy({ ...defaultPolicy(), trigger_tokens: 70_000, floor_tokens: 60_000, quota_pressure: 'low' });
    expect(low.effective_trigger_tokens).toBe(80_500);
  });
});

describe('effective policy', () => {
  const sample = { model_context_window: 200_000, context_tokens: 120_000, elidable_tokens: 10_000, recent: [] };

  it('leaves the configured numbers alone when adaptive is off', () => {
    const policy = effectivePolicy(defaultPolicy(), sample);
    expect(policy).toMatchObject({ trigger_tokens: 250_000, floor_tokens: 40_000, effective_trigger_tokens: 250_000, adaptive_reasons: [] });
    expect(validateResolvedPolicy(policy)).toBe(true);
  });

  it('adapts, then scales the adapted trigger by quota pressure', () => {
    const policy = effectivePolicy({ ...defaultPolicy(), adaptive: true, quota_pressure: 'high' }, sample);
    expect(policy).toMatchObject({
      trigger_tokens: 50_000,
      floor_tokens: 25_000,
      effective_trigger_tokens: 35_000,
      adaptive_reasons: ['trigger_capped_to_window_fraction', 'floor_capped_to_trigger_half'],
    });
    expect(validateResolvedPolicy(policy)).toBe(true);
  });

  it('refuses an out-of-bounds policy before tuning it', () => {
    expect(() => effectivePolicy({ ...defaultPolicy(), adaptive: true, floor_tokens: 300_000 }, sample)).toThrow(/^invalid policy bounds: /);
  });
});
