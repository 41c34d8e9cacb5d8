/**
 * eval and bench on the real transcripts (../shared/fixtures/real, read only): every main fixture
 * gets a row per strategy with a trigger low enough to fire, and a bench over a temporary home
 * holding copies of all of them writes its CSV, JSON and HTML report. The real Codex fixtures have
 * their tool outputs redacted to a few dozen bytes, so file strategies legitimately find nothing
 * to elide there: these tests assert rows, not plans.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchCommandResult, RetentionStudyReport } from '../../schemas/generated/types.js';
import { validateBenchCommandResult, validateEvalCommandResult } from '../../schemas/generated/validators.js';
import { BENCH_CSV_COLUMNS } from '../../kernel/eval/bench-csv.js';
import { evaluateSelector, resolveEvalStrategies } from '../../kernel/services/eval.js';
import { Runtime } from '../../kernel/services/runtime.js';
import { isSidechainFixture } from './provider-fixtures.js';
import { requireBuilt } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const REAL = join(repoRoot, '..', 'shared', 'fixtures', 'real');
const PROVIDER_DIRS = ['claude', 'codex'];

function fixtures(includeSubagents: boolean): Array<{ dir: string; file: string; path: string }> {
  if (!existsSync(REAL)) return [];
  return PROVIDER_DIRS.flatMap((dir) =>
    existsSync(join(REAL, dir))
      ? readdirSync(join(REAL, dir))
          .filter((f) => f.endsWith('.jsonl') && (includeSubagents || !isSidechainFixture(f)))
          .sort()
          .map((file) => ({ dir, file, path: join(REAL, dir, file) }))
      : [],
  );
}

/**
 * Main fixtures: whole sessions. The schema-coverage files are hand-trimmed composites of record
 * shapes from many client versions, not one session (PROVENANCE.md); they still go into the bench
 * home below, where a file that cannot be measured becomes a failure row.
 */
const main = fixtures(false).filter((f) => !f.file.includes('schema-coverage'));
if (main.length === 0) console.warn(`skipping the real-data eval tests: no fixtures at ${REAL}`);

describe.skipIf(main.length === 0)('eval on every main real fixture', () => {
  let home: TempHome;
  let runtime: Runtime;
  let strategies: string[];

  beforeAll(async () => {
    home = makeTempHome('gob-real-eval-');
    runtime = new Runtime({ env: { ...process.env, ...home.env } });
    strategies = await resolveEvalStrategies(runtime);
  });
  afterAll(async () => {
    await runtime?.close();
    home?.cleanup();
  });

  for (const { dir, file, path } of main) {
    it(`${dir}/${file}: one row per strategy`, async () => {
      const before = readFileSync(path);
      const { result } = await evaluateSelector(runtime, path, { trigger: 1000, floor: 0 });
      expect(validateEvalCommandResult(result), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
      expect(result.rows.map((r) => r.strategy)).toEqual(strategies);
      expect(result.provider).toBe(dir === 'claude' ? 'claude_code' : 'codex');
      for (const row of result.rows) {
        expect(row.est_reclaimed).toBe(Math.max(0, row.context_tokens_before - row.context_tokens_after));
        if (row.status === 'no_plan') expect(row.reason_code).toMatch(/^[a-z_]+$/);
        if (row.status === 'error') expect(row.error).toMatch(/^[^\n]+$/);
        if (row.execution_state === 'rendered') {
          expect(row.result_sha256).toMatch(/^[0-9a-f]{64}$/);
          expect(row.probe_score!.probes_total).toBe(result.probes_total);
          expect(row.event_record).not.toBeNull();
        }
      }
      // The numbers agree with each other: the reduction is the reclaimed share of the context
      // before, and the one row marked best is a clean rewrite that no other clean rewrite outscores.
      for (const row of result.rows.filter((r) => r.status === 'plan' && r.context_tokens_before > 0)) {
        expect(row.reduction_pct).toBeCloseTo(Math.min(100, (100 * row.est_reclaimed) / row.context_tokens_before), 2);
      }
      const clean = result.rows.filter((r) => r.status === 'plan' && r.execution_state === 'rendered' && r.new_verify_errors === 0 && r.tail_intact !== false);
      const marked = result.rows.filter((r) => r.best);
      expect(marked).toHaveLength(clean.length > 0 ? 1 : 0);
      if (clean.length > 0) {
        expect(clean).toContain(marked[0]);
        expect(result.best_strategy).toBe(marked[0]!.strategy);
        for (const row of clean) expect(marked[0]!.score!).toBeGreaterThanOrEqual(row.score!);
      } else {
        expect(result.best_strategy).toBeNull();
      }
      expect(readFileSync(path).equals(before)).toBe(true);
    }, 120_000);
  }
});

/** Copies every real fixture into the provider layout of a temporary home, idle for an hour. */
function populate(home: TempHome): number {
  const t = new Date(Date.now() - 3600_000);
  let n = 0;
  for (const { dir, file, path } of fixtures(true)) {
    let target: string;
    if (dir === 'claude') {
      target = join(home.claudeHome, 'projects', '-real-fixtures', file);
    } else {
      // Codex finds rollouts by name; a file's name must carry its session_meta id.
      const id = codexId(path);
      const stem = basename(file).replace(/^.*?(rollout-)/, '$1');
      target = join(home.codexHome, 'sessions', '2026', '02', '23', stem.startsWith('rollout-') ? stem : `rollout-2026-02-23T10-00-${String(n).padStart(2, '0')}-${id ?? 'unknown'}.jsonl`);
    }
    mkdirSync(join(target, '..'), { recursive: true });
    copyFileSync(path, target);
    utimesSync(target, t, t);
    n += 1;
  }
  return n;
}

function codexId(path: string): string | null {
  const head = readFileSync(path, 'utf8').split('\n', 8);
  for (const line of head) {
    try {
      const record = JSON.parse(line) as { type?: string; payload?: { id?: string } };
      if (record.type === 'session_meta' && typeof record.payload?.id === 'string') return record.payload.id;
    } catch {
      /* not JSON */
    }
  }
  return null;
}

describe.skipIf(main.length === 0)('bench over a home holding every real fixture (built CLI)', () => {
  requireBuilt('dist/kernel/services/bench-job.js');
  let home: TempHome;
  let work: string;

  beforeAll(() => {
    home = makeTempHome('gob-real-bench-');
    work = mkdtempSync(join(tmpdir(), 'gob-real-bench-out-'));
    populate(home);
  });
  afterAll(() => {
    home?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const gob = (args: string[]) =>
    spawnSync(process.execPath, [join(repoRoot, 'bin', 'run.js'), ...args], { cwd: work, env: { PATH: process.env.PATH ?? '', ...home.env }, encoding: 'utf8', timeout: 900_000 });

  it('writes the rows as CSV and the HTML report, and the JSON result matches its schema', () => {
    const csv = join(work, 'real.csv');
    const html = join(work, 'real.html');
    const run = gob(['bench', '--all', '--trigger', '1000', '--floor', '0', '--output', csv, '--html', html, '--json']);
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as BenchCommandResult;
    expect(validateBenchCommandResult(result), JSON.stringify(validateBenchCommandResult.errors)).toBe(true);
    // Every main session is found (sub-agent transcripts are not sessions of their own).
    expect(result.sessions).toBeGreaterThanOrEqual(main.length);
    expect(result.sessions_failed).toBeLessThanOrEqual(result.sessions - main.length);
    const strategies = new Set(result.rows.map((r) => r.strategy).filter((s) => s !== null));
    expect(strategies.size).toBe(13);
    for (const a of result.aggregates) expect(a.sessions).toBe(result.sessions - result.sessions_failed);
    expect(result.rows.some((r) => r.execution_state === 'rendered')).toBe(true);
    const lines = readFileSync(csv, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe(BENCH_CSV_COLUMNS.join(','));
    expect(lines.length - 1).toBe(result.rows.length);
    const report = readFileSync(html, 'utf8');
    expect(report).toContain('<svg');
    for (const s of strategies) expect(report).toContain(s!);
  }, 900_000);

  it('eval-study on a real session: the session against itself keeps every check, and a replay never grows the context', () => {
    const fixture = main.find((f) => f.file.includes('258c7280')) ?? main.find((f) => f.dir === 'claude')!;
    const manifest = join(work, 'study.json');
    const prepared = gob(['eval-study', fixture.path, '--prepare-manifest', manifest, '--json']);
    expect(prepared.status, prepared.stderr).toBe(0);
    const checks = (JSON.parse(readFileSync(manifest, 'utf8')) as { checks: unknown[] }).checks.length;
    expect(checks).toBeGreaterThan(0);

    const self = gob(['eval-study', fixture.path, '--manifest', manifest, '--against', fixture.path, '--json']);
    expect(self.status, self.stderr).toBe(0);
    const [row] = (JSON.parse(self.stdout) as RetentionStudyReport).rows;
    expect(row!.estimated_context_after).toBe(row!.estimated_context_before);
    expect(row!.retention).toMatchObject({ total: checks, retained: checks, same_origin_retained: checks, source_bound_retained: checks, lexical_retained: checks });

    const replay = gob(['eval-study', fixture.path, '--manifest', manifest, '--rounds', '2', '--trigger', '20000', '--floor', '10000', '--json']);
    expect(replay.status, replay.stderr).toBe(0);
    const report = JSON.parse(replay.stdout) as RetentionStudyReport;
    expect(report.rows.length).toBe(6);
    for (const r of report.rows) {
      expect(r.estimated_context_after).toBeLessThanOrEqual(r.estimated_context_before);
      expect(r.status === 'no_change').toBe(r.estimated_context_after === r.estimated_context_before);
      expect(r.floor_reached).toBe(r.estimated_context_after <= 10_000);
      expect(r.retention.retained).toBeLessThanOrEqual(checks);
    }
  }, 300_000);

  it('writes JSON rows to a new .json file', () => {
    const out = join(work, 'real.json');
    const run = gob(['bench', '--all', '--trigger', '1000', '--floor', '0', '--strategy', 'elide', '--output', out]);
    expect(run.status, run.stderr).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8')) as BenchCommandResult;
    expect(validateBenchCommandResult(file)).toBe(true);
    expect(file.rows.filter((r) => r.strategy === 'elide')).toHaveLength(file.sessions - file.sessions_failed);
    expect(run.stdout).toContain(`wrote ${file.rows.length} rows to ${out}`);
  }, 900_000);
});

