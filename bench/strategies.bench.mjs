// Every built-in strategy and the heuristic scorer over 100,000 records against the same code over
// a quarter of them, in-process (no plugin transport): a linear or n log n step stays near 4x, a
// quadratic one shows as 16x. The strategy definitions and session builders are bundled from source.
// A smoke run (bench/lib/scale.mjs) uses 2,000 records against 500, one run each.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { median, nowMs } from './lib/measure.mjs';
import { scaled } from './lib/scale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RECORDS = scaled(100_000, 2_000);
const RUNS = scaled(3, 1);
// largeSession(steps) holds 2 + 3 x steps records.
const LARGE_STEPS = Math.ceil((RECORDS - 2) / 3);
const SMALL_STEPS = LARGE_STEPS / 4;
const sizes = `${RECORDS.toLocaleString('en-US')} records vs ${(RECORDS / 4).toLocaleString('en-US')}`;

let loaded;
/** The in-process host, the scorer and the session builders, bundled once into a temporary module. */
async function load() {
  if (loaded) return loaded;
  // Inside node_modules, so the bundle's package imports resolve to the project's own.
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'gob-bench-strategies-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const entry = join(dir, 'entry.ts');
  writeFileSync(
    entry,
    [
      `export { runStrategy, STRATEGIES } from ${JSON.stringify(join(root, 'test/unit/strategies/in-process-host.ts'))};`,
      `export { scoreHeuristic } from ${JSON.stringify(join(root, 'plugins/scorer-heuristic/src/heuristic.ts'))};`,
      `export { staleCandidates } from ${JSON.stringify(join(root, 'sdk/strategy/candidates.ts'))};`,
      `export { proposeParams } from ${JSON.stringify(join(root, 'test/fixtures/transcripts/params.ts'))};`,
      `export { largeSession } from ${JSON.stringify(join(root, 'test/fixtures/transcripts/sessions.ts'))};`,
    ].join('\n'),
  );
  const out = join(dir, 'strategies.mjs');
  await build({ absWorkingDir: root, entryPoints: [entry], outfile: out, bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning' });
  const m = await import(pathToFileURL(out).href);
  // A floor far below the context makes every strategy walk most of the transcript.
  const params = (steps) => m.proposeParams(m.largeSession(steps).items, { policy: { trigger_tokens: 1000, floor_tokens: 1000, min_savings_tokens: 0 } });
  loaded = { m, small: params(SMALL_STEPS), large: params(LARGE_STEPS) };
  if (loaded.large.items.length < RECORDS) throw new Error(`the large session has ${loaded.large.items.length} records, expected ${RECORDS.toLocaleString('en-US')}`);
  return loaded;
}

async function timed(runs, fn) {
  const values = [];
  for (let i = 0; i < runs; i++) {
    const start = nowMs();
    await fn();
    values.push(nowMs() - start);
  }
  return median(values);
}

async function scaling(name, run) {
  const { small, large } = await load();
  await run(small);
  const floor = await timed(RUNS, () => run(small));
  const value = await timed(RUNS, () => run(large));
  return { name, value, floor, unit: 'ms' };
}

const ids = ['elide', 'compacted', 'structured', 'scored', 'dedupe', 'micro', 'middle', 'cache_aware', 'cliff', 'sawtooth', 'cache_edits', 'auto'];

export const benchmarks = [
  {
    name: `scorer heuristic, ${sizes}`,
    target: 'ratio <= 10 (4x the records)',
    run() {
      return scaling(this.name, async (p) => {
        const { m } = await load();
        m.scoreHeuristic(p.items, m.staleCandidates(p.items, 8).map((i) => i.line_index));
      });
    },
  },
  ...ids.map((id) => ({
    name: `strategy ${id}, ${sizes}`,
    target: 'ratio <= 10 (4x the records)',
    run() {
      return scaling(this.name, async (p) => (await load()).m.runStrategy(id, p));
    },
  })),
];
