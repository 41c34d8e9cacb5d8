/**
 * The benchmarks (`npm run bench`) take many minutes at their full sizes, so nothing ran them, and
 * they broke unseen: one imported a renamed export, another sent a request by a bare method name
 * and waited out the 120 s timeout on every run. Shrunk by GOBSTOPPER_BENCH_SMOKE=1, every bench
 * file must load and every benchmark run and pass its own checks. And scripts/bench.mjs must report
 * a bench file it cannot load as a failure, not crash or pass over it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome } from '../helpers/temp-home.js';

const root = join(import.meta.dirname, '..', '..');
const benchDir = join(root, 'bench');

interface BenchRecord {
  file: string;
  name?: string;
  value?: number;
  floor?: number;
  error?: string;
  smoke?: boolean;
}

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** scripts/bench.mjs in a throwaway home: cli.version_cold starts the CLI with the environment it is given. */
function bench(args: string[], extraEnv: Record<string, string>, timeout: number) {
  const home = makeTempHome('gob-e2e-bench-smoke-');
  try {
    const result = spawnSync(process.execPath, [join(root, 'scripts', 'bench.mjs'), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home.env, ...extraEnv },
      encoding: 'utf8',
      timeout,
    });
    return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
  } finally {
    home.cleanup();
  }
}

function records(run: { stdout: string; stderr: string; status: number | null }): BenchRecord[] {
  try {
    return JSON.parse(run.stdout) as BenchRecord[];
  } catch {
    throw new Error(`bench --json printed no JSON (exit ${run.status}): ${run.stdout.slice(0, 400)} / ${run.stderr.slice(-2000)}`);
  }
}

/** The real clients rehearse.bench.mjs needs; without any it offers no benchmark and says so. */
const realClients = Object.fromEntries(['GOBSTOPPER_CLAUDE_BIN', 'GOBSTOPPER_CODEX_BIN'].flatMap((key) => (process.env[key] ? [[key, process.env[key]!]] : [])));
const REHEARSE_SKIPPED = 'rehearse benchmarks skipped: no real client installed';

describe('npm run bench', () => {
  it('GOBSTOPPER_BENCH_SMOKE=1 runs every benchmark of every bench file, shrunk, and each passes its own checks', { timeout: 240_000 }, () => {
    // A benchmark that builds a plugin request by hand has it checked against the schema too.
    const run = bench(['--json'], { GOBSTOPPER_BENCH_SMOKE: '1', GOBSTOPPER_CHECK_REQUESTS: '1', ...realClients }, 200_000);
    expect(run.signal, run.stderr).toBeNull();
    expect(run.stderr.split('\n')[0]).toMatch(/^bench: smoke run .*the ratios mean nothing against the targets/);
    const results = records(run);
    for (const record of results) {
      const which = `${record.file}: ${record.name ?? ''}`;
      expect(record.error, which).toBeUndefined();
      expect(Number.isFinite(record.value) && record.value! > 0, `${which} value ${record.value}`).toBe(true);
      expect(Number.isFinite(record.floor) && record.floor! > 0, `${which} floor ${record.floor}`).toBe(true);
      expect(record.smoke, which).toBe(true);
    }
    expect(run.status, run.stderr).toBe(0);

    const files = readdirSync(benchDir).filter((f) => f.endsWith('.bench.mjs')).sort();
    const covered = new Set(results.map((r) => r.file));
    const rehearsals = results.filter((r) => r.file === 'rehearse.bench.mjs');
    expect(rehearsals).toHaveLength(Object.keys(realClients).length);
    if (rehearsals.length === 0) {
      // Without a client there is nothing to rehearse: the file must have loaded and said why.
      expect(run.stderr).toContain(REHEARSE_SKIPPED);
      covered.add('rehearse.bench.mjs');
    }
    expect([...covered].sort()).toEqual(files);
  });

  it('reports a bench file it cannot load as a failed benchmark, runs the others, and exits 1', () => {
    scratch = mkdtempSync(join(tmpdir(), 'gob-e2e-bench-dir-'));
    writeFileSync(join(scratch, 'a-throws.bench.mjs'), "throw new Error('broken at import');\n");
    writeFileSync(join(scratch, 'b-renamed.bench.mjs'), "import { noSuchExport } from 'node:path';\nexport const benchmarks = [noSuchExport];\n");
    writeFileSync(join(scratch, 'c-no-benchmarks.bench.mjs'), 'export const benches = [];\n');
    writeFileSync(join(scratch, 'd-fine.bench.mjs'), "export const benchmarks = [{ name: 'fine', run: () => ({ name: 'fine', value: 2, floor: 1, unit: 'ms' }) }];\n");

    const text = bench([], { GOBSTOPPER_BENCH_DIR: scratch }, 30_000);
    expect(text.status, text.stderr).toBe(1);
    expect(text.stdout.split('\n')).toEqual([
      'a-throws.bench.mjs: failed to load: broken at import',
      expect.stringMatching(/^b-renamed\.bench\.mjs: failed to load: .*noSuchExport/),
      'c-no-benchmarks.bench.mjs: failed to load: it exports no `benchmarks` array',
      'fine: 2.00 ms 1.00 ms 2.00x',
      '',
    ]);

    const json = bench(['--json'], { GOBSTOPPER_BENCH_DIR: scratch }, 30_000);
    expect(json.status, json.stderr).toBe(1);
    expect(records(json)).toEqual([
      { file: 'a-throws.bench.mjs', error: 'broken at import' },
      { file: 'b-renamed.bench.mjs', error: expect.stringContaining('noSuchExport') },
      { file: 'c-no-benchmarks.bench.mjs', error: 'it exports no `benchmarks` array' },
      { name: 'fine', value: 2, floor: 1, unit: 'ms', ratio: 2, target: null, file: 'd-fine.bench.mjs' },
    ]);
  });
});
