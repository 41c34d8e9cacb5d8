import { describe, expect, it } from 'vitest';
import { adapt, adaptiveRationaleSuffix, isLowYieldStreak, type AdaptiveSample } from '../../../kernel/policy/adaptive.js';

const base = { trigger_tokens: 250_000, floor_tokens: 40_000 };
const quiet: AdaptiveSample = { model_context_window: null, context_tokens: 100_000, elidable_tokens: 0, recent: [] };
const lowYield = [
  { context_before: 300_000, est_reclaimed: 10_000 },
  { context_before: 280_000, est_reclaimed: 5_000 },
];

describe('adaptive tuning: worked examples', () => {
  it('a 200k window caps the trigger at 50k and the floor at half of it', () => {
    expect(adapt(base, { ...quiet, model_context_window: 200_000 })).toEqual({
      trigger_tokens: 50_000,
      floor_tokens: 25_000,
      reasons: ['trigger_capped_to_window_fraction', 'floor_capped_to_trigger_half'],
    });
  });

  it('two low-yield compactions back the 250k trigger off to 375k', () => {
    expect(adapt(base, { ...quiet, recent: lowYield })).toEqual({ trigger_tokens: 375_000, floor_tokens: 40_000, reasons: ['trigger_raised_low_yield'] });
  });

  it('a 400k base backs off to 600k, under its 800k bound', () => {
    expect(adapt({ trigger_tokens: 400_000, floor_tokens: 40_000 }, { ...quiet, recent: lowYield }).trigger_tokens).toBe(600_000);
  });

  it('over half the context elidable tightens 250k to 200k', () => {
    expect(adapt(base, { ...quiet, context_tokens: 300_000, elidable_tokens: 160_000 })).toEqual({
      trigger_tokens: 200_000,
      floor_tokens: 40_000,
      reasons: ['trigger_lowered_high_elidable'],
    });
  });
});

describe('adaptive tuning: rules', () => {
  it('leaves a policy alone when nothing calls for a change', () => {
    expect(adapt(base, quiet)).toEqual({ ...base, reasons: [] });
  });

  it('never caps the trigger below 10,000 however small the window', () => {
    const result = adapt(base, { ...quiet, model_context_window: 16_000 });
    expect(result.trigger_tokens).toBe(10_000);
    expect(result.floor_tokens).toBe(5_000);
  });

  it('a single low-yield compaction does nothing', () => {
    expect(adapt(base, { ...quiet, recent: lowYield.slice(0, 1) }).trigger_tokens).toBe(250_000);
  });

  it('looks only at the newest three compactions, and all of them must be low-yield', () => {
    const goodThenLow = [{ context_before: 300_000, est_reclaimed: 200_000 }, ...lowYield];
    expect(isLowYieldStreak(goodThenLow)).toBe(false);
    const lowThenOldGood = [...lowYield, { context_before: 300_000, est_reclaimed: 10_000 }, { context_before: 300_000, est_reclaimed: 200_000 }];
    expect(isLowYieldStreak(lowThenOldGood)).toBe(true);
    expect(isLowYieldStreak([{ context_before: 0, est_reclaimed: 0 }, ...lowYield])).toBe(false);
  });

  it('the back-off is bounded at twice the configured trigger', () => {
    // Capped to the window first (40k), then raised ×1.5 to 60k: still under 2 × 50k.
    const small = { trigger_tokens: 50_000, floor_tokens: 5_000 };
    expect(adapt(small, { ...quiet, model_context_window: 160_000, recent: lowYield }).trigger_tokens).toBe(60_000);
    // No window: 50k × 1.5 = 75k, under the 100k bound.
    expect(adapt(small, { ...quiet, recent: lowYield }).trigger_tokens).toBe(75_000);
  });

  it('skips tightening when the transcript was not parsed', () => {
    expect(adapt(base, { ...quiet, elidable_tokens: null }).reasons).toEqual([]);
  });

  it('exactly half elidable is not over half', () => {
    expect(adapt(base, { ...quiet, context_tokens: 200_000, elidable_tokens: 100_000 }).reasons).toEqual([]);
  });

  it('keeps the floor at least 1,000 and at most half the trigger', () => {
    expect(adapt({ trigger_tokens: 250_000, floor_tokens: 0 }, quiet).floor_tokens).toBe(1_000);
    const capped = adapt({ trigger_tokens: 20_000, floor_tokens: 15_000 }, quiet);
    expect(capped).toEqual({ trigger_tokens: 20_000, floor_tokens: 10_000, reasons: ['floor_capped_to_trigger_half'] });
  });

  it('is idempotent: tuning the same sample twice from the same base gives the same answer', () => {
    const sample = { ...quiet, model_context_window: 272_000, recent: lowYield, context_tokens: 300_000, elidable_tokens: 200_000 };
    expect(adapt(base, sample)).toEqual(adapt(base, sample));
  });

  it('appends reasons to a rationale in a fixed form', () => {
    expect(adaptiveRationaleSuffix([])).toBe('');
    expect(adaptiveRationaleSuffix(['trigger_capped_to_window_fraction', 'floor_capped_to_trigger_half'])).toBe(
      ' | adaptive: trigger_capped_to_window_fraction, floor_capped_to_trigger_half',
    );
  });
});

describe('adaptive tuning: values given as flags', () => {
  const window200k = { ...quiet, model_context_window: 200_000 };

  it('leaves a pinned trigger alone, with no reason for it, and caps the floor at half of it', () => {
    expect(adapt({ trigger_tokens: 100_000, floor_tokens: 60_000 }, { ...window200k, recent: lowYield }, { trigger_tokens: true })).toEqual({
      trigger_tokens: 100_000,
      floor_tokens: 50_000,
      reasons: ['floor_capped_to_trigger_half'],
    });
  });

  it('leaves a pinned floor alone and keeps the adapted trigger at least twice it', () => {
    expect(adapt({ trigger_tokens: 250_000, floor_tokens: 30_000 }, window200k, { floor_tokens: true })).toEqual({
      trigger_tokens: 60_000,
      floor_tokens: 30_000,
      reasons: ['trigger_capped_to_window_fraction'],
    });
  });

  it('changes nothing when both are pinned, even a floor over half the trigger', () => {
    expect(adapt({ trigger_tokens: 100_000, floor_tokens: 80_000 }, { ...window200k, context_tokens: 300_000, elidable_tokens: 200_000 }, { trigger_tokens: true, floor_tokens: true })).toEqual({
      trigger_tokens: 100_000,
      floor_tokens: 80_000,
      reasons: [],
    });
  });

  it('never lifts the trigger past the token bound to make room for a pinned floor', () => {
    const result = adapt({ trigger_tokens: 10_000_000, floor_tokens: 9_000_000 }, quiet, { floor_tokens: true });
    expect(result).toEqual({ trigger_tokens: 10_000_000, floor_tokens: 9_000_000, reasons: [] });
  });
});
