// Resume rehearsal overhead: a full `rehearse` (hash, private homes, copy, stub, loopback-only
// namespace when available, analysis, cleanup) against the floor of a bare resume by the same client
// against the same in-process stub, with a home prepared beforehand. Target: ≤ 1.5× the floor.
// Needs the real clients (GOBSTOPPER_CLAUDE_BIN / GOBSTOPPER_CODEX_BIN, see .ci/install-real-clients);
// without them there is nothing to measure and no benchmark is offered. A smoke run
// (bench/lib/scale.mjs) uses 12 turns and one run.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { median, nowMs } from './lib/measure.mjs';
import { scaled } from './lib/scale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(join(root, 'dist', path));
const RUNS = scaled(3, 1);
const TURNS = scaled(120, 12);

/**
 * A TURNS-turn Claude session with a tool call per turn, in the on-disk shape. Assistant records carry
 * the full API message (type, model, usage): Claude Code 2.1.197 hangs before its first request on
 * a transcript whose assistant records lack them.
 */
function writeClaudeSession(dir, sessionId) {
  const lines = [];
  let parent = null;
  const envelope = { isSidechain: false, userType: 'external', version: '2.1.39', sessionId, cwd: '/home/u/proj' };
  const usage = { input_tokens: 1200, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const push = (type, message) => {
    const uuid = randomUUID();
    lines.push(JSON.stringify({ type, uuid, parentUuid: parent, ...envelope, timestamp: new Date(1_700_000_000_000 + lines.length * 1000).toISOString(), message }));
    parent = uuid;
  };
  const reply = (id, content) => ({ id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason: null, stop_sequence: null, usage });
  for (let i = 0; i < TURNS; i++) {
    push('user', { role: 'user', content: `Step ${i}: check module ${i % 17} and report.` });
    push('assistant', reply(`msg_bench_${i}_a`, [{ type: 'tool_use', id: `toolu_bench_${i}`, name: 'Bash', input: { command: `npm test -- module-${i % 17}` } }]));
    push('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_bench_${i}`, content: `PASS module-${i % 17}\n`.repeat(20) }] });
    push('assistant', reply(`msg_bench_${i}_b`, [{ type: 'text', text: `Module ${i % 17} passes.` }]));
  }
  const path = join(dir, `${sessionId}.jsonl`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** A TURNS-turn legacy Codex rollout (no ordinals), recorded for a custom provider. */
function writeCodexRollout(dir, sessionId) {
  const records = [{ timestamp: '2026-01-02T03:04:05.000Z', type: 'session_meta', payload: { id: sessionId, timestamp: '2026-01-02T03:04:05.000Z', cwd: '/home/u/proj', originator: 'codex_cli_rs', cli_version: '0.171.0' } }];
  const item = (payload) => records.push({ timestamp: '2026-01-02T03:04:06.000Z', type: 'response_item', payload });
  for (let i = 0; i < TURNS; i++) {
    item({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `Step ${i}: check module ${i % 17}.` }] });
    item({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: `npm test -- module-${i % 17}` }), call_id: `call_bench_${i}` });
    item({ type: 'function_call_output', call_id: `call_bench_${i}`, output: `PASS module-${i % 17}\n`.repeat(20) });
    item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Module ${i % 17} passes.` }] });
  }
  const path = join(dir, `rollout-2026-01-02T03-04-05-${sessionId}.jsonl`);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

/** The floor: the client resuming a copy already in place, against a stub already listening. */
async function bareResume(provider, bin, source, sessionId) {
  const { startStubServer } = await dist('kernel/rehearse/stub-server/server.js');
  const { prepareClaude } = await dist('kernel/rehearse/run/claude-layout.js');
  const { prepareCodex } = await dist('kernel/rehearse/run/codex-layout.js');
  const workDir = mkdtempSync(join(tmpdir(), 'gob-bench-bare-'));
  const stub = await startStubServer();
  try {
    const input = { workDir, sourcePath: source, sessionId, clientBin: bin, probe: 'bench probe' };
    const launch = (provider === 'claude_code' ? prepareClaude(input) : prepareCodex(input)).launch(stub.baseUrl);
    const started = nowMs();
    const result = await execa(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, extendEnv: false, stdin: 'ignore', reject: false, timeout: 60_000 });
    const elapsed = nowMs() - started;
    if (result.exitCode !== 0 || stub.modelRequests().length === 0) throw new Error(`bare ${provider} resume failed: exit ${result.exitCode}`);
    return elapsed;
  } finally {
    await stub.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

function overheadBenchmark(provider, bin) {
  return {
    name: `rehearse ${provider} resume (${TURNS} turns) vs bare client resume`,
    target: '≤ 1.5×',
    async run() {
      const { rehearse } = await dist('kernel/rehearse/run/rehearse.js');
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-rehearse-'));
      try {
        const sessionId = provider === 'claude_code' ? randomUUID() : '019b0000-0000-7000-8000-00000000beef';
        const source = provider === 'claude_code' ? writeClaudeSession(dir, sessionId) : writeCodexRollout(dir, sessionId);
        // One untimed run of each warms the page cache and the client's first-start work.
        await bareResume(provider, bin, source, sessionId);
        const bare = [];
        const full = [];
        for (let i = 0; i < RUNS; i++) {
          bare.push(await bareResume(provider, bin, source, sessionId));
          const started = nowMs();
          const report = await rehearse({ provider, path: source, sessionId, clientBin: bin, timeoutMs: 60_000 });
          full.push(nowMs() - started);
          if (!report.accepted) throw new Error(`rehearse did not pass: ${report.reason}`);
        }
        return { name: this.name, value: median(full), floor: median(bare), unit: 'ms' };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const clients = [
  ['claude_code', process.env.GOBSTOPPER_CLAUDE_BIN],
  ['codex', process.env.GOBSTOPPER_CODEX_BIN],
];
export const benchmarks = clients.filter(([, bin]) => bin).map(([provider, bin]) => overheadBenchmark(provider, bin));
if (benchmarks.length === 0) console.error('rehearse benchmarks skipped: no real client installed (run .ci/install-real-clients)');
