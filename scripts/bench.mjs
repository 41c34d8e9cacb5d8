#!/usr/bin/env node
// Runs every bench/*.bench.mjs benchmark and prints `name: value floor ratio`, the floor measured in
// the same run. `--only <substring>` filters by name; `--json` prints one JSON array instead.
// Benchmarks import the compiled code from dist/, so build first (npm run bench does).
// GOBSTOPPER_BENCH_SMOKE=1 shrinks every input and run count (bench/lib/scale.mjs) to check that
// the benchmarks still work, not to measure; each --json record then carries `smoke: true`.
// GOBSTOPPER_BENCH_DIR takes the *.bench.mjs files from another directory (the tests use it).
// A file that cannot be loaded is reported as a failed benchmark, `<file>: failed to load: …`
// (--json: `{file, error}`), and the run goes on to the other files.
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SMOKE } from '../bench/lib/scale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const json = args.includes('--json');
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
if (onlyAt >= 0 && !only) {
  console.error('bench: --only needs a substring of a benchmark name');
  process.exit(2);
}
if (SMOKE) console.error('bench: smoke run (GOBSTOPPER_BENCH_SMOKE=1): sizes and runs are shrunk, so the ratios mean nothing against the targets');

const benchDir = process.env.GOBSTOPPER_BENCH_DIR ? resolve(process.env.GOBSTOPPER_BENCH_DIR) : join(root, 'bench');
const files = readdirSync(benchDir).filter((f) => f.endsWith('.bench.mjs')).sort();
const results = [];
let failed = 0;
const record = (r) => results.push(SMOKE ? { ...r, smoke: true } : r);
for (const file of files) {
  let module;
  try {
    module = await import(pathToFileURL(join(benchDir, file)).href);
    // A renamed export would otherwise offer no benchmark and pass unseen.
    if (!Array.isArray(module.benchmarks)) throw new Error('it exports no `benchmarks` array');
  } catch (error) {
    failed += 1;
    record({ file, error: String(error?.message ?? error) });
    if (!json) console.log(`${file}: failed to load: ${error?.message ?? error}`);
    continue;
  }
  for (const bench of module.benchmarks) {
    if (only && !bench.name.includes(only)) continue;
    try {
      const { name, value, floor, unit } = await bench.run();
      const ratio = floor > 0 ? value / floor : null;
      record({ name, value: round(value), floor: round(floor), unit, ratio: ratio === null ? null : round(ratio), target: bench.target ?? null, file });
      if (!json) console.log(`${name}: ${fmt(value)} ${unit} ${fmt(floor)} ${unit} ${ratio === null ? 'n/a' : `${fmt(ratio)}x`}${bench.target ? `  (target ${bench.target})` : ''}`);
    } catch (error) {
      failed += 1;
      record({ name: bench.name, error: String(error?.message ?? error), file });
      if (!json) console.log(`${bench.name}: failed: ${error?.message ?? error}`);
    }
  }
}
if (json) console.log(JSON.stringify(results, null, 2));
if (results.length === 0) {
  console.error(only ? `bench: no benchmark matches "${only}"` : 'bench: no benchmarks found');
  process.exit(1);
}
process.exit(failed > 0 ? 1 : 0);

function round(n) {
  return Math.round(n * 10000) / 10000;
}
function fmt(n) {
  return n >= 100 ? n.toFixed(1) : n >= 1 ? n.toFixed(2) : n.toFixed(4);
}
