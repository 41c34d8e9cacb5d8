/**
 * Real-client tier: the installed `claude` and `codex` (GOBSTOPPER_CLAUDE_BIN / GOBSTOPPER_CODEX_BIN,
 * set by .ci/install-real-clients) resume copies of the real transcripts in ../shared/fixtures/real
 * offline, against the stub, and the rehearsal compares what they rebuilt with the prediction made
 * from the provider plugins' parse. Skipped with a message when the clients or the fixtures are absent.
 */
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectLoopbackNamespace, rehearse } from '../../kernel/rehearse/index.js';
import type { RehearsalProvider } from '../../schemas/generated/types.js';
import type { RehearseResult } from '../../kernel/rehearse/index.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';
import { predictClientContext, withAppendedUserTurn } from './client-context.js';
import { createCodexSession } from './codex-session.js';
import { renderFork } from './render-fork.js';
import { compareContext, predictionFromItems } from '../../kernel/rehearse/index.js';
import { runJson } from '../helpers/cli.js';
import { parseTranscript } from '../../plugins/provider-claude-code/src/parse.js';
import { parse as parseRollout } from '../../plugins/provider-codex/src/parse.js';
import { verify as verifyRollout } from '../../plugins/provider-codex/src/verify.js';
import { RolloutBuilder, item } from '../fixtures/codex/rollout-builder.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const realDir = join(repoRoot, '..', 'shared', 'fixtures', 'real');
const claudeBin = process.env.GOBSTOPPER_CLAUDE_BIN || undefined;
const codexBin = process.env.GOBSTOPPER_CODEX_BIN || undefined;
const fixturesPresent = existsSync(realDir);
if (!claudeBin || !codexBin) console.log('real-client tier skipped for a missing client: run .ci/install-real-clients (sets GOBSTOPPER_CLAUDE_BIN / GOBSTOPPER_CODEX_BIN)');
if (!fixturesPresent) console.log(`real-client tier skipped: ${realDir} is absent`);

/** Main sessions only: sub-agent files and the composites of record shapes are refused by the clients (../shared/README.md). */
function mainFixtures(provider: 'claude' | 'codex'): string[] {
  if (!fixturesPresent) return [];
  return readdirSync(join(realDir, provider))
    .filter((f) => f.endsWith('.jsonl') && !f.includes('jazzyalex') && !f.includes('__subagents__'))
    .sort();
}

const TIMEOUT_MS = 45_000;

/** True once `pid` has exited (a zombie waiting for its reaper counts as gone). */
async function gone(pid: number, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    let state = '';
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '';
    } catch {
      return true;
    }
    if (state === 'Z' || state === 'X') return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

let work: string;
let userHome: TempHome;
let userHomeHash: string;
let savedEnv: NodeJS.ProcessEnv;
let expectedNetwork: 'netns' | 'loopback';

function treeDigest(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      hash.update(full.slice(root.length) + '\0');
      if (entry.isDirectory()) walk(full);
      else hash.update(readFileSync(full));
    }
  };
  walk(root);
  return hash.digest('hex');
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'gob-realclient-'));
  // Stand-in for the user's homes: the rehearsals must leave every byte of them as it was.
  savedEnv = { ...process.env };
  userHome = makeTempHome('gob-realclient-home-');
  Object.assign(process.env, userHome.env);
  const project = join(userHome.claudeHome, 'projects', '-home-user-project');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, `${randomUUID()}.jsonl`), '{"type":"user","message":{"role":"user","content":"hi"}}\n');
  userHomeHash = treeDigest(userHome.root);
  expectedNetwork = (await detectLoopbackNamespace()).available ? 'netns' : 'loopback';
});

afterAll(() => {
  const after = userHome ? treeDigest(userHome.root) : '';
  process.env = savedEnv;
  userHome?.cleanup();
  rmSync(work, { recursive: true, force: true });
  expect(after).toBe(userHomeHash);
});

async function rehearseFixture(provider: RehearsalProvider, path: string, clientBin: string) {
  const before = sha(path);
  const { sessionId, predicted } = await predictClientContext(provider, path);
  const report = await rehearse({ provider, path, sessionId, predicted, clientBin, timeoutMs: TIMEOUT_MS });
  console.log(
    `${provider} ${path.slice(path.lastIndexOf('/') + 1)}: ${report.status} in ${report.client.duration_ms} ms; ` +
      `rebuilt ${report.rebuilt?.messages} messages ~${report.rebuilt?.est_tokens} tokens; plugin est_tokens ${predicted.est_tokens} (client/plugin ${report.comparison?.token_ratio ?? 'n/a'})`,
  );
  expect(sha(path)).toBe(before);
  return { report, sessionId, predicted };
}

describe.skipIf(!claudeBin || !fixturesPresent)('Claude Code resumes every main real transcript as predicted', () => {
  for (const name of mainFixtures('claude')) {
    it(name, { timeout: 90_000 }, async () => {
      const { report, sessionId, predicted } = await rehearseFixture('claude_code', join(realDir, 'claude', name), claudeBin!);
      expect(report.status, report.reason).toBe('passed');
      expect(report.accepted).toBe(true);
      expect(report.resumed_session_id).toBe(sessionId);
      expect(report.network).toBe(expectedNetwork);
      expect(report.rebuilt).toMatchObject({ unanswered_tool_calls: 0, orphan_tool_results: 0, tool_calls: predicted.tool_calls, tool_results: predicted.tool_calls });
      expect(report.comparison?.equal, JSON.stringify(report.comparison?.checks)).toBe(true);
    });
  }
});

describe.skipIf(!codexBin || !fixturesPresent)('Codex resumes every main real rollout as predicted', () => {
  for (const name of mainFixtures('codex')) {
    it(name, { timeout: 90_000 }, async () => {
      const { report, sessionId, predicted } = await rehearseFixture('codex', join(realDir, 'codex', name), codexBin!);
      expect(report.status, report.reason).toBe('passed');
      expect(report.resumed_session_id).toBe(sessionId);
      expect(report.network).toBe(expectedNetwork);
      // A call the session ended on stays open in the transcript; Codex answers it with "aborted".
      const open = predicted.tool_calls - predicted.tool_results;
      expect(report.rebuilt).toMatchObject({ orphan_tool_results: 0, unanswered_tool_calls: open, tool_calls: predicted.tool_calls });
      expect(report.rebuilt?.client_added.synthetic_tool_results).toBe(open);
      expect(report.comparison?.equal, JSON.stringify(report.comparison?.checks)).toBe(true);
    });
  }
});

/**
 * What `apply --rehearse` does: the fork (elided + state card, rendered by the provider plugin) is
 * judged against the source's own rehearsal moved by the difference the plugin predicts. The
 * plugin's own direct prediction of the fork must hold too: what it estimates is what the client sends.
 */
async function rehearseRenderedFork(provider: RehearsalProvider, name: string, clientBin: string) {
  const dir = provider === 'claude_code' ? 'claude' : 'codex';
  const path = join(realDir, dir, name);
  const parseWith = (p: string) => (provider === 'claude_code' ? parseTranscript({ provider_id: provider, path: p }) : parseRollout({ provider_id: provider, path: p }));
  const source = await parseWith(path);
  const fork = await renderFork(provider, source, work);
  const forkTranscript = await parseWith(fork.path);
  const report = await rehearse({
    provider,
    path: fork.path,
    sessionId: fork.sessionId,
    predicted: predictionFromItems(forkTranscript.items),
    baseline: { path, sessionId: source.session.session_id, predicted: predictionFromItems(source.items) },
    clientBin,
    timeoutMs: TIMEOUT_MS,
  });
  console.log(
    `${provider} fork of ${name}: ${report.status}; ${fork.elided} records elided; client context ${report.baseline?.est_tokens} -> ${report.rebuilt?.est_tokens} tokens ` +
      `(plugin projection ${predictionFromItems(source.items).est_tokens} -> ${predictionFromItems(forkTranscript.items).est_tokens})`,
  );
  expect(report.status, report.reason).toBe('passed');
  expect(report.prediction_basis).toBe('baseline');
  expect(report.session_matches).toBe(true);
  expect(report.rebuilt!.units).toBe(report.baseline!.units + 1);
  if (fork.elided > 0) expect(report.rebuilt!.est_tokens).toBeLessThan(report.baseline!.est_tokens);
  const direct = compareContext(report.rebuilt!, predictionFromItems(forkTranscript.items));
  expect(direct.equal, JSON.stringify(direct.checks)).toBe(true);
  return { path: fork.path, report };
}

describe.skipIf(!claudeBin || !fixturesPresent)('Claude Code resumes the elided, carded fork of every main transcript', () => {
  for (const name of mainFixtures('claude')) it(name, { timeout: 120_000 }, () => rehearseRenderedFork('claude_code', name, claudeBin!));
});

describe.skipIf(!codexBin || !fixturesPresent)('Codex resumes the elided, carded fork of every main rollout', () => {
  for (const name of mainFixtures('codex')) it(name, { timeout: 120_000 }, () => rehearseRenderedFork('codex', name, codexBin!));
});

/**
 * `gobstopper rehearse <path>` as a user runs it: the built CLI and plugins, the prediction straight
 * from the provider's parse (`predictionFromItems`, no baseline, no help from this file).
 */
describe.skipIf(!claudeBin || !codexBin || !fixturesPresent)('a plain `gobstopper rehearse <path>` passes on every main real session', () => {
  const cases = [...mainFixtures('claude').map((name) => join(realDir, 'claude', name)), ...mainFixtures('codex').map((name) => join(realDir, 'codex', name))];
  for (const path of cases) {
    it(path.slice(path.lastIndexOf('/') + 1), { timeout: 90_000 }, async () => {
      const home = makeTempHome('gob-realclient-cli-');
      try {
        const { code, json } = await runJson<{ rehearsal: RehearseResult }>(['rehearse', path], { ...home.env, GOBSTOPPER_CLAUDE_BIN: claudeBin!, GOBSTOPPER_CODEX_BIN: codexBin! });
        const r = json.rehearsal;
        console.log(`cli ${path.slice(path.lastIndexOf('/') + 1)}: ${r.status}; predicted ${r.predicted?.est_tokens} rebuilt ${r.rebuilt?.est_tokens} (ratio ${r.comparison?.token_ratio})`);
        expect(code, r.reason).toBe(0);
        expect(r.status, r.reason).toBe('passed');
        expect(r.prediction_basis).toBe('direct');
        expect(r.reason).toBe(`accepted; the rebuilt context matches the prediction (${r.rebuilt!.messages.toLocaleString('en-US')} messages, ~${r.rebuilt!.est_tokens.toLocaleString('en-US')} tokens)`);
        expect(r.comparison?.checks.find((c) => c.name === 'tokens')?.outcome).toBe('equal');
        expect(r.comparison?.checks.find((c) => c.name === 'tool_calls')?.outcome).toBe('equal');
        expect(r.comparison?.checks.find((c) => c.name === 'tool_results')?.outcome).toBe('equal');
      } finally {
        home.cleanup();
      }
    });
  }
});

describe.skipIf(!codexBin)('a Codex rollout with tool outputs longer than the client sends', () => {
  /** Outputs on both sides of the client's budget, under no recorded policy and under a small one. */
  for (const policy of [null, { mode: 'tokens', limit: 2_000 }] as const) {
    it(`rehearses as predicted (${policy ? `${policy.mode} ${policy.limit}` : 'no recorded policy'})`, { timeout: 90_000 }, async () => {
      const home = makeTempHome('gob-realclient-long-');
      try {
        const b = new RolloutBuilder({ id: '019c0000-0000-7000-8000-000000000779' });
        b.sessionMeta();
        if (policy) b.push('turn_context', { turn_id: 't1', cwd: '/work/project', model: 'gpt-5.3-codex', truncation_policy: policy });
        else b.turnContext();
        b.preamble();
        [9_000, 30_000, 60_000, 200_000].forEach((size, k) => b.user(`step ${k}`).shell(`call_${k}`, `cat f${k}`, `line ${k}\n`.repeat(size / 8)).assistant(`done ${k}`));
        const dir = join(home.env.CODEX_HOME!, 'sessions', '2026', '02', '23');
        mkdirSync(dir, { recursive: true });
        const path = b.writeTo(dir);
        const { code, json } = await runJson<{ rehearsal: RehearseResult }>(['rehearse', path], { ...home.env, GOBSTOPPER_CODEX_BIN: codexBin! });
        const r = json.rehearsal;
        expect(code, r.reason).toBe(0);
        expect(r.status, r.reason).toBe('passed');
        expect(r.comparison?.checks.find((c) => c.name === 'tokens')?.outcome).toBe('equal');
        // The client did cut them: what it sent is far less than the outputs' own size.
        expect(r.rebuilt!.est_tokens).toBeLessThan(policy ? 12_000 : 40_000);
      } finally {
        home.cleanup();
      }
    });
  }
});

/**
 * Rehearses a rollout written by `build` (after its session_meta, turn context and preamble) in a
 * temporary Codex home, checking first, when asked, that verify finds it clean; requires a pass.
 */
async function rehearsedRollout(id: string, build: (b: RolloutBuilder) => void, options: { verified?: boolean } = {}): Promise<RehearseResult> {
  const home = makeTempHome('gob-realclient-rollout-');
  try {
    const b = new RolloutBuilder({ id });
    b.sessionMeta().turnContext().preamble();
    build(b);
    const dir = join(home.env.CODEX_HOME!, 'sessions', '2026', '02', '23');
    mkdirSync(dir, { recursive: true });
    const path = b.writeTo(dir);
    if (options.verified) {
      const verified = await runJson(['verify', path], home.env);
      expect(verified.code, JSON.stringify(verified.json)).toBe(0);
    }
    const { code, json } = await runJson<{ rehearsal: RehearseResult }>(['rehearse', path], { ...home.env, GOBSTOPPER_CODEX_BIN: codexBin! });
    const r = json.rehearsal;
    expect(code, r.reason).toBe(0);
    expect(r.status, r.reason).toBe('passed');
    return r;
  } finally {
    home.cleanup();
  }
}

describe.skipIf(!codexBin)('a Codex rollout compacted by the client, with tool calls in its replacement history', () => {
  it('rehearses as predicted: the history\'s calls and outputs are counted as the client sends them', { timeout: 90_000 }, async () => {
    const r = await rehearsedRollout('019c0000-0000-7000-8000-000000000782', (b) => {
      b.compacted([
        item.user('old step'),
        item.functionCall('c_old', 'exec_command', { cmd: 'cat big' }),
        item.functionOutput('c_old', 'out '.repeat(500)),
        item.functionCall('c_old2', 'exec_command', { cmd: 'ls' }),
        item.functionOutput('c_old2', 'a b c'),
        item.assistant('old done'),
      ]);
      b.user('step 1').shell('c_new', 'cat big2', 'x'.repeat(3000)).assistant('done');
    });
    expect(r.predicted).toMatchObject({ tool_calls: 3, tool_results: 3 });
  });
});

describe.skipIf(!codexBin)('a Codex rollout compacted by an older client, with a summary and no replacement history', () => {
  it('is resumed from the compaction on, as predicted: the calls before it are no longer sent', { timeout: 90_000 }, async () => {
    const r = await rehearsedRollout(
      '019c0000-0000-7000-8000-000000000783',
      (b) => {
        b.user('old step').shell('c_old', 'cat big', 'out '.repeat(500)).shell('c_old2', 'ls', 'a b c').assistant('old done');
        b.push('compacted', { message: 'Summary: the old step read big and listed the folder.' }).push('event_msg', { type: 'context_compacted' });
        b.user('step 1').shell('c_new', 'cat big2', 'x'.repeat(3000)).assistant('done');
      },
      { verified: true },
    );
    expect(r.predicted).toMatchObject({ tool_calls: 1, tool_results: 1 });
  });
});

describe.skipIf(!codexBin)('a Codex rollout whose last turns the user took back', () => {
  it('is resumed without those turns, as predicted: their calls and outputs are no longer sent', { timeout: 90_000 }, async () => {
    const r = await rehearsedRollout('019c0000-0000-7000-8000-000000000784', (b) => {
      b.user('step 1').shell('c_kept', 'cat small', 'k'.repeat(2000)).assistant('done 1');
      b.user('step 2').shell('c_back', 'cat big', 'x'.repeat(40_000)).shell('c_back2', 'ls', 'a b c').assistant('done 2');
      b.push('event_msg', { type: 'thread_rolled_back', num_turns: 1 });
      b.user('step 2, asked again').shell('c_new', 'cat other', 'y'.repeat(3000)).assistant('done again');
    });
    expect(r.predicted).toMatchObject({ tool_calls: 2, tool_results: 2 });
  });
});

describe.skipIf(!claudeBin || !fixturesPresent)('a Claude fork with a dangling parent on a user prompt', () => {
  it('is accepted with exit 0 but caught as a shorter context', { timeout: 90_000 }, async () => {
    const source = join(realDir, 'claude', 'marot__spotter__tool_heavy.jsonl');
    const { sessionId, predicted, transcript } = await predictClientContext('claude_code', source);
    const lines = readFileSync(source, 'utf8').split('\n');
    // A typed prompt (not a command echo or an interruption marker) with tool calls before it and
    // after it: cutting its parent link loses the earlier ones.
    const live = transcript.items.filter((i) => i.est_tokens > 0);
    const firstCall = live.find((i) => i.kind === 'tool_call')!;
    const lastCall = live.filter((i) => i.kind === 'tool_call').at(-1)!;
    const typed = (line: number) => {
      const content = (JSON.parse(lines[line]!) as { message?: { content?: unknown } }).message?.content;
      const text = typeof content === 'string' ? content : Array.isArray(content) ? String((content[0] as { text?: unknown })?.text ?? '') : '';
      return text.length > 0 && !text.startsWith('<') && !text.startsWith('[');
    };
    const target = live.find((i) => i.kind === 'user' && i.line_index > firstCall.line_index && i.line_index < lastCall.line_index && typed(i.line_index))!;
    expect(target).toBeDefined();
    const record = JSON.parse(lines[target.line_index]!) as Record<string, unknown>;
    record.parentUuid = randomUUID();
    lines[target.line_index] = JSON.stringify(record);
    const broken = join(work, `${sessionId}-dangling.jsonl`);
    writeFileSync(broken, lines.join('\n'));

    const report = await rehearse({ provider: 'claude_code', path: broken, sessionId, predicted, clientBin: claudeBin!, timeoutMs: TIMEOUT_MS });
    expect(report.client.exit_code).toBe(0);
    expect(report.accepted).toBe(true);
    expect(report.status).toBe('context_mismatch');
    expect(report.ok).toBe(false);
    expect(report.comparison?.verdict).toBe('shorter');
    expect(report.rebuilt!.tool_calls).toBeLessThan(predicted.tool_calls);
    expect(report.reason).toMatch(/^the client accepted the transcript but rebuilt a shorter context than predicted: /);
  });
});

describe.skipIf(!codexBin)('a state card appended to a paginated Codex rollout', () => {
  const CARD = '[gobstopper state card]\nGoal: keep the build green.';
  let rollout: { path: string; sessionId: string };
  let lastOrdinal: number;

  beforeAll(async () => {
    rollout = await createCodexSession(codexBin!, work, ['first question', 'second question']);
    const records = readFileSync(rollout.path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { ordinal?: number });
    expect(records.every((r) => typeof r.ordinal === 'number')).toBe(true);
    lastOrdinal = records.at(-1)!.ordinal!;
  }, 120_000);

  function withCard(label: string, card: Record<string, unknown>): string {
    const path = join(work, `${label}-${rollout.path.slice(rollout.path.lastIndexOf('/') + 1)}`);
    copyFileSync(rollout.path, path);
    appendFileSync(path, JSON.stringify(card) + '\n');
    return path;
  }

  const payload = { type: 'message', role: 'user', content: [{ type: 'input_text', text: CARD }] };

  it('with ordinal = last + 1 and a timestamp, is in the rebuilt context', { timeout: 90_000 }, async () => {
    const path = withCard('good', { timestamp: new Date().toISOString(), ordinal: lastOrdinal + 1, type: 'response_item', payload });
    const { predicted } = await predictClientContext('codex', path);
    const report = await rehearse({ provider: 'codex', path, sessionId: rollout.sessionId, predicted, clientBin: codexBin!, timeoutMs: TIMEOUT_MS });
    expect(report.status, report.reason).toBe('passed');
  });

  it('without an ordinal, is caught although the client gives exit 1 for it', { timeout: 90_000 }, async () => {
    const { predicted: base } = await predictClientContext('codex', rollout.path);
    const predicted = withAppendedUserTurn(base, Buffer.byteLength(JSON.stringify(payload)) + 1);
    const path = withCard('no-ordinal', { timestamp: new Date().toISOString(), type: 'response_item', payload });
    const report = await rehearse({ provider: 'codex', path, sessionId: rollout.sessionId, predicted, clientBin: codexBin!, timeoutMs: TIMEOUT_MS });
    expect(report.client.exit_code).toBe(1);
    expect(report.status).toBe('rejected');
    expect(report.ok).toBe(false);
    expect(report.reason).toMatch(/^the client exited 1/);
  });

  it('with a null timestamp, is silently dropped by the client and caught as a shorter context', { timeout: 90_000 }, async () => {
    const { predicted: base } = await predictClientContext('codex', rollout.path);
    const predicted = withAppendedUserTurn(base, Buffer.byteLength(JSON.stringify(payload)) + 1);
    const path = withCard('null-timestamp', { timestamp: null, ordinal: lastOrdinal + 1, type: 'response_item', payload });
    const report = await rehearse({ provider: 'codex', path, sessionId: rollout.sessionId, predicted, clientBin: codexBin!, timeoutMs: TIMEOUT_MS });
    expect(report.client.exit_code).toBe(0);
    expect(report.status).toBe('context_mismatch');
    expect(report.comparison?.checks.find((c) => c.name === 'messages')?.outcome).toBe('shorter');
  });
});

/**
 * Codex 0.171 cannot read a session_meta without id, timestamp, cwd, originator or cli_version and
 * resumes one with every other field gone (docs/design.md); verify must draw the same line.
 */
describe.skipIf(!codexBin)('a Codex rollout whose session_meta lacks a field', () => {
  const REQUIRED = ['id', 'timestamp', 'cwd', 'originator', 'cli_version'];
  let rollout: { path: string; sessionId: string };

  beforeAll(async () => {
    rollout = await createCodexSession(codexBin!, work, ['first question']);
  }, 120_000);

  const metaOf = (text: string) => JSON.parse(text.slice(0, text.indexOf('\n'))) as { payload: Record<string, unknown> };

  /** A copy without `fields` in its first session_meta; rehearse files it under the thread's id. */
  function without(label: string, fields: string[]): string {
    const text = readFileSync(rollout.path, 'utf8');
    const record = metaOf(text);
    for (const field of fields) delete record.payload[field];
    const path = join(work, `no-${label}-${rollout.path.slice(rollout.path.lastIndexOf('/') + 1)}`);
    writeFileSync(path, JSON.stringify(record) + text.slice(text.indexOf('\n')));
    return path;
  }

  for (const field of REQUIRED) {
    it(`without ${field}, is refused by the client and reported by verify`, { timeout: 90_000 }, async () => {
      const path = without(field, [field]);
      const findings = (await verifyRollout({ provider_id: 'codex', path })).findings.filter((f) => f.code === 'invalid_session_meta');
      expect(findings.map((f) => f.message)).toEqual([`session_meta on line 1 lacks the ${field} field the client needs to read it`]);
      const { predicted } = await predictClientContext('codex', rollout.path);
      const report = await rehearse({ provider: 'codex', path, sessionId: rollout.sessionId, predicted, clientBin: codexBin!, timeoutMs: TIMEOUT_MS });
      expect(report.client.exit_code).toBe(1);
      expect(report.status).toBe('rejected');
      expect(report.reason).toMatch(/^the client exited 1 without sending a model request: .*failed to read session metadata/);
    });
  }

  it('with no field but those, is resumed as predicted and not reported', { timeout: 90_000 }, async () => {
    const others = Object.keys(metaOf(readFileSync(rollout.path, 'utf8')).payload).filter((f) => !REQUIRED.includes(f));
    expect(others).toEqual(expect.arrayContaining(['session_id', 'source', 'model_provider', 'base_instructions', 'history_mode']));
    const path = without('others', others);
    expect((await verifyRollout({ provider_id: 'codex', path })).findings.filter((f) => f.code === 'invalid_session_meta')).toEqual([]);
    const { predicted } = await predictClientContext('codex', path);
    const report = await rehearse({ provider: 'codex', path, sessionId: rollout.sessionId, predicted, clientBin: codexBin!, timeoutMs: TIMEOUT_MS });
    expect(report.status, report.reason).toBe('passed');
  });
});

describe('bounds that hold whichever client is installed', () => {
  it('kills a client that hangs at the timeout and frees the port', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(work, 'hang-'));
    const pidFile = join(dir, 'helper.pid');
    const bin = join(dir, 'claude');
    writeFileSync(
      bin,
      `#!/usr/bin/env node\nconst { spawn } = require('node:child_process');\nconst h = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });\nrequire('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(h.pid));\nsetInterval(() => {}, 1000);\n`,
      { mode: 0o755 },
    );
    const transcript = join(dir, 'session.jsonl');
    writeFileSync(transcript, '{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}\n');
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const report = await rehearse({ provider: 'claude_code', path: transcript, sessionId: randomUUID(), clientBin: bin, timeoutMs: 2000, network: 'loopback', stubPort: port });
    expect(report.status).toBe('timed_out');
    const helper = Number(readFileSync(pidFile, 'utf8'));
    expect(await gone(helper)).toBe(true);
    const rebound = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    expect(rebound).toBe(true);
  });

  it('gives a clear error when the stub port is already in use', async () => {
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as { port: number }).port;
    const transcript = join(work, 'port.jsonl');
    writeFileSync(transcript, '{"type":"user"}\n');
    try {
      await expect(rehearse({ provider: 'claude_code', path: transcript, sessionId: randomUUID(), clientBin: process.execPath, network: 'loopback', stubPort: port })).rejects.toMatchObject({
        code: 'stub_port_in_use',
      });
    } finally {
      holder.close();
    }
  });
});
