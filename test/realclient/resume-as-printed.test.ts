/**
 * The resume commands `apply` and `undo` print, run as printed with the real clients offline: the
 * client resumes the fork the command names and sends the compacted context (the state card, the
 * elision stubs), not the text that was elided. A fork compacted a second time resumes too, and an
 * undo brings the elided text back. The Codex rollout holds a compaction of the client's own, so its
 * forks keep a `compacted` record whose replacement history the client must still send.
 */
import { readFileSync, utimesSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_ELIDED_DETAIL, demoHome } from '../helpers/demo-home.js';
import { filler, item, RolloutBuilder } from '../fixtures/codex/rollout-builder.js';
import { resumedId, runPrinted } from './printed-resume.js';

const claudeBin = process.env.GOBSTOPPER_CLAUDE_BIN || undefined;
const codexBin = process.env.GOBSTOPPER_CODEX_BIN || undefined;
if (!claudeBin || !codexBin) console.log('printed-resume real-client tests skipped: set GOBSTOPPER_CLAUDE_BIN and GOBSTOPPER_CODEX_BIN (.ci/install-real-clients)');

const STATE_CARD = '[gobstopper state card]';
const SUMMARY = 'SUMMARY-OF-THE-EARLIER-TURNS';
/** An hour old: idle, as a session is when nobody has touched it for a while. */
function ageFile(path: string): void {
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(path, hourAgo, hourAgo);
}
const count = (text: string, needle: string) => text.split(needle).length - 1;
/** How a text appears inside the JSON of a request body. */
const asJson = (text: string) => JSON.stringify(text).slice(1, -1);

/**
 * `undo <session>`, then its printed resume command: the client resumes the restored copy, which
 * holds `detail` again and no state card.
 */
async function expectUndoRestores(session: string, detail: string, env: Record<string, string>, bins: Parameters<typeof runPrinted>[2], withPath = false): Promise<void> {
  const undone = await runJson(['undo', session], env);
  expect(undone.code, undone.stderr).toBe(0);
  const restored = await runPrinted(undone.json.receipt.resume_command, env, bins, ...(withPath ? [undone.json.receipt.path] : []));
  expect(restored.exitCode, restored.stderr).toBe(0);
  expect(resumedId(restored)).toBe(undone.json.receipt.output_session_id);
  expect(restored.body).toContain(asJson(detail));
  expect(restored.body).not.toContain(STATE_CARD);
}

describe.skipIf(!claudeBin || !codexBin)('a resume command as printed', () => {
  it('claude_code: apply, apply again on the fork, then undo: each printed command resumes what it names', { timeout: 300_000 }, async () => {
    const home = demoHome();
    try {
      const bins = { claude: claudeBin!, codex: codexBin! };
      // A first pass that stops early leaves outputs for a second one; the detail goes in the first.
      const first = await runJson(['apply', DEMO_CLAUDE_ID, '--trigger', '40000', '--floor', '35000'], home.env);
      expect(first.code, JSON.stringify(first.json)).toBe(0);
      expect(readFileSync(first.json.receipt.path, 'utf8')).not.toContain(asJson(DEMO_ELIDED_DETAIL));
      const once = await runPrinted(first.json.receipt.resume_command, home.env, bins);
      expect(once.exitCode, once.stderr).toBe(0);
      expect(resumedId(once)).toBe(first.json.receipt.output_session_id);
      expect(count(once.body!, STATE_CARD)).toBe(1);
      expect(once.body).toMatch(/elided by gobstopper/);
      expect(once.body).not.toContain(asJson(DEMO_ELIDED_DETAIL));

      // Some time later, with the resumed fork idle again, it is compacted a second time.
      ageFile(first.json.receipt.path);
      const second = await runJson(['apply', first.json.receipt.path], home.env);
      expect(second.code, JSON.stringify(second.json)).toBe(0);
      expect(second.json.status).toBe('applied');
      const twice = await runPrinted(second.json.receipt.resume_command, home.env, bins);
      expect(twice.exitCode, twice.stderr).toBe(0);
      expect(resumedId(twice)).toBe(second.json.receipt.output_session_id);
      expect(count(twice.body!, STATE_CARD)).toBe(2);
      expect(count(twice.body!, 'elided by gobstopper')).toBeGreaterThan(count(once.body!, 'elided by gobstopper'));
      expect(twice.body).not.toContain(asJson(DEMO_ELIDED_DETAIL));

      // The source as it was: the detail is back, and no card.
      await expectUndoRestores(DEMO_CLAUDE_ID, DEMO_ELIDED_DETAIL, home.env, bins);
    } finally {
      home.cleanup();
    }
  });

  it('codex: a fork of a rollout the client compacted, a fork of that fork, then undo: each printed command resumes what it names', { timeout: 300_000 }, async () => {
    const home = demoHome('[policy]\nstrategy = "compacted"\nkeep_recent_tool_outputs = 1\n');
    try {
      const bins = { claude: claudeBin!, codex: codexBin! };
      const b = new RolloutBuilder({ id: '019c0000-0000-7000-8000-000000000991' });
      b.sessionMeta().turnContext().preamble();
      b.user('old step').shell('c_old', 'cat old', filler(6000, 'old output')).assistant('old done');
      b.compacted([item.user('old step'), item.user(`Another language model started to solve this problem. ${SUMMARY}`)]);
      for (let k = 0; k < 8; k++) b.user(`step ${k}`).shell(`call_${k}`, `cat f${k}`, filler(12_000, `f${k} line`)).assistant(`done ${k}`);
      ageFile(b.writeTo(home.codexDir));
      const detail = 'f0 line 17\n';

      // A first pass that stops early leaves outputs for a second one; the oldest goes in the first.
      const first = await runJson(['apply', b.id, '--trigger', '20000', '--floor', '18000'], home.env);
      expect(first.code, JSON.stringify(first.json)).toBe(0);
      expect(first.json.status, JSON.stringify(first.json)).toBe('applied');
      expect(readFileSync(first.json.receipt.path, 'utf8')).toMatch(/"type":"compacted"/);
      const once = await runPrinted(first.json.receipt.resume_command, home.env, bins, first.json.receipt.path);
      expect(once.exitCode, once.stderr).toBe(0);
      expect(resumedId(once)).toBe(first.json.receipt.output_session_id);
      expect(count(once.body!, STATE_CARD)).toBe(1);
      expect(once.body).toMatch(/elided by gobstopper/);
      expect(once.body).not.toContain(asJson(detail));
      // The replacement history is what the client sends of the turns before its own compaction.
      expect(once.body).toContain(SUMMARY);
      expect(once.body).not.toContain('old output');

      ageFile(first.json.receipt.path);
      const second = await runJson(['apply', first.json.receipt.path, '--trigger', '2000', '--floor', '500'], home.env);
      expect(second.code, JSON.stringify(second.json)).toBe(0);
      expect(second.json.status, JSON.stringify(second.json)).toBe('applied');
      const twice = await runPrinted(second.json.receipt.resume_command, home.env, bins, second.json.receipt.path);
      expect(twice.exitCode, twice.stderr).toBe(0);
      expect(resumedId(twice)).toBe(second.json.receipt.output_session_id);
      expect(count(twice.body!, STATE_CARD)).toBe(2);
      expect(count(twice.body!, 'elided by gobstopper')).toBeGreaterThan(count(once.body!, 'elided by gobstopper'));
      expect(twice.body).toContain(SUMMARY);
      expect(twice.body).not.toContain(asJson(detail));

      await expectUndoRestores(b.id, detail, home.env, bins, true);
    } finally {
      home.cleanup();
    }
  });
});
