/**
 * A strategy whose plan is valid but whose rewritten copy breaks a limit the source kept: the copy is
 * rendered and measured, and its verify error is counted as new, so it is never the best rewrite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CODEX_ID, demoHome } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome>;
beforeAll(() => {
  home = demoHome();
});
afterAll(() => home.cleanup());

describe('eval row of a candidate that fails a check', () => {
  it('reports the broken limit as a new verify error of a rendered row, which is not the best', async () => {
    // The demo rollout has exactly 87 records; the state card middle adds makes its copy 88.
    const { code, json } = await runJson(['eval', DEMO_CODEX_ID, '--strategy', 'middle'], home.env, { extraEnv: { GOBSTOPPER_MAX_RECORDS: '87' } });
    expect(code).toBe(0);
    const row = json.rows[0];
    expect(row).toMatchObject({ strategy: 'middle', status: 'plan', execution_state: 'rendered', new_verify_errors: 1, best: false });
    expect(row.findings).toContainEqual(expect.objectContaining({ severity: 'error', code: 'over_record_limit', preexisting: false }));
  });
});
