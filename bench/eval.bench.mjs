// Eval and bench benchmarks, each against a floor measured in the same run. They import the
// compiled kernel from dist/ (run after the build) and generate their sessions with the project's
// own fixture builders, bundled on the fly. A smoke run (bench/lib/scale.mjs) evaluates 1 MiB and
// benches 4 sessions (every fourth is a Codex rollout, so one is), one run each.
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { MIB, floorAndValue, nowMs, readSplitParse } from './lib/measure.mjs';
import { scaled } from './lib/scale.mjs';
import { tempHomeEnv } from './lib/temp-home.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const EVAL_MIB = scaled(10, 1);
const BENCH_SESSIONS = scaled(200, 4);
const dist = (path) => import(join(root, 'dist', path));

/** The fixture builders (TypeScript) bundled into one temporary ES module. */
async function fixtures(dir) {
  const entry = join(dir, 'fixtures-entry.ts');
  writeFileSync(
    entry,
    [
      `export { writeBigSession } from ${JSON.stringify(join(root, 'test/fixtures/claude/big-session.ts'))};`,
      `export { ClaudeSessionBuilder, longOutput } from ${JSON.stringify(join(root, 'test/fixtures/claude/session-builder.ts'))};`,
      `export { RolloutBuilder } from ${JSON.stringify(join(root, 'test/fixtures/codex/rollout-builder.ts'))};`,
    ].join('\n'),
  );
  const out = join(dir, 'fixtures.mjs');
  await build({ absWorkingDir: root, entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  return import(pathToFileURL(out).href);
}

const hourAgo = (path) => {
  const t = new Date(Date.now() - 3600_000);
  utimesSync(path, t, t);
  return path;
};

/** A small idle session with enough large tool outputs that plans fire at a low trigger. */
function writeSmallSession(f, env, i) {
  if (i % 4 === 3) {
    const id = `019c0000-0000-7000-8000-${String(i).padStart(12, '0')}`;
    const r = new f.RolloutBuilder({ id, paginated: true });
    r.sessionMeta().turnContext().preamble();
    for (let t = 0; t < 16; t++) {
      r.user(`Run step ${t} of job ${i}`);
      r.shell(`call_${t}`, `cat src/file_${t}.ts`, `FAILED at src/file_${t}.ts\n` + 'y'.repeat(2500));
      r.assistant(`Step ${t} done.`);
    }
    r.tokenCount({ input: 12_000, output: 100 });
    return hourAgo(r.writeTo(join(env.CODEX_HOME, 'sessions', '2026', '02', '23')));
  }
  const id = `3f0c2a9e-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const b = new f.ClaudeSessionBuilder({ sessionId: id });
  for (let t = 0; t < 16; t++) {
    b.user(`Step ${t}: run the tests for src/mod_${t}.ts`);
    b.tools([{ name: 'Bash', input: { command: `npm test -- mod_${t}` }, output: `error: test failed in src/mod_${t}.ts\n` + f.longOutput(`out${t}`, 60) }]);
    b.text(`Fixed mod_${t}.`);
  }
  b.lastPrompt(b.cursor, 'last');
  const dir = join(env.CLAUDE_CONFIG_DIR, 'projects', '-home-dev-projects-demo');
  mkdirSync(dir, { recursive: true });
  return hourAgo(b.write(join(dir, `${id}.jsonl`)));
}

export const benchmarks = [
  {
    name: `eval.all_strategies_${EVAL_MIB}mib_vs_parse_floor`,
    target: 'ratio <= 10',
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-eval-'));
      try {
        const f = await fixtures(dir);
        const env = tempHomeEnv(join(dir, 'home'));
        const projects = join(env.CLAUDE_CONFIG_DIR, 'projects', '-home-dev-projects-demo');
        mkdirSync(projects, { recursive: true });
        const path = join(projects, 'b16b16b1-0000-4000-8000-000000000128.jsonl');
        f.writeBigSession(path, { targetBytes: EVAL_MIB * MIB, records: EVAL_MIB * 500 });
        hourAgo(path);
        if (statSync(path).size < 0.9 * EVAL_MIB * MIB) throw new Error('the generated session is smaller than intended');
        const { Runtime } = await dist('kernel/services/runtime.js');
        const { evaluateFile, resolveEvalStrategies } = await dist('kernel/services/eval.js');
        const runtime = new Runtime({ env });
        try {
          const strategies = await resolveEvalStrategies(runtime);
          const once = () => evaluateFile(runtime, { provider: 'claude_code', path }, { strategies, trigger: 1000, floor: 0 });
          // The first eval starts the plugin processes, and the first read warms the page cache.
          await once();
          await readSplitParse(path);
          const measured = await floorAndValue(scaled(3, 1), {
            floor: () => readSplitParse(path),
            value: once,
            check: ({ result }) => {
              if (result.rows.length !== strategies.length || !result.rows.some((r) => r.execution_state === 'rendered')) throw new Error('eval produced no rendered rewrite');
            },
          });
          return { name: this.name, ...measured, unit: 'ms' };
        } finally {
          await runtime.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  {
    name: `bench.${BENCH_SESSIONS}_sessions_wall_vs_sum_of_sessions`,
    target: `ratio <= 0.7 on 2 cores (this machine: ${availableParallelism()})`,
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-bench-'));
      try {
        const f = await fixtures(dir);
        const env = tempHomeEnv(join(dir, 'home'));
        for (let i = 0; i < BENCH_SESSIONS; i++) writeSmallSession(f, env, i);
        const { planBench, benchJobModule } = await dist('kernel/services/bench.js');
        const { runJobsInParallel } = await dist('kernel/eval/parallel-runner.js');
        const options = { env, trigger: 1000, floor: 0, jobs: availableParallelism(), cwd: dir };
        const plan = await planBench(options);
        if (plan.jobs.length !== BENCH_SESSIONS) throw new Error(`discovered ${plan.jobs.length} sessions, expected ${BENCH_SESSIONS}`);
        // Wall time of the parallel run against the sum of each session's own time in its worker.
        const start = nowMs();
        const outcomes = await runJobsInParallel({ jobs: plan.jobs, jobModule: benchJobModule(), concurrency: options.jobs, env });
        const wall = nowMs() - start;
        const failed = outcomes.filter((o) => !o.ok);
        if (failed.length > 0) throw new Error(`${failed.length} sessions failed: ${failed[0].error}`);
        const sum = outcomes.reduce((n, o) => n + o.duration_ms, 0);
        return { name: this.name, value: wall, floor: sum, unit: 'ms' };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
];
