import { describe, expect, it } from 'vitest';
import { editLine, noPlanLine, planLines } from '../../../kernel/cli/render/plan-lines.js';
import type { Edit, PlanCommandPlan } from '../../../schemas/generated/types.js';
import { NO_PLAN_REASONS, noPlan, withStrategyRationale } from '../../../kernel/policy/no-plan.js';

const policy = { effective_trigger_tokens: 375_000, floor_tokens: 40_000, min_savings_tokens: 4096 };

describe('the no-plan line people read', () => {
  it('says why adaptive mode moved the trigger it was measured against', () => {
    const outcome = noPlan('below_trigger', { ...policy, adaptive_reasons: ['trigger_raised_low_yield'] }, 310_000);
    expect(noPlanLine(outcome)).toBe('nothing to do: context ~310,000 tokens is under the trigger 375,000 (adaptive: trigger_raised_low_yield)');
    // The JSON keeps its fixed shape.
    expect(Object.keys(outcome)).not.toContain('adaptive_reasons');
  });

  it('says nothing of adaptive mode when it changed nothing', () => {
    for (const reason of NO_PLAN_REASONS) expect(noPlanLine(noPlan(reason, { ...policy, adaptive_reasons: [] }, 310_000, 300_000))).not.toContain('adaptive');
  });
});

describe('the plan people read', () => {
  it("prints a plugin's rationale as one line, its control characters escaped", () => {
    const outcome = {
      status: 'plan',
      plan: { strategy: 'x', context_tokens_before: 1000, context_tokens_after: 500, rationale: 'kept 3\nstrategy fake: context 0 → 0\u001b[2J', edits: [] },
      est_savings_tokens: 500,
      prefix_tokens: 100,
      effective_trigger_tokens: 900,
      target_context_tokens: 400,
    } as unknown as PlanCommandPlan;
    const lines = planLines(outcome);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('why: kept 3\\u000astrategy fake: context 0 → 0\\u001b[2J');
  });

  it('notes a file rewrite that leaves the context over the trigger, and not one that gets under it', () => {
    const plan = (after: number, edits: unknown[] = [{ op: 'elide', line_indexes: [3], stub_template: '[x]' }]) =>
      ({
        status: 'plan',
        plan: { strategy: 'middle', context_tokens_before: 106_061, context_tokens_after: after, rationale: 'r', edits },
        est_savings_tokens: 106_061 - after,
        prefix_tokens: 4_000,
        effective_trigger_tokens: 20_000,
        target_context_tokens: 8_000,
      }) as unknown as PlanCommandPlan;
    expect(planLines(plan(96_120)).at(-1)).toBe(
      'note: this leaves ~96,120 tokens, still over the trigger 20,000; gobstopper eval shows how far each strategy gets',
    );
    expect(planLines(plan(19_000)).join('\n')).not.toContain('still over the trigger');
    // A provider's own compaction is not a projection to hold against the trigger.
    expect(planLines(plan(30_000, [{ op: 'provider_compact', control: '/compact' }])).join('\n')).not.toContain('still over the trigger');
  });

  it('names the trigger a no-plan was measured against, and keeps a selector\'s whole reason', () => {
    const reason = `auto: no candidate produced a valid plan; ${Array.from({ length: 8 }, (_, i) => `strategy_${i}=no_plan(strategy_returned_no_plan)`).join(', ')}`;
    const line = noPlanLine(withStrategyRationale(noPlan('strategy_returned_no_plan', { ...policy, adaptive_reasons: [] }, 410_000), reason));
    expect(line).toContain('exceeds the trigger 375,000');
    expect(line).toContain('strategy_7=no_plan(strategy_returned_no_plan)');
  });

  it("says a provider's own compaction keeps what the client keeps, not a prefix larger than the context after it", () => {
    const plan = (edits: unknown[]) =>
      ({
        status: 'plan',
        plan: { strategy: 'x', context_tokens_before: 106_061, context_tokens_after: 40_000, rationale: 'r', edits },
        est_savings_tokens: 66_061,
        prefix_tokens: 106_061,
        effective_trigger_tokens: 100_000,
        target_context_tokens: 40_000,
      }) as unknown as PlanCommandPlan;
    expect(planLines(plan([{ op: 'provider_compact', control: '/compact' }]))[1]).toBe('cached prefix: whatever the client keeps when it compacts; trigger 100,000, floor 40,000');
    expect(planLines(plan([]))[1]).toBe('cached prefix kept: 106,061 tokens; trigger 100,000, floor 40,000');
  });

  it("claims no saving for a provider's own compaction: the floor is only an estimate, and at 0 none at all", () => {
    const plan = (floor: number, edits: unknown[] = [{ op: 'provider_compact', control: '/compact' }]) =>
      ({
        status: 'plan',
        plan: { strategy: 'sawtooth', context_tokens_before: 58_865, context_tokens_after: floor, rationale: 'r', edits },
        est_savings_tokens: 58_865 - floor,
        prefix_tokens: 58_865,
        effective_trigger_tokens: 20_000,
        target_context_tokens: floor,
      }) as unknown as PlanCommandPlan;
    expect(planLines(plan(0))[0]).toBe('strategy sawtooth: context 58,865 tokens → what the provider keeps when it compacts (no estimate: the floor is 0)');
    expect(planLines(plan(8_000))[0]).toBe('strategy sawtooth: context 58,865 tokens → what the provider keeps when it compacts (estimated at the floor: ~8,000 tokens)');
    for (const floor of [0, 8_000]) expect(planLines(plan(floor))[0]).not.toMatch(/%/);
    // A file rewrite's numbers are the host's projection of its edits, shown as a saving.
    expect(planLines(plan(8_000, []))[0]).toBe('strategy sawtooth: context 58,865 → 8,000 tokens (−50,865, 86%)');
  });
});

describe('edit lines', () => {
  it('count one record, card item or tool result in the singular', () => {
    const card = (covers_items: number) => editLine({ op: 'inject_digest', digest: { covers_items, goal: null, files_touched: [], decisions: [], errors: [], open_tasks: [] } } as unknown as Edit);
    expect(card(1)).toBe('append a state card covering 1 record');
    expect(card(7)).toBe('append a state card covering 7 records');
    expect(editLine({ op: 'elide', line_indexes: [4], stub_template: '[x]' } as Edit)).toBe('elide 1 record (lines 5)');
    expect(editLine({ op: 'cache_edit', tool_use_ids: ['toolu_1'] } as unknown as Edit)).toBe('cache edit: drop 1 tool result at the API layer');
    expect(editLine({ op: 'cache_edit', tool_use_ids: ['toolu_1', 'toolu_2'] } as unknown as Edit)).toBe('cache edit: drop 2 tool results at the API layer');
  });
});
