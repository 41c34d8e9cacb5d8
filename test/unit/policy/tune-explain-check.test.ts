import { describe, expect, it } from 'vitest';
import { validateExplainCommandResult, validatePolicyCheckCommandResult, validateTuneCommandResult } from '../../../schemas/generated/validators.js';
import { defaultPolicy } from '../../../kernel/policy/defaults.js';
import { toResolvedPolicy } from '../../../kernel/policy/effective-policy.js';
import { explain } from '../../../kernel/policy/explain.js';
import { policyCheck } from '../../../kernel/policy/policy-check.js';
import { tune } from '../../../kernel/policy/tune.js';

const base = { provider: 'codex', session_id: '01a08d7c', context_tokens: 120_000, elidable_tokens: 20_000, model_context_window: null, recent: [] };

describe('tune', () => {
  it('explains a window cap and the floor that follows it, with a TOML snippet', () => {
    const result = tune({ ...base, model_context_window: 200_000, policy: defaultPolicy() });
    expect(validateTuneCommandResult(result), JSON.stringify(validateTuneCommandResult.errors)).toBe(true);
    expect(result).toMatchObject({
      adaptive_enabled: false,
      configured: { trigger_tokens: 250_000, floor_tokens: 40_000 },
      adjusted: { trigger_tokens: 50_000, floor_tokens: 25_000 },
      effective_trigger_tokens: 50_000,
      reasons: ['trigger_capped_to_window_fraction', 'floor_capped_to_trigger_half'],
      recent_applied: 0,
    });
    expect(result.explanation[0]).toBe("the model's window is 200,000 tokens; the trigger is capped at a quarter of it (never below 10,000): trigger 250,000 → 50,000");
    expect(result.explanation[1]).toBe('the floor may be at most half the trigger (and at least 1,000): floor 40,000 → 25,000');
    expect(result.explanation.at(-1)).toContain('adaptive is off');
    expect(result.suggested_toml).toBe(
      '[sessions."01a08d7c"]\ntrigger_tokens = 50000\nfloor_tokens = 25000\n# or let gobstopper derive these per session: adaptive = true under [policy]',
    );
  });

  it('explains a low-yield back-off and a high-elidable tightening', () => {
    const recent = [
      { context_before: 260_000, est_reclaimed: 10_000 },
      { context_before: 255_000, est_reclaimed: 12_000 },
      { context_before: 250_000, est_reclaimed: 100_000 },
      { context_before: 250_000, est_reclaimed: 100_000 },
    ];
    const result = tune({ ...base, recent: recent.slice(0, 2), elidable_tokens: 100_000, policy: { ...defaultPolicy(), adaptive: true, quota_pressure: 'high' } });
    expect(result.adjusted.trigger_tokens).toBe(300_000);
    expect(result.effective_trigger_tokens).toBe(210_000);
    expect(result.reasons).toEqual(['trigger_raised_low_yield', 'trigger_lowered_high_elidable']);
    expect(result.explanation[0]).toContain('trigger 250,000 → 375,000');
    expect(result.explanation[1]).toContain('100,000 of 120,000 context tokens are elidable');
    expect(result.suggested_toml).not.toContain('adaptive = true');
    expect(tune({ ...base, recent, policy: defaultPolicy() }).recent_applied).toBe(3);
  });

  it('with adaptive on, the snippet also turns adaptive off in the session table, so pasted numbers stay', () => {
    const result = tune({ ...base, model_context_window: 200_000, elidable_tokens: 100_000, policy: { ...defaultPolicy(), adaptive: true } });
    expect(result.adjusted).toEqual({ trigger_tokens: 40_000, floor_tokens: 20_000 });
    expect(result.suggested_toml).toBe('[sessions."01a08d7c"]\ntrigger_tokens = 40000\nfloor_tokens = 20000\nadaptive = false');
    // What the pasted table resolves to is what plans then use: adaptive off, the shown numbers.
    const pasted = tune({ ...base, model_context_window: 200_000, elidable_tokens: 100_000, policy: { ...defaultPolicy(), ...result.adjusted, adaptive: false }, adaptive_off_by_session: true });
    expect(pasted).toMatchObject({ adaptive_enabled: false, configured: result.adjusted });
    expect(pasted.suggested_toml).toContain('# or let gobstopper derive these per session again: adaptive = true here');
  });

  it('says to set the keys in the session table a config file already has, since a second one is invalid TOML', () => {
    const result = tune({ ...base, model_context_window: 200_000, policy: defaultPolicy(), session_table_paths: ['/home/u/.config/gobstopper/config.toml'] });
    expect(result.suggested_toml).toBe(
      '# /home/u/.config/gobstopper/config.toml already has a [sessions."01a08d7c"] table: set these keys in it rather than adding a second one\n' +
        '[sessions."01a08d7c"]\ntrigger_tokens = 50000\nfloor_tokens = 25000\n# or let gobstopper derive these per session: adaptive = true under [policy]',
    );
  });

  it('leaves a trigger or floor given as a flag as it is, and says so', () => {
    const pinned = tune({ ...base, model_context_window: 200_000, policy: { ...defaultPolicy(), trigger_tokens: 100_000, adaptive: true }, pinned: { trigger_tokens: true } });
    expect(pinned).toMatchObject({ configured: { trigger_tokens: 100_000, floor_tokens: 40_000 }, adjusted: { trigger_tokens: 100_000, floor_tokens: 40_000 }, reasons: [], suggested_toml: null });
    expect(pinned.explanation).toEqual([
      'trigger 100,000 is given with --trigger for this run, so adaptive leaves it as it is',
      'nothing else to adjust: the floor is within half the trigger',
    ]);
    const both = tune({ ...base, model_context_window: 200_000, policy: { ...defaultPolicy(), trigger_tokens: 100_000, floor_tokens: 5_000, adaptive: true }, pinned: { trigger_tokens: true, floor_tokens: true } });
    expect(both.explanation).toEqual(['trigger 100,000 and floor 5,000 are given with --trigger and --floor for this run, so adaptive leaves them as they are']);
    // A pinned floor raises the tuned trigger to twice it; only the trigger moved, and only it is named.
    const floor = tune({ ...base, model_context_window: 200_000, policy: { ...defaultPolicy(), floor_tokens: 60_000, adaptive: true }, pinned: { floor_tokens: true } });
    expect(floor.explanation.at(-1)).toBe('trigger and floor are kept consistent (trigger at least 10,000 and twice the floor, floor at least 1,000): trigger 50,000 → 120,000');
  });

  it('says so when nothing needs adjusting', () => {
    const result = tune({ ...base, model_context_window: 1_000_000, policy: { ...defaultPolicy(), adaptive: true } });
    expect(result.reasons).toEqual([]);
    expect(result.adjusted).toEqual(result.configured);
    expect(result.suggested_toml).toBeNull();
    expect(result.explanation).toEqual([expect.stringMatching(/^nothing to adjust: the trigger is within a quarter of the 1,000,000-token window/)]);
  });

  it('does not call yields it never saw "not all low-yield": it says how many compactions it had to judge by', () => {
    const policy = { ...defaultPolicy(), adaptive: true };
    const said = (recent: Array<{ context_before: number; est_reclaimed: number }>) => tune({ ...base, model_context_window: 1_000_000, recent, policy }).explanation[0];
    expect(said([])).toContain(', no applied compaction of this session is logged to judge its yield by,');
    // One low-yield compaction alone moves nothing, and that is why.
    expect(said([{ context_before: 100_000, est_reclaimed: 1_000 }])).toContain(', only one applied compaction of this session is logged (the yield back-off needs two),');
    expect(said([{ context_before: 100_000, est_reclaimed: 1_000 }, { context_before: 100_000, est_reclaimed: 50_000 }])).toContain(', recent compactions were not all low-yield,');
  });

  it('refuses a policy out of bounds', () => {
    expect(() => tune({ ...base, policy: { ...defaultPolicy(), floor_tokens: 300_000 } })).toThrow(/^invalid policy bounds/);
  });
});

describe('policy-check', () => {
  const policy = toResolvedPolicy(defaultPolicy());

  it.each([
    ['codex', 300_000, true, 'provider_compact', 'thread/compact/start'],
    ['claude_code', 300_000, true, 'provider_compact', '/compact or relaunch --autocompact'],
    ['devin', 250_000, true, 'provider_compact', '/compact'],
    ['codex', 300_000, false, 'transcript_compact', null],
    ['codex', 249_999, true, 'none', null],
    ['claude_code', 0, false, 'none', null],
  ] as const)('%s at %i tokens (active %s) → %s', (provider, context, active, action, control) => {
    const result = policyCheck({ provider, context_tokens: context, session_active: active, policy });
    expect(validatePolicyCheckCommandResult(result)).toBe(true);
    expect(result).toMatchObject({ action, control, provider, strategy: 'auto', trigger_tokens: 250_000, context_tokens: context });
  });

  it('fires earlier under high quota pressure and later under low', () => {
    const high = toResolvedPolicy({ ...defaultPolicy(), quota_pressure: 'high', block_tokens: 400_000 });
    expect(policyCheck({ provider: 'codex', context_tokens: 180_000, session_active: true, policy: high })).toMatchObject({
      action: 'provider_compact',
      trigger_tokens: 250_000,
      effective_trigger_tokens: 175_000,
      block_tokens: 400_000,
      quota_pressure: 'high',
    });
    const low = toResolvedPolicy({ ...defaultPolicy(), quota_pressure: 'low' });
    expect(policyCheck({ provider: 'codex', context_tokens: 280_000, session_active: true, policy: low }).action).toBe('none');
  });

  it('does not call for a compaction that could not save the minimum: high pressure stops min_savings_tokens above the floor', () => {
    const pressed = toResolvedPolicy({ ...defaultPolicy(), trigger_tokens: 20_000, floor_tokens: 15_000, quota_pressure: 'high' });
    // ×0.7 alone would be 14,000, under the floor: an idle session there has nothing to reclaim.
    const under = policyCheck({ provider: 'codex', context_tokens: 14_500, session_active: false, policy: pressed });
    expect(validatePolicyCheckCommandResult(under)).toBe(true);
    expect(under).toMatchObject({ action: 'none', effective_trigger_tokens: 19_096 });
    expect(policyCheck({ provider: 'codex', context_tokens: 19_096, session_active: false, policy: pressed }).action).toBe('transcript_compact');
    expect(explain({ provider: 'codex', policy: pressed, context_tokens: 19_096 }).assessment).toMatchObject({ over_trigger: true, worth_a_cycle: true });
  });
});

describe('explain', () => {
  it('reproduces the sawtooth comparison for the default policy', () => {
    const result = explain({ provider: null, policy: toResolvedPolicy(defaultPolicy()), context_tokens: null });
    expect(validateExplainCommandResult(result), JSON.stringify(validateExplainCommandResult.errors)).toBe(true);
    expect(result.cycle).toEqual({
      reclaimed_per_cycle_tokens: 210_000,
      average_context_tokens: 145_000,
      compaction_input_tokens: 250_000,
      window_tokens: 1_000_000,
      native_trigger_tokens: 900_000,
      native_floor_tokens: 60_000,
      native_average_context_tokens: 480_000,
      fewer_tokens_ratio: 3.31,
    });
    expect(result.warnings).toEqual([]);
    expect(result.context_basis.map((b) => b.provider)).toEqual(['claude_code', 'codex', 'devin']);
    expect(result.assessment).toBeNull();
    expect(result.lines.join('\n')).toContain('averages about 480,000 tokens a turn: 3.31× what this policy carries');
  });

  it('an aggressive 150k/20k policy carries about 5.6× less', () => {
    const result = explain({ provider: 'codex', policy: toResolvedPolicy({ ...defaultPolicy(), trigger_tokens: 150_000, floor_tokens: 20_000 }), context_tokens: null });
    expect(result.cycle.fewer_tokens_ratio).toBeCloseTo(5.65, 2);
    expect(result.context_basis).toHaveLength(1);
  });

  it('assesses a given context size', () => {
    const policy = toResolvedPolicy(defaultPolicy());
    expect(explain({ provider: 'codex', policy, context_tokens: 300_000 }).assessment).toEqual({
      context_tokens: 300_000,
      over_trigger: true,
      tokens_until_trigger: 0,
      reclaimable_to_floor_tokens: 260_000,
      worth_a_cycle: true,
    });
    const below = explain({ provider: 'codex', policy, context_tokens: 100_000 });
    expect(below.assessment).toMatchObject({ over_trigger: false, tokens_until_trigger: 150_000 });
    expect(below.lines.at(-1)).toBe('At 100,000 tokens the session is 150,000 tokens below the trigger: nothing to do yet.');
    expect(explain({ provider: 'codex', policy, context_tokens: 249_999 }).lines.at(-1)).toBe('At 249,999 tokens the session is 1 token below the trigger: nothing to do yet.');
    const over = explain({ provider: 'codex', policy, context_tokens: 300_000 });
    expect(over.lines.at(-1)).toContain("a live session calls for the provider's own compaction (thread/compact/start)");
  });

  it('warns instead of working out a cycle that never happens, in words and in JSON', () => {
    const text = (result: ReturnType<typeof explain>) => result.lines.join('\n');
    // A 250,000 trigger in a 200,000-token window is past where the client compacts by itself.
    const off = explain({ provider: 'claude_code', policy: toResolvedPolicy(defaultPolicy()), context_tokens: null, window_tokens: 200_000 });
    expect(text(off)).toContain('so as configured it never fires; set trigger_tokens below 180,000, or turn adaptive on');
    expect(text(off)).not.toMatch(/Each cycle|averages about|250,000 input tokens/);
    // In JSON too: the policy's figures are null, and a code says why; the native sawtooth stands.
    expect(validateExplainCommandResult(off), JSON.stringify(validateExplainCommandResult.errors)).toBe(true);
    expect(off.cycle).toEqual({
      reclaimed_per_cycle_tokens: null,
      average_context_tokens: null,
      compaction_input_tokens: null,
      window_tokens: 200_000,
      native_trigger_tokens: 180_000,
      native_floor_tokens: 60_000,
      native_average_context_tokens: 120_000,
      fewer_tokens_ratio: null,
    });
    expect(off.warnings).toEqual([{ code: 'trigger_never_reached', message: expect.stringContaining('so as configured it never fires; set trigger_tokens below 180,000') }]);
    expect(off.lines).toContain(`Warning: ${off.warnings[0]!.message}`);
    // With adaptive on, the advice is not to turn it on, but what it does.
    const adaptive = explain({ provider: 'claude_code', policy: toResolvedPolicy({ ...defaultPolicy(), adaptive: true }), context_tokens: null, window_tokens: 200_000 });
    expect(text(adaptive)).toContain('adaptive, which is on, caps it per session at a quarter of the model window');
    expect(text(adaptive)).not.toContain('turn adaptive on');
  });

  it('says why high pressure left the trigger where it is, rather than at or under the floor', () => {
    const pressed = explain({ provider: 'codex', policy: toResolvedPolicy({ ...defaultPolicy(), trigger_tokens: 20_000, floor_tokens: 15_000, quota_pressure: 'high' }), context_tokens: 14_500 });
    expect(pressed.lines[0]).toBe(
      'Policy: strategy auto; compact when the context reaches 19,096 tokens and aim for 15,000 afterwards (the floor); high quota pressure would bring the trigger 20,000 to 14,000 (×0.7), ' +
        'too near the floor (15,000) for a compaction to save min_savings_tokens (4,096), so it stays at 19,096.',
    );
    expect(pressed.assessment).toMatchObject({ over_trigger: false, tokens_until_trigger: 4_596 });
    expect(pressed.cycle).toMatchObject({ reclaimed_per_cycle_tokens: 4_096, compaction_input_tokens: 19_096 });
  });

  it('says when the figures use another window than the session recorded', () => {
    const session = { provider: 'claude_code', session_id: 'abc', model_context_window: 200_000 } as Parameters<typeof explain>[0]['session'];
    const result = explain({ provider: 'claude_code', policy: toResolvedPolicy(defaultPolicy()), context_tokens: 1000, window_tokens: 100_000, session });
    expect(result.lines[0]).toBe('Session claude_code abc: its model window is 200,000 tokens (the figures below use a 100,000-token window); the policy below is the one plan uses for it.');
    const same = explain({ provider: 'claude_code', policy: toResolvedPolicy(defaultPolicy()), context_tokens: 1000, window_tokens: 200_000, session });
    expect(same.lines[0]).toBe('Session claude_code abc: its model window is 200,000 tokens; the policy below is the one plan uses for it.');
  });
});
