/**
 * `bench` as a user runs it: the built CLI over a throwaway home holding generated sessions (three
 * idle recent ones, one ten days old), in parallel worker processes, writing CSV, JSON and the HTML
 * report only to new files. A session that vanishes after discovery is measured through the
 * compiled service, since no CLI run can be paused between discovery and measurement.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchCommandResult } from '../../schemas/generated/types.js';
import { validateBenchCommandResult } from '../../schemas/generated/validators.js';
import { BENCH_CSV_COLUMNS } from '../../kernel/eval/bench-csv.js';
import { longOutput } from '../fixtures/claude/session-builder.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { RolloutBuilder } from '../fixtures/codex/rollout-builder.js';
import { requireBuilt } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const bin = join(repoRoot, 'bin', 'run.js');

const SECRET = 'PLANTED-SECRET-4412';
const STRATEGIES = 13;
const LOW = ['--trigger', '1000', '--floor', '0'];
const RECENT = ['019c0000-0000-7000-8000-000000000001', '019c0000-0000-7000-8000-000000000002', '3f0c2a9e-5b1d-4c7e-9a2f-0d6b8e4c1a7f'];
const OLD = '019c0000-0000-7000-8000-0000000000aa';

let home: TempHome;
let work: string;
const paths: Record<string, string> = {};

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

function age(path: string, ms: number): string {
  const t = new Date(Date.now() - ms);
  utimesSync(path, t, t);
  return path;
}

function rollout(id: string, turns: number): string {
  const r = new RolloutBuilder({ id, paginated: true });
  r.sessionMeta().turnContext().preamble();
  r.user('We decided to keep the release notes in docs/releases.md');
  for (let i = 0; i < turns; i++) {
    r.user(`Run step ${i}`);
    r.shell(`call_${i}`, `cat src/file_${i}.ts`, `error: step ${i} failed in /srv/data/shard_${i}.db\n${SECRET}\n${'y'.repeat(4000)}`);
    r.assistant(`Step ${i} is done.`);
  }
  return r.writeTo(join(home.codexHome, 'sessions', '2026', '02', '23'));
}

function claude(id: string): string {
  const b = modernSession({ sessionId: id });
  for (let i = 0; i < 16; i++) {
    b.user(`Step ${i}: run the tests for src/mod_${i}.ts`);
    b.tools([{ name: 'Bash', input: { command: `npm test -- mod_${i}` }, output: `error: test failed in src/mod_${i}.ts\n${SECRET}\n` + longOutput(`out${i}`, 120) }]);
    b.text(`Fixed mod_${i}.`);
  }
  b.lastPrompt(b.cursor, 'last');
  const dir = join(home.claudeHome, 'projects', '-home-dev-projects-demo');
  mkdirSync(dir, { recursive: true });
  return b.write(join(dir, `${id}.jsonl`));
}

function gob(args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: work, env: { PATH: process.env.PATH ?? '', ...home.env }, encoding: 'utf8', timeout: 300_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json<T = Record<string, any>>(args: string[]) {
  const result = gob([...args, '--json']);
  if (result.status !== 0) expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  return { ...result, body: JSON.parse(result.stdout) as T };
}

function treeDigest(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name);
    out[path] = e.isFile() ? sha256(readFileSync(path)) : e.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

/** Splits CSV text into records, honouring quoted fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
    else field += c;
  }
  return rows;
}

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what headless Chromium writes) into pixels. */
function decodePng(png: Buffer): { width: number; height: number; channels: number; pixels: Buffer } {
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) throw new Error('unsupported PNG');
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      if (channels === 0) throw new Error('unsupported PNG colour type');
    } else if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x]!;
      const a = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const predicted = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      pixels[y * stride + x] = (v + predicted) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));

describe('bench (built CLI)', () => {
  requireBuilt('dist/kernel/services/bench-job.js');
  beforeAll(() => {
    home = makeTempHome('gob-e2e-bench-');
    work = mkdtempSync(join(tmpdir(), 'gob-e2e-bench-work-'));
    paths[RECENT[0]!] = age(rollout(RECENT[0]!, 20), 3600_000);
    paths[RECENT[1]!] = age(rollout(RECENT[1]!, 14), 2 * 3600_000);
    paths[RECENT[2]!] = age(claude(RECENT[2]!), 3 * 3600_000);
    paths[OLD] = age(rollout(OLD, 18), 10 * 24 * 3600_000);
  });
  afterAll(() => {
    home.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('measures the sessions of the last 7 days and writes the rows as CSV and a report as HTML', () => {
    const before = treeDigest(home.root);
    const csv = join(work, 'rows.csv');
    const html = join(work, 'report.html');
    const { status, stdout, stderr } = gob(['bench', ...LOW, '--output', csv, '--html', html, '--jobs', '2']);
    expect(status, stderr).toBe(0);
    expect(treeDigest(home.root)).toEqual(before);

    const rows = parseCsv(readFileSync(csv, 'utf8'));
    expect(rows[0]).toEqual([...BENCH_CSV_COLUMNS]);
    const body = rows.slice(1);
    expect(body).toHaveLength(RECENT.length * STRATEGIES);
    const col = (name: string) => BENCH_CSV_COLUMNS.indexOf(name as (typeof BENCH_CSV_COLUMNS)[number]);
    // Newest first, every strategy once per session; the old session is outside the window.
    expect([...new Set(body.map((r) => r[col('session')]))]).toEqual(RECENT);
    for (const id of RECENT) {
      const mine = body.filter((r) => r[col('session')] === id);
      expect(mine).toHaveLength(STRATEGIES);
      expect(new Set(mine.map((r) => r[col('source_sha256')]))).toEqual(new Set([sha256(readFileSync(paths[id]!))]));
      expect(mine.filter((r) => r[col('best')] === 'true')).toHaveLength(1);
      const elide = mine.find((r) => r[col('strategy')] === 'elide')!;
      expect(elide[col('execution_state')]).toBe('rendered');
      expect(Number(elide[col('context_after')])).toBeLessThan(Number(elide[col('context_before')]));
      expect(elide[col('retention_basis')]).toBe('literal_presence');
      // A strategy that proposed nothing says why in its row, as eval does; a plan's row is empty there.
      expect(elide[col('no_plan_rationale')]).toBe('');
      const cacheEdits = mine.find((r) => r[col('strategy')] === 'cache_edits')!;
      if (id !== RECENT[2]) expect([cacheEdits[col('status')], cacheEdits[col('reason_code')], cacheEdits[col('no_plan_rationale')]]).toEqual(['no_plan', 'strategy_returned_no_plan', 'strategy cache_edits applies to claude_code sessions, not codex']);
    }

    const report = readFileSync(html, 'utf8');
    expect(report.startsWith('<!doctype html>')).toBe(true);
    expect(report).toContain('<svg');
    expect(report).not.toMatch(/<script|<link|src="http/i);
    for (const strategy of ['elide', 'auto', 'sawtooth', 'scored']) expect(report).toContain(strategy);
    expect(report + readFileSync(csv, 'utf8') + stdout + stderr).not.toContain(SECRET);

    expect(stdout).toMatch(/^strategy\s+sessions\s+with plan\s+controls\s+best\s+failed\s+reduction median\s+q1-q3\s+median kept/m);
    expect(stdout).toMatch(/^elide\s+3\s+3\s+/m);
    // The summary says where the sessions came from: a --since that meant a date shows here.
    expect(stdout).toContain(`3 session(s) from the last 7 days; * marks each session's best clean rewrite`);
    expect(stdout).toContain(`wrote ${RECENT.length * STRATEGIES} rows to ${csv}`);
    expect(stdout).toContain(`wrote the report to ${html}`);
    // Not a terminal: no progress bar.
    expect(stderr).toBe('');
  });

  it.skipIf(!CHROMIUM)('the report opens in a headless browser and draws its charts in the strategies\' colours', () => {
    const html = join(work, 'report.html');
    expect(existsSync(html)).toBe(true);
    const png = join(work, 'report.png');
    const shot = spawnSync(CHROMIUM!, ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--window-size=1200,1800', `--screenshot=${png}`, `file://${html}`], { timeout: 120_000, encoding: 'utf8' });
    expect(existsSync(png), shot.stderr).toBe(true);
    const { width, height, channels, pixels } = decodePng(readFileSync(png));
    expect([width, height]).toEqual([1200, 1800]);
    const count = (hex: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
      let n = 0;
      for (let i = 0; i < pixels.length; i += channels) if (pixels[i] === r && pixels[i + 1] === g && pixels[i + 2] === b) n++;
      return n;
    };
    // Strategies are coloured in name order. Those with plans (auto, cache_aware, cliff) fill marks and
    // bars in their colour; agentic planned nothing here, so it has no mark and no place in the
    // scatter's legend: its colour is at most a table swatch.
    for (const colour of ['#E69F00', '#009E73', '#56B4E9']) expect(count(colour), colour).toBeGreaterThan(200);
    expect(count('#0072B2')).toBeLessThan(200);
  });

  it('--all includes old sessions; --json and a .json --output hold the same rows and aggregates', () => {
    const out = join(work, 'rows.json');
    const { status, body, stderr } = json<BenchCommandResult>(['bench', '--all', ...LOW, '--strategy', 'elide', '--strategy', 'sawtooth', '--output', out]);
    expect(status, stderr).toBe(0);
    expect(validateBenchCommandResult(body), JSON.stringify(validateBenchCommandResult.errors)).toBe(true);
    expect(body).toMatchObject({ sessions: 4, sessions_failed: 0, output_path: out, html_path: null });
    expect(body.rows.map((r) => `${r.session}:${r.strategy}`)).toEqual([...RECENT, OLD].flatMap((id) => [`${id}:elide`, `${id}:sawtooth`]));
    const file = JSON.parse(readFileSync(out, 'utf8')) as BenchCommandResult;
    expect(validateBenchCommandResult(file)).toBe(true);
    expect(file.rows).toEqual(body.rows);
    const elide = body.aggregates.find((a) => a.strategy === 'elide')!;
    expect(elide).toMatchObject({ sessions: 4, sessions_with_plan: 4, sessions_failed: 0, sessions_best: 4, tail_intact_sessions: 4 });
    const reductions = body.rows.filter((r) => r.strategy === 'elide').map((r) => r.reduction_pct!).sort((a, b) => a - b);
    expect(elide.reduction_pct).toEqual({ min: reductions[0], q1: expect.any(Number), median: (reductions[1]! + reductions[2]!) / 2, q3: expect.any(Number), max: reductions[3] });
    expect(body.aggregates.find((a) => a.strategy === 'sawtooth')).toMatchObject({ sessions_with_plan: 4, sessions_with_control: 4, sessions_best: 0, median_recall: null, reduction_pct: null });
  });

  it('a row whose strategy proposed nothing carries what it said, in --json and a .json --output, as eval\'s row does', () => {
    const out = join(work, 'said.json');
    const { status, body, stderr } = json<BenchCommandResult>(['bench', '--provider', 'codex', ...LOW, '--strategy', 'cache_edits', '--strategy', 'elide', '--output', out]);
    expect(status, stderr).toBe(0);
    expect(validateBenchCommandResult(body), JSON.stringify(validateBenchCommandResult.errors)).toBe(true);
    expect(body.rows.map((r) => [r.session, r.strategy, r.status, r.no_plan_rationale])).toEqual(
      RECENT.slice(0, 2).flatMap((id) => [
        [id, 'cache_edits', 'no_plan', 'strategy cache_edits applies to claude_code sessions, not codex'],
        [id, 'elide', 'plan', null],
      ]),
    );
    const evalRow = json(['eval', RECENT[0]!, ...LOW, '--strategy', 'cache_edits']).body.rows[0];
    expect(body.rows[0]!.no_plan_rationale).toBe(evalRow.no_plan_rationale);
    expect((JSON.parse(readFileSync(out, 'utf8')) as BenchCommandResult).rows).toEqual(body.rows);
  });

  it('--since and --provider narrow the sessions', () => {
    const since = json<BenchCommandResult>(['bench', '--since', '150m', ...LOW, '--strategy', 'elide']);
    expect(since.status).toBe(0);
    expect(since.body.rows.map((r) => r.session)).toEqual(RECENT.slice(0, 2));
    const iso = json<BenchCommandResult>(['bench', '--since', new Date(Date.now() - 30 * 24 * 3600_000).toISOString(), ...LOW, '--strategy', 'elide']);
    expect(iso.body.sessions).toBe(4);
    const codex = json<BenchCommandResult>(['bench', '--provider', 'claude_code', ...LOW, '--strategy', 'elide']);
    expect(codex.body.rows.map((r) => r.provider)).toEqual(['claude_code']);
    // Nothing fired at a trigger no session reaches: the table says why and what to pass.
    const highHtml = join(work, 'under-trigger.html');
    const high = gob(['bench', '--provider', 'claude_code', '--trigger', '9000000', '--floor', '0', '--strategy', 'elide', '--html', highHtml]);
    expect(high.stdout).toContain('every session is under the trigger, so no strategy planned anything; --trigger and --floor measure them at a lower one');
    // The report says it too, not only a column of zeros.
    expect(readFileSync(highHtml, 'utf8')).toContain('<p class="why" role="status">Every session is under the trigger, so no strategy planned anything; --trigger and --floor measure them at a lower one.</p>');
    expect(gob(['bench', '--provider', 'claude_code', ...LOW, '--strategy', 'elide']).stdout).not.toContain('every session is under the trigger');
    const both = json(['bench', '--all', '--since', '1h']);
    expect(both.status).toBe(2);
    const badSince = json(['bench', '--since', 'yesterday']);
    expect(badSince.status).toBe(2);
    expect(badSince.body.error.code).toBe('invalid_since');
  });

  it('finding nothing with --since names the window it searched, and says when that starts in the future', () => {
    const recent = gob(['bench', '--since', '1s', ...LOW, '--strategy', 'elide']);
    expect(recent.status).toBe(0);
    expect(recent.stdout).toMatch(/^No sessions updated since \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\.\n$/);
    const ahead = gob(['bench', '--since', '2099-01-01', ...LOW, '--strategy', 'elide']);
    expect(ahead.status).toBe(0);
    expect(ahead.stdout).toBe('No sessions updated since 2099-01-01 00:00 UTC, which is in the future (a date or time without an offset is UTC).\n');
    expect(json<BenchCommandResult>(['bench', '--since', '2099-01-01', ...LOW]).body.sessions).toBe(0);
  });

  it('a report with no session in it says why at its top, as the command does, and the command says it wrote it', () => {
    const html = join(work, 'nothing.html');
    const { status, stdout, stderr } = gob(['bench', '--since', '1m', ...LOW, '--html', html]);
    expect(status, stderr).toBe(0);
    const [said, wrote, end] = stdout.split('\n');
    expect(said).toMatch(/^No sessions updated since \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\.$/);
    expect([wrote, end]).toEqual([`wrote the report to ${html}`, '']);
    const report = readFileSync(html, 'utf8');
    const at = report.indexOf(`<p class="why" role="status">${said}</p>`);
    expect(at).toBeGreaterThan(report.indexOf('<h1>'));
    expect(at).toBeLessThan(report.indexOf('<section>'));
    // Without --since, the configured window is the one named, in the report as on the terminal.
    const config = join(work, 'half-hour.toml');
    writeFileSync(config, '[discovery]\nmax_age_secs = 1800\n');
    const window = join(work, 'nothing-recent.html');
    const recent = gob(['bench', '--config', config, ...LOW, '--html', window]);
    expect(recent.stdout).toBe(`No sessions found in the last 30 minutes (gobstopper bench --all measures older ones).\nwrote the report to ${window}\n`);
    expect(readFileSync(window, 'utf8')).toContain('<p class="why" role="status">No sessions found in the last 30 minutes (gobstopper bench --all measures older ones).</p>');
  });

  it('warns once, as eval does, of a legacy command it did not measure and of a session table keyed by a prefix', () => {
    const config = join(work, 'unmeasured.toml');
    writeFileSync(config, `[presets.cmd]\ncommand = "/bin/false"\ntrusted_legacy_command = true\n\n[sessions."${RECENT[0]!.slice(0, 8)}"]\nfloor_tokens = 0\n`);
    const args = ['bench', '--config', config, '--preset', 'cmd', '--strategy', 'elide', ...LOW];
    const legacy = 'the legacy command that [presets.cmd] configures is not measured: eval compares strategies, and only plan, apply and watch run a command';
    const { status, body } = json(args);
    expect(status).toBe(0);
    expect(validateBenchCommandResult(body)).toBe(true);
    // The prefix matches both Codex sessions of the window: each is named, the command once.
    expect(body.warnings).toEqual([legacy, ...[RECENT[0]!, RECENT[1]!].map((id) => `[sessions."${id.slice(0, 8)}"] is not applied: a session table is keyed by the full session id (${id})`)]);
    const human = gob(args);
    expect(human.stderr.split('\n').filter((l) => l.startsWith('warning: '))).toEqual(body.warnings.map((w: string) => `warning: ${w}`));
    // Without either, nothing to warn of.
    expect(json(['bench', '--strategy', 'elide', ...LOW]).body.warnings).toEqual([]);
  });

  it('refuses an output path that exists before measuring anything, and leaves it as it was', () => {
    const taken = join(work, 'taken.csv');
    writeFileSync(taken, 'keep me\n');
    const html = join(work, 'never.html');
    const started = Date.now();
    const { status, body } = json(['bench', ...LOW, '--output', taken, '--html', html]);
    expect(status).toBe(1);
    expect(body.error.code).toBe('output_exists');
    expect(body.error.message).toBe(`refusing to overwrite ${taken}: it already exists; choose a new file name`);
    expect(readFileSync(taken, 'utf8')).toBe('keep me\n');
    expect(existsSync(html)).toBe(false);
    expect(Date.now() - started).toBeLessThan(15_000);
    const takenHtml = json(['bench', ...LOW, '--html', taken]);
    expect(takenHtml.status).toBe(1);
    expect(takenHtml.body.error.code).toBe('output_exists');
    // A directory in the way is data as a file is; a name ending in / is a malformed value.
    const takenDir = json(['bench', ...LOW, '--html', work]);
    expect({ status: takenDir.status, code: takenDir.body.error.code }).toEqual({ status: 1, code: 'output_exists' });
    const slashed = json(['bench', ...LOW, '--output', join(work, 'rows') + '/']);
    expect({ status: slashed.status, code: slashed.body.error.code }).toEqual({ status: 2, code: 'output_not_a_file' });
    // - is stdout to many tools; taken as a name, it would leave a file called - in the current directory.
    for (const flag of ['--output', '--html']) {
      const dash = json(['bench', ...LOW, flag, '-']);
      expect({ status: dash.status, code: dash.body.error.code }).toEqual({ status: 2, code: 'output_path_dash' });
      expect(existsSync(join(work, '-'))).toBe(false);
    }
    const same = json(['bench', ...LOW, '--output', join(work, 'x.csv'), '--html', join(work, 'x.csv')]);
    expect(same.status).toBe(2);
    expect(same.body.error.code).toBe('output_conflict');
  });

  it('a session that vanishes after discovery is reported and the bench goes on', async () => {
    const { planBench, measureBench } = (await import(join(repoRoot, 'dist', 'kernel', 'services', 'bench.js'))) as typeof import('../../kernel/services/bench.js');
    const options = { env: { ...process.env, ...home.env }, trigger: 1000, floor: 0, strategies: ['elide'], all: true, cwd: work, jobs: 2 };
    const plan = await planBench(options);
    expect(plan.jobs.map((j) => j.session)).toEqual([...RECENT, OLD]);
    const gone = paths[RECENT[1]!]!;
    const saved = readFileSync(gone);
    unlinkSync(gone);
    try {
      const { result } = await measureBench(plan, options);
      expect(validateBenchCommandResult(result)).toBe(true);
      expect(result).toMatchObject({ sessions: 4, sessions_failed: 1 });
      const failure = result.rows.find((r) => r.session === RECENT[1])!;
      expect(failure).toMatchObject({ strategy: null, failure: 'session_evaluation_failed', context_before: null });
      expect(failure.error).toBe(`session file is gone: ${gone} no longer exists`);
      expect(result.rows.filter((r) => r.strategy === 'elide').map((r) => r.session)).toEqual([RECENT[0], RECENT[2], OLD]);
      expect(result.aggregates.find((a) => a.strategy === 'elide')).toMatchObject({ sessions: 3, sessions_with_plan: 3 });
    } finally {
      writeFileSync(gone, saved);
      age(gone, 2 * 3600_000);
    }
    expect(statSync(gone).size).toBe(saved.length);
  });

  it('a report over an events log it cannot read says so instead of counting no compactions', () => {
    const dir = join(home.dataHome, 'gobstopper');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const log = join(dir, 'events.jsonl');
    writeFileSync(log, '', { mode: 0o644 });
    chmodSync(log, 0o644);
    try {
      const html = join(work, 'unreadable-events.html');
      const { status } = gob(['bench', ...LOW, '--strategy', 'elide', '--html', html]);
      expect(status).toBe(0);
      const report = readFileSync(html, 'utf8');
      expect(report).toContain(`The events log could not be read (${log}: has mode 0644`);
      expect(report).not.toMatch(/\d+ gobstopper compaction/);
    } finally {
      rmSync(log, { force: true });
    }
  });
});
