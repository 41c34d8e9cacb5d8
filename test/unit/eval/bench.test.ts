import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { BenchRow, EvalCommandResult, EvalRow } from '../../../schemas/generated/types.js';
import { validateBenchCommandResult } from '../../../schemas/generated/validators.js';
import { aggregateBench, failedSessionCount, quantile, quartiles } from '../../../kernel/eval/bench-aggregate.js';
import { BENCH_CSV_COLUMNS, benchCsv, csvField } from '../../../kernel/eval/bench-csv.js';
import { benchFailureRow } from '../../../kernel/eval/bench-rows.js';
import { assertBenchOutputsAreNew, benchOutputFormat, collectBench, writeBenchOutputs, type BenchJob, type BenchSessionResult } from '../../../kernel/eval/bench-collect.js';
import { assertNewOutputPath, writeNewFile } from '../../../kernel/eval/output-file.js';
import { runJobsInParallel, type JobOutcome, type JobProgress } from '../../../kernel/eval/parallel-runner.js';
import { ProgressBar, progressLine } from '../../../kernel/cli/render/progress-bar.js';
import { buildSessionBytes, filler } from '../../fixtures/eval/session-builder.js';
import type { FixtureBenchJob, FixtureBenchResult } from '../../fixtures/eval/bench-job.js';

const dir = mkdtempSync(join(tmpdir(), 'gob-bench-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const jobModule = join(import.meta.dirname, '..', '..', 'fixtures', 'eval', 'bench-job.ts');

function writeSession(name: string, turns: number): string {
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(
    path,
    buildSessionBytes({
      goal: `task ${name}`,
      turns: Array.from({ length: turns }, (_, i) => ({ say: `step ${i}`, command: 'ls', output: `wrote /tmp/${name}/out_${i}.txt\n` + filler(500 + 100 * i) })),
    }),
  );
  return path;
}

const row = (strategy: string | null, over: Partial<BenchRow>): BenchRow => ({
  ...benchFailureRow('codex', 's1', '/home/dev/session.jsonl', 'session_evaluation_failed', 'x', strategy),
  failure: null, error: null, status: 'plan', ...over,
});

describe('CSV', () => {
  it('quotes fields holding a comma, quote, CR or LF and doubles quotes; null is empty', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(null)).toBe('');
    expect(csvField(0.5)).toBe('0.5');
    expect(csvField(false)).toBe('false');
  });

  it('writes text a spreadsheet would run as a formula behind a quote; numbers stay numbers', () => {
    expect(csvField('=1+2')).toBe("'=1+2");
    expect(csvField("=cmd|' /C calc'!A0")).toBe("'=cmd|' /C calc'!A0");
    expect(csvField('+SUM(A1)')).toBe("'+SUM(A1)");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\t=1')).toBe("'\t=1");
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvField(-12.5)).toBe('-12.5');
    expect(csvField('a=b')).toBe('a=b');
    const line = benchCsv([row('elide', { session: '=1+2', error: '@boom' })]).split('\n')[1]!;
    expect(line.startsWith("codex,'=1+2,elide,")).toBe(true);
    expect(line).toContain(",'@boom,");
  });

  it('writes numbers in plain decimals, never in exponent notation, with the same value', () => {
    // The score of 100 tokens reclaimed behind a 0.2% cached prefix: 100 x 0.002^3.
    const tiny = 8e-7;
    expect(csvField(tiny)).toBe('0.0000008');
    expect(csvField(1.2345e-9)).toBe('0.0000000012345');
    expect(csvField(-3e-8)).toBe('-0.00000003');
    expect(csvField(1.5e22)).toBe('15000000000000000000000');
    expect(csvField(2.5e-7 + 1e-22)).toMatch(/^0\.000000\d+$/);
    for (const n of [tiny, 1.2345e-9, -3e-8, 1.5e22, 1e21, 123.456e-10]) expect(Number(csvField(n))).toBe(n);
    const line = benchCsv([row('elide', { score: tiny, prefix_ratio: 1e-7 })]).split('\n')[1]!;
    expect(line).not.toMatch(/\de-?\d/);
    expect(line).toContain(',0.0000001,0.0000008,');
  });

  it('starts with the 24 reference columns in order, then ours, one line per row', () => {
    const csv = benchCsv([row('elide', { session: 'odd,id "1"', context_before: 1000, recall: 0.75, tail_intact: true })]);
    const [header, line, end] = csv.split('\n');
    expect(header!.split(',').slice(0, 24)).toEqual(
      'provider,session,strategy,context_before,context_after,est_reclaimed,prefix_tokens,prefix_ratio,score,verify_errors,verify_warnings,probes_total,probes_recalled,recall,tail_intact,duration_ms,execution_state,token_basis,source_sha256,result_sha256,retention_complete,recall_available,retention_basis,failure'.split(','),
    );
    expect(header!.split(',')).toEqual([...BENCH_CSV_COLUMNS]);
    expect(line).toMatch(/^codex,"odd,id ""1""",elide,1000,/);
    expect(line!.split(',').length).toBeGreaterThan(BENCH_CSV_COLUMNS.length - 1);
    expect(end).toBe('');
  });
});

describe('aggregates', () => {
  it('quartiles interpolate between order statistics', () => {
    expect(quantile([10, 20, 30, 40], 0.5)).toBe(25);
    expect(quartiles([40, 10, 30, 20, 50])).toEqual({ min: 10, q1: 20, median: 30, q3: 40, max: 50 });
    expect(quartiles([10, 20, 30, 40])).toEqual({ min: 10, q1: 17.5, median: 25, q3: 32.5, max: 40 });
    expect(quartiles([])).toBeNull();
    // What a reader sees in the JSON and the CSV: the interpolated value, not its binary noise.
    expect(quartiles([29.43, 29.44])!.median).toBe(29.435);
  });

  it('per strategy: sessions with a plan, reduction quartiles, median recall, no-plan counts by reason, best and failures', () => {
    const rows: BenchRow[] = [
      row('elide', { session: 'a', reduction_pct: 10, recall: 0.5, recall_available: true, tail_intact: true, best: true }),
      row('elide', { session: 'b', reduction_pct: 20, recall: 0.7, recall_available: true, tail_intact: true }),
      row('elide', { session: 'c', reduction_pct: 40, recall: 0.9, recall_available: true, tail_intact: false }),
      // No probes: recall 1 by definition, which is not a measure and stays out of the median.
      row('elide', { session: 'c2', reduction_pct: 30, recall: 1, recall_available: false, probes_total: 0, tail_intact: true }),
      row('elide', { session: 'd', status: 'no_plan', reason_code: 'below_trigger' }),
      row('elide', { session: 'e', status: 'no_plan', reason_code: 'below_trigger' }),
      row('elide', { session: 'f', status: 'no_plan', reason_code: 'minimum_savings_not_met' }),
      row('elide', { session: 'g', status: 'error', failure: 'strategy_evaluation_failed', error: 'boom' }),
      row('dedupe', { session: 'a', status: 'no_plan', reason_code: 'strategy_returned_no_plan' }),
      benchFailureRow('codex', 'h', '/home/dev/session.jsonl', 'session_evaluation_failed', 'gone'),
    ];
    const [elide, dedupe] = aggregateBench(rows);
    expect(elide).toEqual({
      strategy: 'elide', sessions: 8, sessions_with_plan: 4, sessions_with_control: 0, sessions_failed: 1, sessions_best: 1,
      reduction_pct: { min: 10, q1: 17.5, median: 25, q3: 32.5, max: 40 }, median_recall: 0.7, tail_intact_sessions: 3,
      no_plan_by_reason: { below_trigger: 2, minimum_savings_not_met: 1 },
    });
    expect(dedupe).toMatchObject({ sessions: 1, sessions_with_plan: 0, reduction_pct: null, median_recall: null, no_plan_by_reason: { strategy_returned_no_plan: 1 } });
  });

  it('two sessions sharing an id (one file in two project folders) count as two, as their rows do', () => {
    const rows: BenchRow[] = [
      row('elide', { session: 'same', reduction_pct: 10, best: true }),
      row('elide', { session: 'same', reduction_pct: 20, best: true }),
      benchFailureRow('codex', 'gone', '/home/dev/session.jsonl', 'session_evaluation_failed', 'vanished'),
      benchFailureRow('codex', 'gone', '/home/dev/session.jsonl', 'session_evaluation_failed', 'vanished'),
    ];
    expect(aggregateBench(rows)[0]).toMatchObject({ sessions: 2, sessions_with_plan: 2, sessions_best: 2 });
    expect(failedSessionCount(rows)).toBe(2);
  });

  it('a session is measured when one strategy was; one whose every strategy failed was not', () => {
    // Only what the bench reads of an eval row; the rest of the shape does not matter here.
    const evalRow = (strategy: string, failed: boolean) => ({ strategy, status: failed ? 'error' : 'no_plan', reason_code: failed ? null : 'below_trigger', error: failed ? 'boom' : null, probe_score: null, execution_state: null, best: false }) as unknown as EvalRow;
    const evaluated = (session: string, ...failed: boolean[]): JobOutcome<BenchJob, BenchSessionResult> => ({
      job: { provider: 'codex', session, path: `/s/${session}` },
      ok: true,
      result: { eval: { provider: 'codex', session_id: session, rows: failed.map((f, i) => evalRow(['elide', 'dedupe'][i]!, f)) } as unknown as EvalCommandResult },
      duration_ms: 1,
    });
    const gone: JobOutcome<BenchJob, BenchSessionResult> = { job: { provider: 'codex', session: 'c', path: '/s/c' }, ok: false, failure: 'failed', error: 'gone', code: 'ENOENT', duration_ms: 1 };
    // b twice: the same id in two project folders, one file measured and the other not.
    const { result } = collectBench([evaluated('a', true, false), evaluated('b', true, true), evaluated('b', false, true), gone]);
    expect(result).toMatchObject({ sessions: 4, sessions_measured: 2, sessions_failed: 1 });
    expect(collectBench([evaluated('b', true, true)]).result.sessions_measured).toBe(0);
    expect(collectBench([]).result.sessions_measured).toBe(0);
  });
});

describe('output files are always new', () => {
  it('refuses an existing path (file or dangling symlink) and leaves it untouched', () => {
    const taken = join(dir, 'taken.csv');
    writeFileSync(taken, 'keep me');
    expect(() => writeNewFile(taken, 'new')).toThrow(/refusing to overwrite .*taken\.csv: it already exists/);
    expect(readFileSync(taken, 'utf8')).toBe('keep me');
    const link = join(dir, 'dangling.csv');
    symlinkSync(join(dir, 'nowhere'), link);
    expect(() => assertNewOutputPath(link)).toThrow(/already exists/);
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
  });

  it('reports a missing directory, and writes a new file exactly once', () => {
    expect(() => assertNewOutputPath(join(dir, 'no-such-dir', 'x.csv'))).toThrow(/no-such-dir does not exist$/);
    const fresh = join(dir, 'fresh.csv');
    writeNewFile(fresh, 'a,b\n');
    // A file where a directory should be is named as such, not reported as a failed lstat.
    expect(() => assertNewOutputPath(join(fresh, 'x.csv'))).toThrow(/^cannot write .*fresh\.csv\/x\.csv: .*fresh\.csv is not a directory$/);
    expect(readFileSync(fresh, 'utf8')).toBe('a,b\n');
    expect(() => writeNewFile(fresh, 'again')).toThrow(/already exists/);
  });

  it('refuses a directory it cannot write in before any work, not when the results are ready', (ctx) => {
    const ro = join(dir, 'read-only');
    mkdirSync(ro);
    chmodSync(ro, 0o555);
    // root writes through modes; an immutable directory stops it too.
    let locked = process.getuid?.() !== 0;
    if (!locked) {
      try {
        execFileSync('chattr', ['+i', ro], { stdio: 'ignore' });
        locked = true;
      } catch {
        locked = false;
      }
    }
    try {
      if (!locked) return ctx.skip();
      expect(() => assertNewOutputPath(join(ro, 'x.csv'))).toThrow(/^cannot write .*read-only\/x\.csv: .*read-only is not writable \(E[A-Z]+\)$/);
      expect(() => assertBenchOutputsAreNew({ html: join(ro, 'x.html') })).toThrow(/is not writable/);
    } finally {
      if (process.getuid?.() === 0) spawnSync('chattr', ['-i', ro], { stdio: 'ignore' });
      chmodSync(ro, 0o755);
    }
  });

  it('a write killed halfway leaves nothing under the output name, so the same command can run again', async () => {
    const target = join(dir, 'killed.csv');
    const script = `import { writeNewFile } from ${JSON.stringify(join(import.meta.dirname, '..', '..', '..', 'kernel', 'eval', 'output-file.ts'))}; writeNewFile(${JSON.stringify(target)}, Buffer.alloc(256 * 1024 * 1024, 120));`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'ignore' });
    const temp = () => readdirSync(dir).find((name) => name.startsWith('.killed.csv.tmp-'));
    await vi.waitFor(() => expect(temp()).toBeDefined(), { timeout: 20_000, interval: 2 });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(existsSync(target)).toBe(false);
    rmSync(join(dir, temp()!), { force: true });
    writeNewFile(target, 'a,b\n');
    expect(readFileSync(target, 'utf8')).toBe('a,b\n');
    expect(readdirSync(dir).filter((name) => name.includes('.tmp-'))).toEqual([]);
  });

  it('writes a file whose name is as long as the file system allows', () => {
    const long = join(dir, `${'r'.repeat(246)}.csv`);
    const wide = join(dir, `${'é'.repeat(120)}.json`);
    writeNewFile(long, 'a,b\n');
    writeNewFile(wide, '{}\n');
    expect(readFileSync(long, 'utf8')).toBe('a,b\n');
    expect(readFileSync(wide, 'utf8')).toBe('{}\n');
    expect(readdirSync(dir).filter((name) => name.includes('.tmp-'))).toEqual([]);
  });

  it('checks --output and --html before the bench runs, and rejects one path for both', () => {
    const taken = join(dir, 'taken-html.html');
    writeFileSync(taken, 'x');
    expect(() => assertBenchOutputsAreNew({ output: join(dir, 'rows.csv'), html: taken })).toThrow(/taken-html\.html/);
    expect(() => assertBenchOutputsAreNew({ output: join(dir, 'same'), html: join(dir, 'same') })).toThrow(/different files/);
  });

  it('refuses the two flags swapped: rows named as a web page, a report named as rows', () => {
    const swapped = (outputs: Parameters<typeof assertBenchOutputsAreNew>[0]) => {
      try {
        assertBenchOutputsAreNew(outputs);
      } catch (error) {
        return error as { code: string; exit: number; message: string };
      }
      throw new Error('expected a refusal');
    };
    expect(swapped({ output: join(dir, 'r.html') })).toMatchObject({ code: 'output_format_conflict', exit: 2, message: expect.stringContaining('the report goes to --html') });
    expect(swapped({ output: join(dir, 'r.HTM') }).code).toBe('output_format_conflict');
    expect(swapped({ html: join(dir, 'r.csv') })).toMatchObject({ code: 'output_format_conflict', message: expect.stringContaining('is named as CSV rows; the rows go to --output') });
    expect(swapped({ html: join(dir, 'r.json') }).message).toContain('named as JSON rows');
    expect(readdirSync(dir).filter((n) => n.startsWith('r.'))).toEqual([]);
  });
});

describe('output paths that name no file, and the rows format', () => {
  it('refuses an empty name and a name ending in a separator, creating nothing', () => {
    expect(() => assertNewOutputPath('')).toThrow(/output file name is empty/);
    const asDir = join(dir, 'out-dir') + '/';
    expect(() => assertNewOutputPath(asDir)).toThrow(/names a directory, not a file/);
    expect(() => assertBenchOutputsAreNew({ output: asDir })).toThrow(/names a directory/);
    expect(() => assertBenchOutputsAreNew({ html: '' })).toThrow(/empty/);
    expect(existsSync(join(dir, 'out-dir'))).toBe(false);
  });

  it('a name ending in a separator is the command line\'s mistake (exit 2); a directory already at the name is what the disk holds (exit 1)', () => {
    const existing = join(dir, 'existing-dir');
    mkdirSync(existing);
    expect(() => assertNewOutputPath(existing + '/')).toThrow(
      expect.objectContaining({ code: 'output_not_a_file', exit: 2, message: `${existing}/ names a directory, not a file; name a new file inside it` }),
    );
    expect(() => assertNewOutputPath(existing)).toThrow(
      expect.objectContaining({ code: 'output_exists', exit: 1, message: `${existing} is an existing directory, not a file; name a new file inside it` }),
    );
    const taken = join(dir, 'taken-file');
    writeFileSync(taken, 'x');
    expect(() => assertNewOutputPath(taken)).toThrow(expect.objectContaining({ code: 'output_exists', exit: 1 }));
  });

  it('takes the format from the extension, --format only for other names, and refuses a contradiction', () => {
    expect(benchOutputFormat('rows.JSON')).toBe('json');
    expect(benchOutputFormat('rows.csv', 'csv')).toBe('csv');
    expect(benchOutputFormat('rows.txt', 'json')).toBe('json');
    expect(benchOutputFormat('rows')).toBe('csv');
    expect(() => benchOutputFormat('rows.csv', 'json')).toThrow(/--format json contradicts the extension of rows\.csv/);
    expect(() => assertBenchOutputsAreNew({ output: join(dir, 'c.json'), format: 'csv' })).toThrow(/contradicts/);
    expect(() => assertBenchOutputsAreNew({ format: 'json' })).toThrow(/--format applies to --output/);
  });
});

describe('progress bar', () => {
  it('draws on a TTY and stays silent otherwise', () => {
    const p: JobProgress = { done: 3, failed: 1, running: 2, total: 10 };
    expect(progressLine(p, 10)).toBe('███░░░░░░░ 3/10 sessions, 1 failed');
    const tty: string[] = [];
    const bar = new ProgressBar({ isTTY: true, write: (c: string) => tty.push(c) }, 'sessions', 0);
    bar.update(p);
    bar.finish();
    expect(tty.join('')).toContain('3/10 sessions, 1 failed');
    // The bar is gone before the next output: its line is cleared last.
    expect(tty.at(-1)).toBe('\r\x1b[2K');
    const piped: string[] = [];
    const quiet = new ProgressBar({ isTTY: false, write: (c: string) => piped.push(c) });
    quiet.update(p);
    quiet.finish();
    expect(piped).toEqual([]);
  });

  it('fits one row of a narrow terminal, so clearing it leaves nothing behind', () => {
    const p: JobProgress = { done: 12, failed: 1, running: 1, total: 13 };
    const drawn: string[] = [];
    const bar = new ProgressBar({ isTTY: true, columns: 30, write: (c: string) => drawn.push(c) }, 'strategies', 0);
    bar.update(p);
    const row = drawn[0]!.replace('\r\x1b[2K', '');
    expect([...row]).toHaveLength(29);
    expect(row.endsWith('…')).toBe(true);
    const wide: string[] = [];
    new ProgressBar({ isTTY: true, columns: 200, write: (c: string) => wide.push(c) }, 'strategies', 0).update(p);
    expect(wide[0]).toBe(`\r\x1b[2K${progressLine(p, 28, 'strategies')}`);
  });
});

describe('parallel runner and bench collection', () => {
  it('runs sessions in parallel child processes and measures each one', async () => {
    const jobs: FixtureBenchJob[] = Array.from({ length: 4 }, (_, i) => ({ provider: 'claude_code', session: `s${i}`, path: writeSession(`par${i}`, 6), delay_ms: 400 }));
    const seen: JobProgress[] = [];
    const outcomes = await runJobsInParallel<FixtureBenchJob, FixtureBenchResult>({ jobs, jobModule, concurrency: 2, onProgress: (p) => seen.push({ ...p }) });
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const results = outcomes.map((o) => (o.ok ? o.result : null)!);
    expect(new Set(results.map((r) => r.pid)).size).toBe(2);
    expect(results.map((r) => r.eval.session_id)).toEqual(['s0', 's1', 's2', 's3']);
    // Two jobs were in flight at once, and their run times overlapped.
    expect(Math.max(...seen.map((p) => p.running))).toBe(2);
    const [a, b] = results;
    expect(a!.started_at < b!.finished_at && b!.started_at < a!.finished_at).toBe(true);
    expect(seen.at(-1)).toEqual({ done: 4, failed: 0, running: 0, total: 4 });
  });

  it('goes on when a session vanishes, a job throws, a worker crashes or hangs, and reports each', async () => {
    const paths = Array.from({ length: 5 }, (_, i) => writeSession(`mixed${i}`, 5));
    const jobs: FixtureBenchJob[] = [
      { provider: 'claude_code', session: 'ok0', path: paths[0]! },
      { provider: 'claude_code', session: 'throws', path: paths[1]!, mode: 'throw' },
      { provider: 'claude_code', session: 'crashes', path: paths[2]!, mode: 'crash' },
      { provider: 'claude_code', session: 'hangs', path: paths[3]!, mode: 'hang' },
      { provider: 'claude_code', session: 'vanishes', path: paths[4]! },
      { provider: 'claude_code', session: 'ok5', path: paths[0]! },
    ];
    const outcomes = await runJobsInParallel<FixtureBenchJob, FixtureBenchResult>({
      jobs,
      jobModule,
      concurrency: 1,
      jobTimeoutMs: 3000,
      // The session file disappears while the bench is running, after the first session finished.
      onProgress: (p) => {
        if (p.done === 1 && existsSync(paths[4]!)) rmSync(paths[4]!);
      },
    });
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.failure))).toEqual(['ok', 'failed', 'crashed', 'timeout', 'failed', 'ok']);
    const vanished = outcomes[4]!;
    expect(!vanished.ok && vanished.code).toBe('ENOENT');

    const collected = collectBench(outcomes as Parameters<typeof collectBench>[0]);
    const { result } = collected;
    expect(result.sessions).toBe(6);
    expect(result.sessions_measured).toBe(2);
    expect(result.sessions_failed).toBe(4);
    const failures = result.rows.filter((r) => r.strategy === null);
    expect(failures.map((r) => [r.session, r.failure])).toEqual([
      ['throws', 'session_evaluation_failed'],
      ['crashes', 'session_evaluation_failed'],
      ['hangs', 'session_evaluation_failed'],
      ['vanishes', 'session_evaluation_failed'],
    ]);
    expect(failures[3]!.error).toMatch(/^session file is gone: /);
    expect(failures.every((r) => r.context_before === null && r.recall === null)).toBe(true);
    expect(result.rows.filter((r) => r.strategy !== null)).toHaveLength(6);
    expect(validateBenchCommandResult(result), JSON.stringify(validateBenchCommandResult.errors)).toBe(true);
  }, 30_000);

  it('a session that fails on the file system says what failed where and what to do, not Node\'s errno text', async () => {
    const path = writeSession('full', 4);
    const outcomes = await runJobsInParallel<FixtureBenchJob, FixtureBenchResult>({ jobs: [{ provider: 'claude_code', session: 'full', path, mode: 'disk_full' }], jobModule, concurrency: 1 });
    const [failure] = collectBench(outcomes as Parameters<typeof collectBench>[0]).result.rows;
    expect(failure).toMatchObject({ session: 'full', failure: 'session_evaluation_failed', error: `write failed on ${path}.stage: the disk is full; free some space and run the command again (ENOSPC)` });
  }, 30_000);

  it("a session's failure keeps every line of its message, flattened: what broke is often said after the first", async () => {
    const path = writeSession('multiline', 4);
    const outcomes = await runJobsInParallel<FixtureBenchJob, FixtureBenchResult>({ jobs: [{ provider: 'claude_code', session: 'ml', path, mode: 'multiline' }], jobModule, concurrency: 1 });
    const [failure] = collectBench(outcomes as Parameters<typeof collectBench>[0]).result.rows;
    expect(failure!.error).toBe('plugin provider-x/0.1.0 provider/parse failed: Traceback (most recent call last): File "main.py", line 9, in parse ValueError: line 41 repeats a tool_use id');
    expect(benchCsv([failure!]).trimEnd().split('\n')).toHaveLength(2);
  }, 30_000);

  it('writes CSV or JSON rows and the HTML report to new files, and refuses taken paths', async () => {
    const jobs: FixtureBenchJob[] = [0, 1, 2].map((i) => ({ provider: 'claude_code', session: `w${i}`, path: writeSession(`w${i}`, 4 + 2 * i) }));
    const outcomes = await runJobsInParallel<BenchJob, BenchSessionResult>({ jobs, jobModule, concurrency: 2 });
    const collected = collectBench(outcomes);
    expect(collected.timelines).toHaveLength(3);
    const csvPath = join(dir, 'bench.csv');
    const htmlPath = join(dir, 'bench.html');
    const result = writeBenchOutputs(collected, { output: csvPath, html: htmlPath });
    expect(result).toMatchObject({ output_path: csvPath, html_path: htmlPath });
    const csv = readFileSync(csvPath, 'utf8').trimEnd().split('\n');
    expect(csv).toHaveLength(1 + 3 * 3);
    expect(csv.filter((l) => l.includes(',elide,'))).toHaveLength(3);
    expect(readFileSync(htmlPath, 'utf8')).toMatch(/^<!doctype html>/);

    const jsonPath = join(dir, 'bench.json');
    writeBenchOutputs(collectBench(outcomes), { output: jsonPath });
    const parsed = JSON.parse(readFileSync(jsonPath, 'utf8'));
    expect(validateBenchCommandResult(parsed)).toBe(true);
    expect(parsed.aggregates.map((a: { strategy: string }) => a.strategy)).toEqual(['elide', 'greedy', 'never']);
    expect(parsed.aggregates[2].no_plan_by_reason).toEqual({ below_trigger: 3 });

    const before = readdirSync(dir).sort();
    expect(() => writeBenchOutputs(collectBench(outcomes), { output: join(dir, 'new-rows.csv'), html: htmlPath })).toThrow(/already exists/);
    expect(readdirSync(dir).sort()).toEqual(before);
  }, 30_000);
});
