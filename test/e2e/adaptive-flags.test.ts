/**
 * Adaptive tuning as a user meets it, through the built CLI on the demo Claude session (a 200,000-token
 * window, mostly tool output: a 250,000 trigger tunes to 40,000 and the 40,000 floor to 20,000).
 * A number the user gives (a flag, or a pasted `tune` snippet) is the number plans use.
 */
import { appendFileSync, chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateExplainCommandResult, validateTuneCommandResult } from '../../schemas/generated/validators.js';
import { eventsLogPath } from '../../kernel/paths.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

const ADAPTIVE = '[policy]\nstrategy = "compacted"\ntrigger_tokens = 250000\nfloor_tokens = 40000\nadaptive = true\n';

let home: ReturnType<typeof demoHome>;
let config: string;
beforeAll(() => {
  home = demoHome(ADAPTIVE);
  config = join(home.configHome, 'gobstopper', 'config.toml');
});
afterAll(() => home.cleanup());

describe('adaptive tuning and the numbers a user gives', () => {
  it("pasting tune's snippet pins the values it showed: plan uses them and tune no longer moves them", async () => {
    writeFileSync(config, ADAPTIVE);
    const tuned = await runJson(['tune', '7d3f'], home.env);
    expect(tuned.json).toMatchObject({ adaptive_enabled: true, adjusted: { trigger_tokens: 40_000, floor_tokens: 20_000 } });
    expect(tuned.json.suggested_toml).toBe(`[sessions."${DEMO_CLAUDE_ID}"]\ntrigger_tokens = 40000\nfloor_tokens = 20000\nadaptive = false`);
    // Pasted under the config as the human output offers it.
    const human = await runCli(['tune', '7d3f'], home.env);
    expect(human.stdout.trimEnd().endsWith(`to pin it:\n${tuned.json.suggested_toml}`)).toBe(true);
    appendFileSync(config, `${tuned.json.suggested_toml}\n`);

    const plan = await runJson(['plan', '7d3f'], home.env);
    expect(plan.json).toMatchObject({ status: 'plan', policy: { trigger_tokens: 40_000, floor_tokens: 20_000, adaptive: false, adaptive_reasons: [] } });
    const again = await runJson(['tune', '7d3f'], home.env);
    expect(validateTuneCommandResult(again.json)).toBe(true);
    expect(again.json).toMatchObject({ adaptive_enabled: false, configured: { trigger_tokens: 40_000, floor_tokens: 20_000 } });
    // What adaptive would do now is a preview, and the line says plans do not use it.
    const line = (await runCli(['tune', '7d3f'], home.env)).stdout.split('\n')[2];
    expect(line).toMatch(/^adaptive {3}trigger 32,000, floor 16,000 \(effective trigger 32,000; adaptive is off, so plans use the configured values\)$/);
    // The table is there now: the next snippet says to edit it, since a second one breaks the file.
    expect(again.json.suggested_toml.split('\n')[0]).toBe(`# ${config} already has a [sessions."${DEMO_CLAUDE_ID}"] table: set these keys in it rather than adding a second one`);
  });

  it('a --trigger or --floor is used as given by plan, apply, eval and tune, and adaptive tunes only the rest', async () => {
    writeFileSync(config, ADAPTIVE);
    // Tuned, the trigger would be 40,000 and the 45,513-token session would plan.
    const plan = await runJson(['plan', '7d3f', '--trigger', '100000', '--floor', '5000'], home.env);
    expect(plan.json).toMatchObject({ status: 'no_plan', reason_code: 'below_trigger', effective_trigger_tokens: 100_000, target_context_tokens: 5_000 });
    const human = await runCli(['plan', '7d3f', '--trigger', '100000', '--floor', '5000'], home.env);
    expect(human.stdout).toContain('nothing to do: context ~45,513 tokens is under the trigger 100,000');
    const apply = await runJson(['apply', '7d3f', '--trigger', '100000'], home.env);
    expect(apply.json).toMatchObject({ status: 'no_plan', outcome: { reason_code: 'below_trigger', effective_trigger_tokens: 100_000 } });

    // Tuned, 30,000 would tighten to 24,000.
    const evaluated = await runJson(['eval', '7d3f', '--strategy', 'compacted', '--trigger', '30000', '--floor', '5000'], home.env);
    expect(evaluated.json).toMatchObject({ effective_trigger_tokens: 30_000, floor_tokens: 5_000 });
    const planned = await runJson(['plan', '7d3f', '--trigger', '30000', '--floor', '5000'], home.env);
    expect(planned.json).toMatchObject({ status: 'plan', effective_trigger_tokens: 30_000, target_context_tokens: 5_000 });

    // A floor alone stays; the trigger still adapts (250,000 → 40,000) and rises to twice that floor.
    const floor = await runJson(['tune', '7d3f', '--floor', '30000'], home.env);
    expect(floor.json).toMatchObject({ adjusted: { trigger_tokens: 60_000, floor_tokens: 30_000 } });
    expect(floor.json.explanation[0]).toBe('floor 30,000 is given with --floor for this run, so adaptive leaves it as it is');
    const floorPlan = await runJson(['plan', '7d3f', '--floor', '30000'], home.env);
    expect(floorPlan.json).toMatchObject({ effective_trigger_tokens: 60_000, target_context_tokens: 30_000 });

    const tuned = await runJson(['tune', '7d3f', '--trigger', '100000'], home.env);
    expect(tuned.json).toMatchObject({ adjusted: { trigger_tokens: 100_000, floor_tokens: 40_000 }, reasons: [], suggested_toml: null });
    const help = (await runCli(['plan', '--help'], home.env)).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('Compact when the context reaches this many tokens (this run only; adaptive tuning keeps it).');
  });

  it('tune and explain say so when the events log cannot be read, rather than judge past yields they never saw', async () => {
    writeFileSync(config, ADAPTIVE);
    const log = eventsLogPath(home.env);
    mkdirSync(join(log, '..'), { recursive: true, mode: 0o700 });
    // Two compactions that each reclaimed 1% of their context: readable, they back the trigger off.
    const lowYield = { schema: 'gobstopper/compaction-events-v1', ts: 1_700_000_000, provider: 'claude_code', session_id: DEMO_CLAUDE_ID, strategy: 'compacted', action: 'transcript_compact', outcome: 'applied', trigger_tokens: 40_000, context_tokens_before: 100_000, context_tokens_after: 99_000, est_reclaimed_tokens: 1_000, items_covered: 2, duration_ms: 10, error_code: null };
    writeFileSync(log, `${JSON.stringify(lowYield)}\n${JSON.stringify({ ...lowYield, ts: 1_700_000_100 })}\n`, { mode: 0o600 });
    try {
      const counted = await runJson(['tune', '7d3f'], home.env);
      expect(counted.json.reasons).toContain('trigger_raised_low_yield');
      expect(counted.stderr).toBe('');
      chmodSync(log, 0o644);
      for (const args of [['tune', '7d3f'], ['explain', '7d3f']]) {
        const run = await runCli(args, home.env);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toBe(`warning: the compactions in the events log are not counted: cannot read ${log}: has mode 0644, readable by others; run chmod 600 ${log} (or chmod -R go-rwx on gobstopper's data directory to fix every file at once)\n`);
      }
      const unread = `the compactions in the events log are not counted: cannot read ${log}: has mode 0644, readable by others; run chmod 600 ${log} (or chmod -R go-rwx on gobstopper's data directory to fix every file at once)`;
      // A script reads recent_applied 0 beside the reason it is 0, as a person reads it on stderr.
      const tunedJson = (await runJson(['tune', '7d3f'], home.env)).json;
      expect(tunedJson).toMatchObject({ recent_applied: 0, warnings: [unread] });
      expect(tunedJson.reasons).not.toContain('trigger_raised_low_yield');
      const explainedJson = (await runJson(['explain', '7d3f'], home.env)).json;
      expect(explainedJson.warnings).toContainEqual({ code: 'events_log_unreadable', message: unread });
      expect(validateTuneCommandResult(tunedJson) && validateExplainCommandResult(explainedJson)).toBe(true);
    } finally {
      rmSync(log);
    }
  });

  it('on an 80-column terminal tune wraps its adaptive line under its numbers and prints the snippet to paste whole', async () => {
    writeFileSync(config, ADAPTIVE.replace('adaptive = true', 'adaptive = false'));
    const piped = (await runCli(['tune', '7d3f'], home.env)).stdout;
    const narrow = await runCli(['tune', '7d3f'], home.env, { extraEnv: { COLUMNS: '80' } });
    expect(narrow.code, narrow.stderr).toBe(0);
    const lines = narrow.stdout.trimEnd().split('\n');
    // The configured and adaptive numbers start in one column, on the terminal and in a pipe alike.
    expect(lines[1]).toBe('configured trigger 250,000, floor 40,000');
    expect(lines[2]!.indexOf('trigger')).toBe(lines[1]!.indexOf('trigger'));
    expect(piped.split('\n')[2]!.indexOf('trigger')).toBe(lines[1]!.indexOf('trigger'));
    expect(lines[3]).toBe(`${' '.repeat(lines[1]!.indexOf('trigger'))}off, so plans use the configured values)`);
    const snippet = (await runJson(['tune', '7d3f'], home.env)).json.suggested_toml as string;
    expect(narrow.stdout.trimEnd().endsWith(`to pin it:\n${snippet}`)).toBe(true);
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(narrow.stdout.replace(/\s+/g, ' ')).toBe(piped.replace(/\s+/g, ' '));
  });
});
