/**
 * `bench` when things fail, as a user runs it: the built CLI over the demo sessions with example
 * plugins installed. A configuration eval refuses fails the bench once, up front; a bench that
 * measured no session exits 1 with its report; a failed strategy row is no "under the trigger"
 * bench and is named in the HTML report; a pinned plugin's row says which bundle it measured.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchCommandResult } from '../../schemas/generated/types.js';
import { validateBenchCommandResult } from '../../schemas/generated/validators.js';
import { BENCH_CSV_COLUMNS } from '../../kernel/eval/bench-csv.js';
import { requireBuilt } from '../helpers/cli.js';
import { demoHome, DEMO_CLAUDE_ID, DEMO_CODEX_ID, sha256File } from '../helpers/demo-home.js';
import type { TempHome } from '../helpers/temp-home.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const bin = join(repoRoot, 'bin', 'run.js');
const plugins = join(repoRoot, 'examples', 'plugins');
const UNDER_TRIGGER = 'every session is under the trigger';

let home: TempHome;
let work: string;

function gob(args: string[], extraEnv: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: work, env: { PATH: process.env.PATH ?? '', ...home.env, ...extraEnv }, encoding: 'utf8', timeout: 300_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A --json run: stdout must be exactly one JSON object, whatever the exit status. */
function json<T = Record<string, any>>(args: string[], extraEnv: Record<string, string> = {}) {
  const result = gob([...args, '--json'], extraEnv);
  expect(result.stdout.trim().split('\n').filter((l) => l.startsWith('{')), result.stderr).toHaveLength(1);
  return { ...result, body: JSON.parse(result.stdout) as T };
}

describe('bench failures (built CLI)', () => {
  requireBuilt('dist/kernel/services/bench-job.js');
  beforeAll(() => {
    home = demoHome();
    work = mkdtempSync(join(tmpdir(), 'gob-e2e-bench-fail-'));
    for (const dir of ['keep-last-jq', 'keep-last-python']) expect(gob(['plugin', 'add', join(plugins, dir)]).status).toBe(0);
  });
  afterAll(() => {
    home?.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('a strategy_params error fails once, up front, with the code and exit status eval gives, and writes nothing', () => {
    const bad = join(work, 'bad.toml');
    writeFileSync(bad, '[policy]\nstrategy = "keep_last_jq"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy_params = { keep_last = "x" }\n');
    const evaluated = json(['eval', DEMO_CLAUDE_ID.slice(0, 4), '--config', bad, '--strategy', 'elide']);
    expect(evaluated.status).toBe(1);
    expect(evaluated.body.error.code).toBe('invalid_strategy_params');

    const csv = join(work, 'bad.csv');
    const html = join(work, 'bad.html');
    const benched = json(['bench', '--config', bad, '--strategy', 'elide', '--output', csv, '--html', html]);
    expect(benched.status).toBe(1);
    expect(benched.body).toEqual({ ok: false, error: evaluated.body.error });
    expect(existsSync(csv)).toBe(false);
    expect(existsSync(html)).toBe(false);

    // For people: one line on stderr, no per-session table.
    const human = gob(['bench', '--config', bad, '--strategy', 'elide']);
    expect(human.status).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toBe(`gobstopper: ${evaluated.body.error.message}\n`);
  });

  it("a session's own table that breaks the policy fails its row with the code eval gives for that session", () => {
    const tables = join(work, 'session-table.toml');
    writeFileSync(tables, `[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n[sessions."${DEMO_CLAUDE_ID}"]\nfloor_tokens = 30000\n`);
    const evaluated = json(['eval', DEMO_CLAUDE_ID, '--config', tables, '--strategy', 'elide']);
    expect(evaluated.status).toBe(1);
    const benched = json<BenchCommandResult>(['bench', '--config', tables, '--strategy', 'elide']);
    expect(benched.status).toBe(0);
    expect(benched.body.rows.find((r) => r.session === DEMO_CLAUDE_ID)).toMatchObject({
      strategy: null,
      failure: 'policy_resolution_failed',
      error_code: evaluated.body.error.code,
      error: evaluated.body.error.message,
    });
    expect(evaluated.body.error.code).toBe('invalid_policy');
  });

  it('exits 1 when no session could be measured, still printing one JSON object and writing the report; 0 when one was', () => {
    const csv = join(work, 'none.csv');
    const none = json<BenchCommandResult>(['bench', '--strategy', 'elide', '--output', csv], { GOBSTOPPER_MAX_RECORDS: '1' });
    expect(none.status).toBe(1);
    expect(validateBenchCommandResult(none.body), JSON.stringify(validateBenchCommandResult.errors)).toBe(true);
    expect(none.body).toMatchObject({ sessions: 2, sessions_measured: 0, sessions_failed: 2, output_path: csv });
    expect(none.body.rows.map((r) => r.failure)).toEqual(['session_evaluation_failed', 'session_evaluation_failed']);
    expect(readFileSync(csv, 'utf8').trim().split('\n')).toHaveLength(3);

    const human = gob(['bench', '--strategy', 'elide'], { GOBSTOPPER_MAX_RECORDS: '1' });
    expect(human.status).toBe(1);
    // Both sessions failed whole: no strategy to sum up, so no aggregate header over nothing.
    expect(human.stdout).not.toMatch(/^strategy\s+sessions/m);
    expect(human.stdout).toMatch(/2 session\(s\) (from the last 7 days|of every age|updated since [0-9: -]+ UTC), 2 could not be measured/);

    // The Claude session (196 records) fails, the Codex one (87) is measured: the bench succeeds.
    const some = json<BenchCommandResult>(['bench', '--strategy', 'elide'], { GOBSTOPPER_MAX_RECORDS: '100' });
    expect(some.status).toBe(0);
    expect(some.body).toMatchObject({ sessions: 2, sessions_measured: 1, sessions_failed: 1 });

    expect(gob(['bench', '--help']).stdout.replace(/\s+/g, ' ')).toContain('1 when sessions were found but not one could be measured');
  });

  describe('with a damaged installed plugin', () => {
    beforeAll(() => appendFileSync(join(home.dataHome, 'gobstopper', 'plugins', 'keep-last-jq', '0.1.0', 'main.sh'), '# edited\n'));

    it('does not blame the trigger when a row failed, and the report says which strategy failed where and why', () => {
      const html = join(work, 'damaged.html');
      const args = ['bench', '--strategy', 'keep_last_jq', '--trigger', '43000', '--floor', '8000'];
      const { body } = json<BenchCommandResult>(args);
      // Claude (46k) fails on the damaged copy; Codex (40k) is under the trigger.
      const failed = body.rows.find((r) => r.failure !== null)!;
      expect(failed).toMatchObject({ session: DEMO_CLAUDE_ID, strategy: 'keep_last_jq', failure: 'strategy_evaluation_failed', error_code: 'file_hash_mismatch' });
      expect(body.rows.find((r) => r.session === DEMO_CODEX_ID)).toMatchObject({ status: 'no_plan', reason_code: 'below_trigger' });

      const run = gob([...args, '--html', html]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).not.toContain(UNDER_TRIGGER);
      const report = readFileSync(html, 'utf8');
      const section = report.slice(report.indexOf('<h2>Strategies that failed</h2>'));
      expect(report).toContain('<h2>Strategies that failed</h2>');
      expect(section).toContain(`<td>claude_code</td><td>${DEMO_CLAUDE_ID}</td><td>keep_last_jq</td><td>file_hash_mismatch</td><td class="reasons">`);
      expect(section).toContain('main.sh does not match the sha256 pinned in the manifest');

      // Nothing failed and nothing fired: then the hint is the answer.
      expect(gob(['bench', '--strategy', 'elide', '--trigger', '9000000', '--floor', '0']).stdout).toContain(UNDER_TRIGGER);
    });

    it('exits 1 when the only strategy failed on every session: each was read, none was measured', () => {
      // Both demo sessions are over the configured 20,000-token trigger, so both ask the damaged copy.
      const all = json<BenchCommandResult>(['bench', '--strategy', 'keep_last_jq']);
      expect(all.body.rows.map((r) => [r.strategy, r.failure])).toEqual([
        ['keep_last_jq', 'strategy_evaluation_failed'],
        ['keep_last_jq', 'strategy_evaluation_failed'],
      ]);
      expect(all.status).toBe(1);
      // Each session was read, so none failed whole, and not one was measured.
      expect(all.body).toMatchObject({ sessions: 2, sessions_measured: 0, sessions_failed: 0 });
      const human = gob(['bench', '--strategy', 'keep_last_jq', '--html', join(work, 'all-failed.html')]);
      expect(human.status).toBe(1);
      // The summary and the report say what the exit status says: not one session was measured.
      expect(human.stdout).toMatch(/2 session\(s\) (from the last 7 days|of every age|updated since [0-9: -]+ UTC), 2 could not be measured/);
      const stats = readFileSync(join(work, 'all-failed.html'), 'utf8');
      expect(stats).toContain('<b>0</b><span>sessions measured</span>');
      expect(stats).toContain('<b>2</b><span>sessions failed</span>');
      // One strategy measured beside it is a measured session: the failed rows cost only themselves.
      const beside = json<BenchCommandResult>(['bench', '--strategy', 'keep_last_jq', '--strategy', 'elide']);
      expect(beside.status).toBe(0);
      expect(beside.body.sessions_measured).toBe(2);
    });
  });

  it("a pinned plugin's row shows the bundle it measured, as eval does: table, --json and CSV", () => {
    const manifest = join(plugins, 'keep-last-python', 'gobstopper-plugin.json');
    const pin = join(work, 'pin.toml');
    writeFileSync(pin, `[policy]\nstrategy = "keep_last_py"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${sha256File(manifest)}" }\n`);
    const label = 'keep_last_py→preset:keep_last_py';
    expect(gob(['eval', DEMO_CLAUDE_ID.slice(0, 4), '--config', pin, '--strategy', 'keep_last_py']).stdout).toContain(label);

    const csv = join(work, 'pin.csv');
    const table = gob(['bench', '--config', pin, '--strategy', 'keep_last_py', '--strategy', 'elide', '--output', csv]);
    expect(table.status, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    for (const id of [DEMO_CODEX_ID, DEMO_CLAUDE_ID]) {
      expect(lines.find((l) => l.includes(id.slice(0, 12)) && l.includes('keep_last_py'))).toContain(label);
      // An installed strategy's own row keeps its bare id.
      expect(lines.find((l) => l.includes(id.slice(0, 12)) && /\belide\b/.test(l))).not.toContain('→');
    }

    const { body } = json<BenchCommandResult>(['bench', '--config', pin, '--strategy', 'keep_last_py', '--strategy', 'elide']);
    expect(validateBenchCommandResult(body)).toBe(true);
    expect(body.rows.map((r) => `${r.strategy}:${r.credited_strategy}`)).toEqual(['keep_last_py:preset:keep_last_py', 'elide:null', 'keep_last_py:preset:keep_last_py', 'elide:null']);

    const rows = readFileSync(csv, 'utf8').trim().split('\n').map((l) => l.split(','));
    const col = BENCH_CSV_COLUMNS.indexOf('credited_strategy');
    expect(rows[0]![col]).toBe('credited_strategy');
    expect(rows.slice(1).map((r) => r[col])).toEqual(['preset:keep_last_py', '', 'preset:keep_last_py', '']);
  });
});
