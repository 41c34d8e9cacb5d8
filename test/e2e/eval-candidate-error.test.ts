/**
 * A strategy whose plan is valid but whose rewritten copy fails a check gets an error row; the row's
 * message names the session the copy was made from, not the private copy, which is gone by then.
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
  it('names the session the rewritten copy was made from', async () => {
    // The demo rollout has exactly 60 records; the state card middle adds makes its copy 61.
    const { code, json } = await runJson(['eval', DEMO_CODEX_ID, '--strategy', 'middle'], home.env, { extraEnv: { GOBSTOPPER_MAX_RECORDS: '60' } });
    // Its only strategy failed: the row is still reported, and the status says so.
    expect(code).toBe(1);
    const row = json.rows[0];
    expect(row).toMatchObject({ strategy: 'middle', status: 'error', error_code: 'transcript_too_large' });
    expect(row.error).toBe(`the rewritten copy of ${home.codexSession} has more than 60 records`);
  });
});
