/**
 * `auto` when the savings gate refuses every candidate: the answer names the gate and carries the
 * closest candidate's projection, as each candidate asked directly does, not "the strategy found
 * nothing to do".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTO_CANDIDATES } from '../../plugins/strategies-core/src/auto.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome>;
beforeAll(() => {
  home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nmin_savings_tokens = 99999\n');
});
afterAll(() => home.cleanup());

describe('plan with auto when no candidate clears min_savings_tokens', () => {
  it('reports minimum_savings_not_met with the projection of the candidate that saves the most', async () => {
    const direct = await Promise.all(AUTO_CANDIDATES.map((id) => runJson(['plan', DEMO_CLAUDE_ID, '--strategy', id], home.env)));
    const gated = direct.map((r) => r.json).filter((j) => j.reason_code === 'minimum_savings_not_met');
    expect(gated.length).toBeGreaterThan(0);
    expect(direct.every((r) => r.json.status === 'no_plan')).toBe(true);
    const closest = Math.min(...gated.map((j) => j.projected_context_tokens_after as number));

    const { code, json } = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(code).toBe(0);
    expect(json).toMatchObject({
      status: 'no_plan',
      reason_code: 'minimum_savings_not_met',
      min_savings_tokens: 99999,
      projected_context_tokens_after: closest,
      projected_savings_tokens: json.context_tokens_before - closest,
    });
    const human = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(human.stdout).toContain(`no plan: it would save ${(json.context_tokens_before - closest).toLocaleString('en-US')} tokens, under the minimum of 99,999`);
  });

  it('still answers strategy_returned_no_plan when the gate refused nothing', async () => {
    const { json } = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'agentic'], home.env);
    expect(json).toMatchObject({ status: 'no_plan', reason_code: 'strategy_returned_no_plan', projected_context_tokens_after: null });
  });
});
