/**
 * `watch --rehearse` with the real clients offline: a pass publishes each fork only after its client
 * has resumed it, and says what the client did.
 */
import { describe, expect, it } from 'vitest';
import { validateWatchPass } from '../../schemas/generated/validators.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome, sha256File } from '../helpers/demo-home.js';

const claudeBin = process.env.GOBSTOPPER_CLAUDE_BIN || undefined;
const codexBin = process.env.GOBSTOPPER_CODEX_BIN || undefined;
if (!claudeBin || !codexBin) console.log('watch --rehearse real-client tests skipped: set GOBSTOPPER_CLAUDE_BIN and GOBSTOPPER_CODEX_BIN (.ci/install-real-clients)');

describe.skipIf(!claudeBin || !codexBin)('watch --rehearse', () => {
  it('publishes each fork once its client resumed it, and reports the rehearsal with the decision', { timeout: 300_000 }, async () => {
    const home = demoHome();
    try {
      const before = { claude: sha256File(home.claudeSession), codex: sha256File(home.codexSession) };
      // The clients by flag, not by environment: the flags are what a person types.
      const env = { ...home.env, GOBSTOPPER_CLAUDE_BIN: '', GOBSTOPPER_CODEX_BIN: '' };
      const { code, json, stderr } = await runJson(['watch', '--once', '--rehearse', '--claude-bin', claudeBin!, '--codex-bin', codexBin!], env);
      expect(code, stderr).toBe(0);
      expect(validateWatchPass(json)).toBe(true);
      const decided = Object.fromEntries(json.decisions.map((d: any) => [d.session_id, d]));
      for (const id of [DEMO_CLAUDE_ID, DEMO_CODEX_ID]) {
        expect(decided[id], JSON.stringify(decided[id])).toMatchObject({ outcome: 'compacted', reused: false });
        // What the client did, in the rehearsal's words: it took the fork and rebuilt what was predicted.
        expect(decided[id].rehearsal).toMatch(/^accepted; the rebuilt context matches the prediction \(/);
        const verified = await runJson(['verify', decided[id].fork.path], env);
        expect(verified.code).toBe(0);
      }
      expect(sha256File(home.claudeSession)).toBe(before.claude);
      expect(sha256File(home.codexSession)).toBe(before.codex);
      // Settled: the next pass rehearses nothing again.
      const next = await runCli(['watch', '--once', '--rehearse', '--claude-bin', claudeBin!, '--codex-bin', codexBin!], env);
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toMatch(/pass 1: 4 sessions: 2 unchanged, 2 unresumed forks\n$/);
    } finally {
      home.cleanup();
    }
  });
});
