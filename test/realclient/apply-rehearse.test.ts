/**
 * `apply --rehearse` as a user runs it, with the real clients offline: the candidate is resumed
 * before anything is published, and the answer says what the client did with it.
 */
import { describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome } from '../helpers/demo-home.js';

const claudeBin = process.env.GOBSTOPPER_CLAUDE_BIN || undefined;
const codexBin = process.env.GOBSTOPPER_CODEX_BIN || undefined;
if (!claudeBin || !codexBin) console.log('apply --rehearse real-client tests skipped: set GOBSTOPPER_CLAUDE_BIN and GOBSTOPPER_CODEX_BIN (.ci/install-real-clients)');

describe.skipIf(!claudeBin || !codexBin)('apply --rehearse reports what the real client did', () => {
  it.each([
    ['claude_code', DEMO_CLAUDE_ID],
    ['codex', DEMO_CODEX_ID],
  ])('%s: the rehearsal that passed is in the JSON, and a repeat says it rehearsed nothing', { timeout: 180_000 }, async (_provider, id) => {
    const home = demoHome();
    try {
      const env = { ...home.env, GOBSTOPPER_CLAUDE_BIN: claudeBin!, GOBSTOPPER_CODEX_BIN: codexBin! };
      const { code, json } = await runJson(['apply', id, '--rehearse'], env);
      expect(code, JSON.stringify(json)).toBe(0);
      expect(json.status).toBe('applied');
      expect(json.rehearsal).toMatchObject({ status: 'passed', ok: true, session_matches: true, resumed_session_id: json.receipt.output_session_id });
      // The same apply again returns the fork; this run rehearsed nothing and says so.
      const again = await runCli(['apply', id, '--rehearse'], env);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('was not rehearsed now');
    } finally {
      home.cleanup();
    }
  });

  it('a first apply --rehearse says on the screen that the client resumed the candidate', { timeout: 180_000 }, async () => {
    const home = demoHome();
    try {
      const env = { ...home.env, GOBSTOPPER_CLAUDE_BIN: claudeBin!, GOBSTOPPER_CODEX_BIN: codexBin! };
      const human = await runCli(['apply', DEMO_CLAUDE_ID, '--rehearse'], env);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(/^rehearsed before publishing: .+$/m);
    } finally {
      home.cleanup();
    }
  });
});
