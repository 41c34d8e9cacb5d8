/**
 * A policy naming a scorer no bundle serves: plan refuses it before any work; eval, which runs
 * every strategy whatever the policy's scorer, fails only the rows that ask for scores, in plan's words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome>;
beforeAll(() => {
  home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nscorer = "heuristc"\n');
});
afterAll(() => home.cleanup());

describe('a scorer nobody serves', () => {
  it('is named the same way by plan and by the eval row that asks for scores', async () => {
    const planned = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'scored'], home.env);
    expect(planned.code).toBe(1);
    const said = planned.json.error.message as string;
    expect(said).toMatch(/^unknown scorer 'heuristc' \(did you mean heuristic\?\); known: heuristic \(set by scorer: \[policy\] in .*config\.toml\)$/);

    const { code, json } = await runJson(['eval', DEMO_CLAUDE_ID, '--strategy', 'scored', '--strategy', 'elide'], home.env);
    expect(code).toBe(0);
    const byStrategy = Object.fromEntries(json.rows.map((r: { strategy: string }) => [r.strategy, r]));
    expect(byStrategy.scored).toMatchObject({ status: 'error', error_code: 'unknown_scorer' });
    expect(byStrategy.scored.error).toContain(said);
    expect(byStrategy.elide).toMatchObject({ status: 'plan' });
  });
});
