import { describe, expect, it, vi } from 'vitest';
import type { Edit, StrategyProposeParams, StrategyProposeResult, UsageSample } from '../../../schemas/generated/types.js';
import { validatePlanCommandResult } from '../../../schemas/generated/validators.js';
import type { ExternalProposer } from '../../../kernel/config/resolve-config.js';
import { defaultPolicy, type PolicyValues } from '../../../kernel/policy/defaults.js';
import { planSession, type PlanOutcome, type StrategyRunner } from '../../../kernel/policy/plan-pipeline.js';
import { CandidateTally } from '../../../kernel/policy/gated-candidates.js';
import { noPlan } from '../../../kernel/policy/no-plan.js';
import { toResolvedPolicy } from '../../../kernel/policy/effective-policy.js';
import { explain } from '../../../kernel/policy/explain.js';
import { policyCheck } from '../../../kernel/policy/policy-check.js';
import type { LegacyCommandRunner } from '../../../kernel/policy/legacy-command.js';
import { resultLines, toolSession, transcriptOf } from './transcript-builder.js';

// 40 tool results of 1010 tokens (976 reclaimable each); about 41,000 tokens of context in all.
const ITEMS = toolSession(40, 4000);
const BEFORE = ITEMS.reduce((s, i) => s + i.est_tokens, 0);
const STALE = resultLines(ITEMS).slice(0, 32);
const values = (overrides: Partial<PolicyValues> = {}): PolicyValues => ({ ...defaultPolicy(), trigger_tokens: 30_000, floor_tokens: 5_000, strategy: 'elide', ...overrides });
const elide = (lines: number[]): Edit => ({ op: 'elide', line_indexes: lines, stub_template: '[output elided by gobstopper: {bytes} bytes]' });

function strategyReturning(result: StrategyProposeResult & { plugin_id?: string }) {
  return vi.fn<StrategyRunner>(async () => result);
}

async function run(options: {
  policy?: Partial<PolicyValues>;
  external?: ExternalProposer | null;
  runStrategy?: StrategyRunner;
  runLegacyCommand?: LegacyCommandRunner;
  usage?: Partial<UsageSample>;
  active?: boolean;
  recent?: Array<{ context_before: number; est_reclaimed: number }>;
  /** Keys given as command-line flags, as the resolution records them. */
  flags?: string[];
}): Promise<PlanOutcome> {
  const flag = { layer: 'flag', scope: 'flag', table: null, path: null } as const;
  const sources = Object.fromEntries((options.flags ?? []).map((key) => [key, flag]));
  const outcome = await planSession({
    transcript: transcriptOf(ITEMS, { usage: options.usage }),
    config: { values: values(options.policy), external: options.external ?? null, sources },
    active: options.active ?? false,
    recentYields: options.recent,
    runStrategy: options.runStrategy ?? strategyReturning({ edits: [], rationale: 'nothing' }),
    runLegacyCommand: options.runLegacyCommand,
  });
  expect(validatePlanCommandResult(outcome), JSON.stringify(validatePlanCommandResult.errors)).toBe(true);
  return outcome;
}

const legacy: ExternalProposer = { kind: 'legacy_command', command: 'my-compactor', table: '[presets.custom-script]' };

describe('plan pipeline: the five no-plan reasons', () => {
  it('below_trigger: under the effective trigger nothing runs', async () => {
    const runStrategy = strategyReturning({ edits: [elide(STALE)], rationale: 'x' });
    const outcome = await run({ policy: { trigger_tokens: 100_000 }, runStrategy });
    expect(outcome).toEqual({
      status: 'no_plan',
      reason_code: 'below_trigger',
      context_tokens_before: BEFORE,
      effective_trigger_tokens: 100_000,
      target_context_tokens: 5_000,
      min_savings_tokens: 4_096,
      projected_context_tokens_after: null,
      projected_savings_tokens: null,
    });
    expect(runStrategy).not.toHaveBeenCalled();
    // Exactly at the trigger is over it, as watch, explain and policy-check count it.
    const atTrigger = await run({ policy: { trigger_tokens: BEFORE }, runStrategy });
    expect(atTrigger).toMatchObject({ status: 'plan', plan: { edits: [elide(STALE)] } });
    expect(runStrategy).toHaveBeenCalledTimes(1);
  });

  it('below_trigger: high quota pressure does not bring the trigger to where a cycle toward the floor saves too little', async () => {
    // ×0.7 would put the trigger at 38,500, under this session's 41,290 and only 500 over the floor;
    // a floorless strategy (structured, cliff) would then compact a session the floor calls small enough.
    const runStrategy = strategyReturning({ edits: [elide(STALE)], rationale: 'floorless' });
    const policy = { trigger_tokens: 55_000, floor_tokens: 38_000, quota_pressure: 'high' } as const;
    const outcome = await run({ policy, runStrategy });
    expect(outcome).toMatchObject({ status: 'no_plan', reason_code: 'below_trigger', effective_trigger_tokens: 42_096 });
    expect(runStrategy).not.toHaveBeenCalled();
    // policy-check and explain give the same answer for the same numbers.
    const resolved = toResolvedPolicy(values(policy));
    expect(policyCheck({ provider: 'codex', context_tokens: BEFORE, session_active: false, policy: resolved })).toMatchObject({ action: 'none', effective_trigger_tokens: 42_096 });
    expect(explain({ provider: 'codex', policy: resolved, context_tokens: BEFORE }).assessment).toMatchObject({ over_trigger: false, tokens_until_trigger: 42_096 - BEFORE });
  });

  it('strategy_returned_no_plan: the strategy proposed nothing', async () => {
    const outcome = await run({ runStrategy: strategyReturning({ edits: [], rationale: 'no stale outputs' }) });
    expect(outcome).toMatchObject({ status: 'no_plan', reason_code: 'strategy_returned_no_plan', projected_context_tokens_after: null });
  });

  it('a selector whose every candidate the gate refused: minimum_savings_not_met with the closest projection', async () => {
    const gate = { effective_trigger_tokens: 30_000, floor_tokens: 5_000, min_savings_tokens: 4_096 };
    const gatedNoPlan = (after: number) => noPlan('minimum_savings_not_met', gate, BEFORE, after);
    const selector = (outcomes: Array<Parameters<CandidateTally['note']>[0]>) =>
      vi.fn<StrategyRunner>(async () => {
        const tally = new CandidateTally();
        for (const o of outcomes) tally.note(o);
        return tally.attach({ edits: [], rationale: 'auto: no candidate produced a plan' });
      });
    const refused = await run({ runStrategy: selector([gatedNoPlan(BEFORE - 900), noPlan('strategy_returned_no_plan', gate, BEFORE), gatedNoPlan(BEFORE - 2_000)]) });
    expect(refused).toMatchObject({ reason_code: 'minimum_savings_not_met', projected_context_tokens_after: BEFORE - 2_000, projected_savings_tokens: 2_000 });
    // A candidate the gate admitted means the selector chose to propose nothing: that is its answer.
    const declined = await run({ runStrategy: selector([gatedNoPlan(BEFORE - 900), { status: 'plan' } as never]) });
    expect(declined).toMatchObject({ reason_code: 'strategy_returned_no_plan', projected_context_tokens_after: null });
  });

  it('empty_external_edits: a legacy command proposed nothing', async () => {
    const outcome = await run({ external: legacy, runLegacyCommand: async () => [] });
    expect(outcome).toMatchObject({ status: 'no_plan', reason_code: 'empty_external_edits', projected_savings_tokens: null });
  });

  it('minimum_savings_not_met: the plan saves too little, with the projection', async () => {
    const outcome = await run({ runStrategy: strategyReturning({ edits: [elide(STALE.slice(0, 2))], rationale: 'two' }) });
    expect(outcome).toMatchObject({
      status: 'no_plan',
      reason_code: 'minimum_savings_not_met',
      projected_context_tokens_after: BEFORE - 2 * 976,
      projected_savings_tokens: 2 * 976,
    });
  });

  it('external_nonreducing_plan: a userspace card alone would grow the context', async () => {
    const card: Edit = { op: 'inject_digest', digest: { covers_items: 3, summary: 'what happened' } };
    const outcome = await run({ external: legacy, runLegacyCommand: async () => [card] });
    expect(outcome).toMatchObject({ status: 'no_plan', reason_code: 'external_nonreducing_plan' });
    if (outcome.status !== 'no_plan') throw new Error('expected no plan');
    expect(outcome.projected_context_tokens_after).toBeGreaterThan(BEFORE);
    expect(outcome.projected_savings_tokens).toBe(0);
  });
});

describe('plan pipeline: plans', () => {
  it('returns a validated plan with the host projection and the kept prefix', async () => {
    const runStrategy = strategyReturning({ edits: [elide(STALE)], rationale: 'eliding 32 stale outputs', context_tokens_after: 1 });
    const outcome = await run({ runStrategy });
    if (outcome.status !== 'plan') throw new Error(`expected a plan, got ${outcome.reason_code}`);
    expect(outcome.plan).toEqual({
      strategy: 'elide',
      rationale: 'eliding 32 stale outputs',
      edits: [elide(STALE)],
      context_tokens_before: BEFORE,
      context_tokens_after: BEFORE - 32 * 976,
    });
    expect(outcome.est_savings_tokens).toBe(32 * 976);
    expect(outcome.prefix_tokens).toBe(50 + 20);
    expect(outcome.proposal_source).toBe('strategy');
    expect(outcome.session?.session_id).toBe('sess-1');
  });

  it('hands the strategy the items, usage, effective policy, context and liveness', async () => {
    const runStrategy = strategyReturning({ edits: [elide(STALE)], rationale: 'r' });
    await run({ runStrategy, active: true, policy: { quota_pressure: 'high' } });
    const [strategyId, params] = runStrategy.mock.calls[0] as [string, StrategyProposeParams];
    expect(strategyId).toBe('elide');
    expect(params).toMatchObject({ strategy_id: 'elide', context_tokens: BEFORE, active: true, items: ITEMS });
    expect(params.policy.effective_trigger_tokens).toBe(21_000);
  });

  it('credits the strategy a selector chose', async () => {
    const outcome = await run({ policy: { strategy: 'auto' }, runStrategy: strategyReturning({ edits: [elide(STALE)], rationale: 'auto: selected elide', strategy: 'elide' }) });
    expect(outcome.status === 'plan' && outcome.plan.strategy).toBe('elide');
  });

  it('uses reported usage for the context when the provider stands behind it', async () => {
    const outcome = await run({ policy: { trigger_tokens: 100_000 }, usage: { context_state: 'reported', context_tokens: 120_000 } });
    expect(outcome).toMatchObject({ reason_code: 'strategy_returned_no_plan', context_tokens_before: 120_000 });
    const partial = await run({
      policy: { trigger_tokens: 100_000 },
      usage: { context_state: 'reported', context_tokens: 120_000, context_reason: 'missing_component' },
    });
    expect(partial).toMatchObject({ reason_code: 'below_trigger', context_tokens_before: BEFORE });
  });

  it('appends adaptive reasons to the rationale', async () => {
    const lowYield = [
      { context_before: 40_000, est_reclaimed: 1_000 },
      { context_before: 40_000, est_reclaimed: 2_000 },
    ];
    // 40k backs off ×1.5 to 60k, then tightens ×0.8 to 48k (the session is mostly tool output): above the 41k context.
    const below = await run({ policy: { adaptive: true, trigger_tokens: 40_000 }, recent: lowYield });
    expect(below).toMatchObject({ reason_code: 'below_trigger', effective_trigger_tokens: 48_000 });

    const outcome = await run({
      policy: { adaptive: true, trigger_tokens: 20_000, floor_tokens: 15_000 },
      runStrategy: strategyReturning({ edits: [elide(STALE)], rationale: 'eliding' }),
    });
    if (outcome.status !== 'plan') throw new Error('expected a plan');
    expect(outcome.plan.rationale).toBe('eliding | adaptive: trigger_lowered_high_elidable, floor_capped_to_trigger_half');
    expect(outcome.policy.adaptive_reasons).toEqual(['trigger_lowered_high_elidable', 'floor_capped_to_trigger_half']);

    // A selector quotes the plan it chose, suffix included: the reasons are not appended twice.
    const quoted = await run({
      policy: { adaptive: true, trigger_tokens: 20_000, floor_tokens: 15_000, strategy: 'auto' },
      runStrategy: strategyReturning({ edits: [elide(STALE)], rationale: `auto: selected elide; ${outcome.plan.rationale}`, strategy: 'elide' }),
    });
    if (quoted.status !== 'plan') throw new Error('expected a plan');
    expect(quoted.plan.rationale).toBe(`auto: selected elide; ${outcome.plan.rationale}`);
  });

  it('leaves a trigger and floor given as flags to adaptive tuning as they are', async () => {
    const runStrategy = strategyReturning({ edits: [elide(STALE)], rationale: 'eliding' });
    // Configured, a 50k trigger tightens to 40k (the session is mostly tool output) and the ~41k context plans;
    // given as --trigger it stays 50k, above the context: this run, that number.
    const tuned = await run({ policy: { adaptive: true, trigger_tokens: 50_000 }, runStrategy });
    expect(tuned).toMatchObject({ status: 'plan', effective_trigger_tokens: 40_000 });
    const given = await run({ policy: { adaptive: true, trigger_tokens: 50_000 }, flags: ['trigger_tokens'], runStrategy });
    expect(given).toMatchObject({ status: 'no_plan', reason_code: 'below_trigger', effective_trigger_tokens: 50_000 });
    // A floor given alone stays too; the trigger still adapts, and rises to twice that floor.
    const floor = await run({ policy: { adaptive: true, trigger_tokens: 30_000, floor_tokens: 14_000 }, flags: ['floor_tokens'], runStrategy });
    expect(floor).toMatchObject({ status: 'plan', target_context_tokens: 14_000, effective_trigger_tokens: 28_000, policy: { adaptive_reasons: ['trigger_lowered_high_elidable'] } });
    const both = await run({ policy: { adaptive: true, trigger_tokens: 30_000, floor_tokens: 20_000 }, flags: ['trigger_tokens', 'floor_tokens'], runStrategy });
    expect(both).toMatchObject({ status: 'plan', effective_trigger_tokens: 30_000, target_context_tokens: 20_000, policy: { adaptive_reasons: [] } });
  });

  it('keeps an overlong rationale within the plan schema', async () => {
    const outcome = await run({ runStrategy: strategyReturning({ edits: [elide(STALE)], rationale: 'r'.repeat(5_000) }) });
    if (outcome.status !== 'plan') throw new Error('expected a plan');
    expect(outcome.plan.rationale.length).toBe(4096);
    expect(outcome.plan.rationale.endsWith('…')).toBe(true);
  });

  it('names a legacy command plan preset:<strategy> with the userspace rationale', async () => {
    const runLegacyCommand = vi.fn<LegacyCommandRunner>(async () => [elide(STALE)]);
    const outcome = await run({ external: legacy, runLegacyCommand, policy: { strategy: 'custom' } });
    if (outcome.status !== 'plan') throw new Error('expected a plan');
    expect(outcome.plan.strategy).toBe('preset:custom');
    expect(outcome.plan.rationale).toBe('validated userspace proposal; savings are projected');
    expect(outcome.proposal_source).toBe('legacy_command');
    const request = runLegacyCommand.mock.calls[0]?.[0];
    expect(request).toMatchObject({ command: 'my-compactor', table: '[presets.custom-script]' });
    expect(Object.keys(request?.input ?? {}).sort()).toEqual(['items', 'provider', 'session_id', 'usage']);
  });

  it('runs a pinned plugin through the strategy runner and names its plan preset:<strategy>', async () => {
    const runStrategy = strategyReturning({ edits: [elide(STALE)], rationale: 'mine' });
    const pinned: ExternalProposer = { kind: 'plugin', manifest: '/opt/bundle/gobstopper-plugin.json', trusted_sha256: 'b'.repeat(64), table: '[policy]' };
    const outcome = await run({ external: pinned, runStrategy, policy: { strategy: 'mine' } });
    expect(runStrategy.mock.calls[0]?.[2]).toEqual({ plugin: { manifest: '/opt/bundle/gobstopper-plugin.json', trusted_sha256: 'b'.repeat(64) } });
    expect(outcome.status === 'plan' && outcome.plan.strategy).toBe('preset:mine');
  });
});

describe('plan pipeline: errors are errors, not no-plan', () => {
  it('refuses a plan that touches the protected tail', async () => {
    const newest = resultLines(ITEMS).at(-1) as number;
    const why = `line ${newest + 1} is in the protected tail: keep_recent_tool_outputs = 8 keeps the newest 8 tool outputs`;
    await expect(run({ runStrategy: strategyReturning({ edits: [elide([newest])], rationale: 'x', plugin_id: 'strategies-core' }) })).rejects.toMatchObject({
      code: 'protected_or_non_elidable',
      message: `edit targets protected or non-elidable content: ${why}`,
      // The rule's exact text and why, and in the details where it broke and whose proposal it was,
      // with the bundle named as a plugin's own errors name it.
      details: { rule: 'protected_or_non_elidable', why, edit_index: 0, line_index: newest, proposer: 'strategy elide', plugin_id: 'strategies-core' },
    });
  });

  it('names no plugin for a legacy command whose plan is refused', async () => {
    const error: unknown = await run({ external: legacy, runLegacyCommand: async () => [elide([99_999])] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unknown_edit_index', details: { proposer: 'command of [presets.custom-script]' } });
    expect((error as { details: Record<string, unknown> }).details).not.toHaveProperty('plugin_id');
  });

  it('refuses a strategy plan that grows the context', async () => {
    const card: Edit = { op: 'inject_digest', digest: { covers_items: 2, summary: 'x' } };
    await expect(run({ runStrategy: strategyReturning({ edits: [card], rationale: 'x' }) })).rejects.toMatchObject({ code: 'plan_grows_context' });
  });

  it('refuses provider controls from userspace proposals', async () => {
    await expect(run({ external: legacy, runLegacyCommand: async () => [{ op: 'provider_compact', control: '/compact' }] })).rejects.toMatchObject({
      code: 'external_control_edit',
    });
  });

  it('refuses an out-of-bounds policy', async () => {
    await expect(run({ policy: { floor_tokens: 40_000 } })).rejects.toMatchObject({ code: 'invalid_policy' });
  });

  it('passes strategy failures through', async () => {
    const failing: StrategyRunner = async () => {
      throw new Error("unknown strategy 'nope'");
    };
    await expect(run({ runStrategy: failing })).rejects.toThrow("unknown strategy 'nope'");
  });
});

describe('plan pipeline: provider controls', () => {
  it('accepts a live-session provider compaction and lands it at the floor', async () => {
    const outcome = await run({ active: true, runStrategy: strategyReturning({ edits: [{ op: 'provider_compact', control: 'codex app-server: thread/compact/start' }], rationale: 'live' }) });
    if (outcome.status !== 'plan') throw new Error('expected a plan');
    expect(outcome.plan.context_tokens_after).toBe(5_000);
    expect(outcome.prefix_tokens).toBe(BEFORE);
    expect(outcome.active).toBe(true);
  });
});
