// Plugin host benchmarks, each a ratio against a floor measured in the same run. They import the
// compiled kernel from dist/ (run after the build). A smoke run (bench/lib/scale.mjs) sends 2,000
// items instead of 100,000, and far fewer requests and CLI starts.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { median, nowMs } from './lib/measure.mjs';
import { scaled } from './lib/scale.mjs';
import { tempHomeEnv } from './lib/temp-home.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ITEMS = scaled(100_000, 2_000);
/** Timed round trips of the trivial request, after WARM_UPS untimed ones. */
const ROUND_TRIPS = scaled(2000, 100);
const WARM_UPS = scaled(300, 20);
/** Requests of each transcript benchmark, at least 2: the first floor (and fresh request) is dropped. */
const TRANSCRIPT_RUNS = scaled(6, 2);
const dist = (path) => import(join(root, 'dist', path));

/** The request type the channel sends (set once the compiled SDK is loaded). */
let StrategyPropose;

/** Builds the benchmark strategy into a temporary bundle and starts it through the real host. */
async function startBenchPlugin() {
  const dir = mkdtempSync(join(tmpdir(), 'gob-bench-'));
  const entry = join(dir, 'main.cjs');
  await build({ absWorkingDir: root, entryPoints: [join(root, 'bench', 'fixtures', 'keep-last-strategy.ts')], outfile: entry, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' });
  const manifest = {
    protocol_version: 1,
    id: 'bench-keep-last',
    version: '1.0.0',
    provides: { strategies: ['bench_keep_last'] },
    runtime: 'node',
    executable: 'main.cjs',
    files: { 'main.cjs': createHash('sha256').update(readFileSync(entry)).digest('hex') },
    engines: { gobstopper: '*' },
    limits: { timeout_ms: 120000, max_output_bytes: 268435456 },
  };
  writeFileSync(join(dir, 'gobstopper-plugin.json'), JSON.stringify(manifest, null, 2));
  const { admitBundle } = await dist('kernel/plugins/admission/admit.js');
  const { startBundle } = await dist('kernel/plugins/host/running-bundle.js');
  const running = await startBundle(admitBundle(dir), { hostVersion: 'bench' });
  ({ StrategyPropose } = await dist('sdk/protocol.js'));
  return { running, cleanup: async () => { await running.channel.close(); rmSync(dir, { recursive: true, force: true }); } };
}

function items(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const result = i % 4 === 3;
    out.push({
      line_index: i,
      kind: result ? 'tool_result' : i % 4 === 0 ? 'user' : i % 4 === 1 ? 'assistant' : 'tool_call',
      est_tokens: result ? 1010 : 30,
      label: result ? 'Bash' : 'assistant',
      summary: result ? 'exit 0; 120 lines' : null,
      uuid: `0000${i}-aaaa-bbbb-cccc-dddddddddddd`,
      parent_uuid: i > 0 ? `0000${i - 1}-aaaa-bbbb-cccc-dddddddddddd` : null,
      tool_use_ids: i % 4 >= 2 ? [`toolu_${i >> 2}`] : [],
      elidable_bytes: result ? 4000 : null,
      elidable_parts: result ? 1 : 0,
      payload_sha256: createHash('sha256').update(String(i)).digest('hex'),
    });
  }
  return out;
}

function proposeParams(count) {
  return {
    strategy_id: 'bench_keep_last',
    session: { provider: 'claude_code', session_id: 'bench', path: '/tmp/bench.jsonl' },
    items: items(count),
    usage: { context_tokens: 1, lifetime_input_tokens: 1, lifetime_cached_tokens: 0, context_state: 'reported', lifetime_scope: 'full' },
    policy: {
      strategy: 'bench_keep_last', trigger_tokens: 250000, floor_tokens: 40000, min_savings_tokens: 4096, keep_recent_tool_outputs: 8,
      keep_score_threshold: null, min_interval_secs: 300, apply_hold_secs: 1800, block_tokens: 0, keep_recent_turns: 3, result_max_bytes: 500,
      quota_pressure: 'normal', adaptive: false, effective_trigger_tokens: 250000,
    },
    context_tokens: 1,
    active: false,
  };
}

/** The floor: one process serializing the request and parsing it back, and the same for the answer. */
function jsonRoundTripMs(request, response) {
  const start = nowMs();
  JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'strategy/propose', params: request }));
  JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: 1, result: response }));
  return nowMs() - start;
}

export const benchmarks = [
  {
    name: 'plugin.round_trip_trivial_median',
    target: 'value <= 0.2 ms',
    async run() {
      const { running, cleanup } = await startBenchPlugin();
      try {
        const params = proposeParams(1);
        const send = () => running.channel.request(StrategyPropose, params);
        for (let i = 0; i < WARM_UPS; i++) await send();
        const times = [];
        let result;
        for (let i = 0; i < ROUND_TRIPS; i++) {
          const start = nowMs();
          result = await send();
          times.push(nowMs() - start);
        }
        const floors = [];
        for (let i = 0; i < ROUND_TRIPS; i++) floors.push(jsonRoundTripMs(params, result));
        return { name: this.name, value: median(times), floor: median(floors), unit: 'ms' };
      } finally {
        await cleanup();
      }
    },
  },
  {
    name: `plugin.transcript_${ITEMS / 1000}k_propose`,
    target: 'ratio <= 3',
    async run() {
      const { running, cleanup } = await startBenchPlugin();
      try {
        const params = proposeParams(ITEMS);
        const times = [];
        let result;
        for (let i = 0; i < TRANSCRIPT_RUNS; i++) {
          // A fresh array each time: the same one again would travel as an items_ref (measured below).
          const fresh = { ...params, items: [...params.items] };
          const start = nowMs();
          result = await running.channel.request(StrategyPropose, fresh);
          if (i > 0) times.push(nowMs() - start);
        }
        // Every fourth item is a tool result, and the plugin keeps the newest 8.
        if (result.edits[0].line_indexes.length !== Math.floor(ITEMS / 4) - 8) throw new Error('the benchmark plugin returned an unexpected plan');
        const floors = [];
        for (let i = 0; i < TRANSCRIPT_RUNS; i++) floors.push(jsonRoundTripMs(params, result));
        return { name: this.name, value: median(times), floor: median(floors.slice(1)), unit: 'ms' };
      } finally {
        await cleanup();
      }
    },
  },
  {
    name: `plugin.transcript_${ITEMS / 1000}k_propose_again_by_items_ref`,
    target: 'for the record (the same items sent again are named, not resent)',
    async run() {
      const { running, cleanup } = await startBenchPlugin();
      try {
        const params = proposeParams(ITEMS);
        await running.channel.request(StrategyPropose, params);
        const times = [];
        let result;
        for (let i = 0; i < TRANSCRIPT_RUNS; i++) {
          const start = nowMs();
          result = await running.channel.request(StrategyPropose, params);
          times.push(nowMs() - start);
        }
        const floors = [];
        for (let i = 0; i < TRANSCRIPT_RUNS; i++) floors.push(jsonRoundTripMs(params, result));
        return { name: this.name, value: median(times), floor: median(floors.slice(1)), unit: 'ms' };
      } finally {
        await cleanup();
      }
    },
  },
  {
    name: 'cli.version_cold',
    target: 'ratio <= 5',
    async run() {
      const cli = join(root, 'bin', 'run.js');
      // An empty home: the start must not depend on (or touch) the configuration and plugins of
      // whoever runs the benchmark.
      const home = mkdtempSync(join(tmpdir(), 'gob-bench-cli-'));
      const env = tempHomeEnv(home);
      process.on('exit', () => rmSync(home, { recursive: true, force: true }));
      const time = (args) => {
        const start = nowMs();
        execFileSync(process.execPath, args, { stdio: 'ignore', env });
        return nowMs() - start;
      };
      time([cli, '--version']);
      const values = [];
      const floors = [];
      for (let i = 0; i < scaled(10, 1); i++) {
        values.push(time([cli, '--version']));
        floors.push(time(['-e', '0']));
      }
      return { name: this.name, value: median(values), floor: median(floors), unit: 'ms' };
    },
  },
];
