/**
 * `eval` and `eval-study` as a user runs them: the built CLI (`node scripts/build.mjs`) in a
 * throwaway home holding generated sessions whose answers are known by construction: planted error
 * lines and constraints in old tool outputs (which elision removes) and in the protected recent
 * outputs (which it keeps), a decision in a user prompt (never elidable).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalCommandResult, EvalRow, RetentionManifest, RetentionStudyReport } from '../../schemas/generated/types.js';
import { validateEvalCommandResult, validateEvalStudyCommandResult } from '../../schemas/generated/validators.js';
import { fixturePluginBundle } from '../fixtures/bundles/build-bundle.js';
import { ClaudeSessionBuilder, longOutput } from '../fixtures/claude/session-builder.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { RolloutBuilder } from '../fixtures/codex/rollout-builder.js';
import { requireBuilt } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';
import { writeFakeClient } from '../unit/rehearse/fake-clients.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const bin = join(repoRoot, 'bin', 'run.js');

const CODEX_ID = '019c8a59-e9dd-71f0-9ae3-4079fe9726a9';
const CLAUDE_ID = '3f0c2a9e-5b1d-4c7e-9a2f-0d6b8e4c1a7f';
const TURNS = 20;
const KEEP = 8;
/** Text that must never reach a table, a row or an error. */
const SECRET = 'PLANTED-SECRET-7731';
const BUILTIN_STRATEGIES = ['agentic', 'auto', 'cache_aware', 'cache_edits', 'cliff', 'compacted', 'dedupe', 'elide', 'micro', 'middle', 'sawtooth', 'scored', 'structured'];
const LOW = ['--trigger', '1000', '--floor', '0'];

let home: TempHome;
let work: string;
let codexPath: string;
let claudePath: string;
/** Physical lines of the Codex tool outputs, oldest first. */
let outputLines: number[];

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hourAgo = (path: string) => {
  const t = new Date(Date.now() - 3600_000);
  utimesSync(path, t, t);
  return path;
};

/**
 * A paginated Codex rollout: a user prompt with a decision, then 20 tool outputs of ~4 KB. Each
 * output starts with a unique error line; even ones also hold a constraint. With the default
 * keep_recent_tool_outputs = 8, elision removes outputs 0-11 and keeps 12-19.
 */
function plantedRollout(): string {
  const r = new RolloutBuilder({ id: CODEX_ID, paginated: true });
  r.sessionMeta().turnContext().preamble();
  r.user('We decided to use the staging bucket at /srv/app/releases for every deploy');
  outputLines = [];
  for (let i = 0; i < TURNS; i++) {
    r.user(`Run step ${i}`);
    const callLine = r.nextLine;
    const constraint = i % 2 === 0 ? `never drop the shard_${i} index without a naïve backup\n` : '';
    r.shell(`call_${i}`, `cat src/file_${i}.ts`, `error: planted failure E7${i} in /srv/data/shard_${i}.db\n${constraint}${SECRET}\n${'y'.repeat(4000)}`);
    outputLines.push(callLine + 1);
    r.assistant(`Step ${i} is done.`);
  }
  return hourAgo(r.writeTo(join(home.codexHome, 'sessions', '2026', '02', '23')));
}

function plantedClaude(): string {
  const b: ClaudeSessionBuilder = modernSession({ sessionId: CLAUDE_ID });
  for (let i = 0; i < TURNS; i++) {
    b.user(`Step ${i}: run the tests for src/mod_${i}.ts`);
    b.tools([{ name: 'Bash', input: { command: `npm test -- mod_${i}` }, output: `error: test failed in src/mod_${i}.ts\n${SECRET}\n` + longOutput(`out${i}`, 120) }]);
    b.text(`Fixed mod_${i}.`);
  }
  b.lastPrompt(b.cursor, 'last');
  const dir = join(home.claudeHome, 'projects', '-home-dev-projects-demo');
  mkdirSync(dir, { recursive: true });
  return hourAgo(b.write(join(dir, `${CLAUDE_ID}.jsonl`)));
}

function gob(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', ...home.env, ...env },
    encoding: 'utf8',
    timeout: 180_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json<T = Record<string, any>>(args: string[], env?: Record<string, string>) {
  const result = gob([...args, '--json'], env);
  if (result.status !== 0) expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  return { ...result, body: JSON.parse(result.stdout) as T };
}

/** Every file under the home with its hash: what "nothing changed" means. */
function treeDigest(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name);
    out[path] = e.isFile() ? `${statSync(path).mode.toString(8)} ${sha256(readFileSync(path))}` : e.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

const row = (result: EvalCommandResult, strategy: string) => result.rows.find((r) => r.strategy === strategy)!;

describe('eval (built CLI)', () => {
  requireBuilt('dist/cli/commands/eval.js');
  let codexEval: EvalCommandResult;

  beforeAll(() => {
    home = makeTempHome('gob-e2e-eval-');
    work = mkdtempSync(join(tmpdir(), 'gob-e2e-eval-work-'));
    codexPath = plantedRollout();
    claudePath = plantedClaude();
  });
  afterAll(() => {
    home.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('measures every strategy side by side on a Codex session and leaves the home byte-identical', () => {
    const before = treeDigest(home.root);
    const { status, body, stderr } = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW]);
    expect(status, stderr).toBe(0);
    expect(validateEvalCommandResult(body), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
    expect(treeDigest(home.root)).toEqual(before);
    codexEval = body;

    expect(body.rows.map((r) => r.strategy)).toEqual(BUILTIN_STRATEGIES);
    expect(body).toMatchObject({ provider: 'codex', session_id: CODEX_ID, source_sha256: sha256(readFileSync(codexPath)), token_basis: 'estimated', effective_trigger_tokens: 1000, floor_tokens: 0, keep_recent_tool_outputs: KEEP });
    // The protected tail starts at the oldest of the 8 most recent tool outputs.
    expect(body.tail_start_line).toBe(outputLines[TURNS - KEEP]);
    for (const r of body.rows) {
      expect(['plan', 'no_plan', 'error']).toContain(r.status);
      if (r.status === 'no_plan') expect(r.reason_code).toMatch(/^[a-z_]+$/);
      if (r.execution_state === 'rendered') {
        expect(r.context_tokens_after).toBeLessThan(r.context_tokens_before);
        expect(r.reduction_pct).toBeGreaterThan(0);
        expect(r.probe_score!.probes_total).toBe(body.probes_total);
        expect(r.result_sha256).toMatch(/^[0-9a-f]{64}$/);
        expect(r.new_verify_errors).toBe(0);
        expect(r.event_record).toMatchObject({ action: 'transcript_compact', est_reclaimed_tokens: r.est_reclaimed });
      } else expect(r.event_record).toBeNull();
    }
  });

  it('pins each metric of the elide row to what the session was built to hold', () => {
    const elide = row(codexEval, 'elide');
    const elided = outputLines.slice(0, TURNS - KEEP);
    expect(elide).toMatchObject({ status: 'plan', execution_state: 'rendered', edit_ops: ['elide'], elided_records: elided.length, tail_intact: true, best: expect.any(Boolean) });
    // Verified under the source's own name: no finding the source does not have, not even an info.
    expect(elide.findings).toEqual([]);
    const score = elide.probe_score!;
    // The error lines of outputs 0-15 are the 16 sampled error signatures: 0-11 elided, 12-15 kept.
    expect(score.by_kind.find((k) => k.kind === 'error_signature')).toEqual({ kind: 'error_signature', total: 16, recalled: 4 });
    // The decision sits in a user prompt, which no strategy elides.
    const decision = score.by_kind.find((k) => k.kind === 'decision')!;
    expect(decision.total).toBeGreaterThanOrEqual(1);
    expect(decision.recalled).toBe(decision.total);
    // Only elided outputs lose text; the probes on the tail all survive.
    expect(score.missed_probes.length).toBe(Math.min(8, score.probes_total - score.probes_recalled));
    for (const missed of score.missed_probes) expect(elided).toContain(missed.line_index);
    expect(score.tail_probes_total).toBeGreaterThanOrEqual(4);
    expect(score.tail_probes_recalled).toBe(score.tail_probes_total);
    // Prefix: everything before the first elided output is still a cacheable prefix.
    expect(elide.prefix_tokens).toBeGreaterThan(0);
    expect(elide.prefix_ratio).toBeCloseTo(elide.prefix_tokens / elide.context_tokens_before, 10);
    expect(elide.score).toBeCloseTo(elide.est_reclaimed * elide.prefix_ratio ** 3, 6);
    // What apply would record: 12 records covered; the heuristic checks are the error lines of
    // outputs 0-15 and the constraints of the even outputs, and only those in kept outputs stay.
    expect(elide.event_record).toMatchObject({ items_covered: elided.length, retention_total: 26, retention_retained: 8 });
  });

  it('marks as best the clean rewrite with the highest cache-preservation score; controls are not rendered', () => {
    const rankable = codexEval.rows.filter((r) => r.execution_state === 'rendered' && r.new_verify_errors === 0);
    const top = Math.max(...rankable.map((r) => r.score!));
    const best = codexEval.rows.filter((r) => r.best);
    expect(best).toHaveLength(1);
    expect(best[0]!.score).toBe(top);
    expect(codexEval.best_strategy).toBe(best[0]!.strategy);
    expect(row(codexEval, 'sawtooth')).toMatchObject({ status: 'plan', execution_state: 'provider_only', edit_ops: ['provider_compact'], probe_score: null, event_record: null, best: false });
  });

  it('prints a table with a row per strategy, the best marked, and no transcript text', () => {
    const { status, stdout, stderr } = gob(['eval', CODEX_ID, ...LOW]);
    expect(status, stderr).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`codex ${CODEX_ID} — context ~${codexEval.context_tokens.toLocaleString('en-US')} tokens (estimated), effective trigger 1,000, floor 0`);
    const header = lines.findIndex((l) => /strategy\s+result\s+before\s+after/.test(l));
    const body = lines.slice(header + 1, header + 1 + BUILTIN_STRATEGIES.length);
    // A selector's row names the strategy whose plan it chose: auto→elide.
    expect(body.map((l) => l.trim().replace(/^\*\s+/, '').split(/\s+/)[0]!.split('→')[0])).toEqual(BUILTIN_STRATEGIES);
    for (const r of codexEval.rows.filter((x) => x.credited_strategy)) expect(body.join('\n')).toContain(`${r.strategy}→${r.credited_strategy}`);
    expect(body.find((l) => l.startsWith('*'))).toContain(` ${codexEval.best_strategy} `);
    expect(body.find((l) => / sawtooth /.test(l))).toContain('provider control');
    // A strategy that proposed nothing says why under the table, as plan does, not only its code.
    const said = row(codexEval, 'cache_edits');
    expect(said).toMatchObject({ status: 'no_plan', reason_code: 'strategy_returned_no_plan', no_plan_rationale: 'strategy cache_edits applies to claude_code sessions, not codex' });
    const words = lines.indexOf('no plan, as the strategy said:');
    expect(words).toBeGreaterThan(header);
    expect(lines.slice(words)).toContain('  cache_edits: strategy cache_edits applies to claude_code sessions, not codex');
    // A score under 100 keeps three significant digits, as auto's rationale prints it, so a small one does not read 0.
    const bestScore = row(codexEval, codexEval.best_strategy!).score!;
    const scoreShown = bestScore >= 100 ? Math.round(bestScore).toLocaleString('en-US') : String(Number(bestScore.toPrecision(3)));
    expect(lines).toContain(`pareto best: ${codexEval.best_strategy} score=${scoreShown} prefix=${row(codexEval, codexEval.best_strategy!).prefix_tokens.toLocaleString('en-US')} reclaimed=${row(codexEval, codexEval.best_strategy!).est_reclaimed.toLocaleString('en-US')}`);
    expect(stdout + stderr).not.toContain(SECRET);
    // The progress bar is for terminals: a piped run prints none.
    expect(stderr).not.toMatch(/strategies|\r/);
    // A piped run has every column; a 60-column terminal gets every line within 60, the comparison kept.
    expect(lines[header]).toMatch(/^\s+strategy\s+result\s+before\s+after\s+reduction\s+probes kept\s+(checks kept\s+)?tail\s+prefix\s+verify\s+time$/);
    const narrow = gob(['eval', CODEX_ID, ...LOW], { COLUMNS: '60' });
    expect(narrow.stdout.split('\n').filter((l) => [...l].length > 60)).toEqual([]);
    expect(narrow.stdout).toMatch(/^\s+strategy\s+result\s.*reduced\s+kept/m);
    expect(narrow.stdout.replace(/\s+/g, ' ')).toMatch(/\(not shown at 60 columns: [a-z, ]*prefix, verify, time; widen the terminal or use --json\)/);
  });

  it('measures a Claude session too, each strategy once, with numbers on every rendered row', () => {
    const { status, body, stderr } = json<EvalCommandResult>(['eval', claudePath, ...LOW]);
    expect(status, stderr).toBe(0);
    expect(validateEvalCommandResult(body)).toBe(true);
    expect(body.rows.map((r) => r.strategy)).toEqual(BUILTIN_STRATEGIES);
    const rendered = body.rows.filter((r) => r.execution_state === 'rendered');
    expect(rendered.length).toBeGreaterThanOrEqual(5);
    for (const r of rendered) {
      expect(r.est_reclaimed).toBe(r.context_tokens_before - r.context_tokens_after);
      expect(r.probe_score!.probes_total).toBeGreaterThan(0);
      expect(r.verify_errors).toBe(0);
    }
    expect(body.best_strategy).not.toBeNull();
    expect(JSON.stringify(body)).not.toContain(SECRET);
    // Each row's cached prefix is the one plan reports for the same plan, cache edits included.
    for (const strategy of ['cache_edits', 'elide']) {
      const planned = json(['plan', claudePath, ...LOW, '--strategy', strategy]).body;
      expect(row(body, strategy).prefix_tokens, strategy).toBe(planned.prefix_tokens);
    }
  });

  it('warns when no probe was sampled in the protected tail: its check is vacuous there, and --json says so in warnings', () => {
    // Only the oldest output holds anything a probe samples; the protected recent ones are filler.
    const id = '6b1d3e5f-7a9c-4b2d-8e0f-1a3c5e7b9d2f';
    const b: ClaudeSessionBuilder = modernSession({ sessionId: id });
    b.user('Step 0: run the tests for src/mod_0.ts');
    b.tools([{ name: 'Bash', input: { command: 'npm test -- mod_0' }, output: 'error: test failed in src/mod_0.ts\n' + longOutput('old', 120) }]);
    for (let i = 1; i < TURNS; i++) {
      b.user('next');
      b.tools([{ name: 'Bash', input: { command: 'ls' }, output: longOutput('quiet', 120) }]);
      b.text('done');
    }
    b.lastPrompt(b.cursor, 'last');
    const dir = join(work, 'quiet-tail');
    mkdirSync(dir, { recursive: true });
    const quiet = hourAgo(b.write(join(dir, `${id}.jsonl`)));
    const { status, body, stderr } = json<EvalCommandResult>(['eval', quiet, ...LOW, '--strategy', 'elide']);
    expect(status, stderr).toBe(0);
    expect(validateEvalCommandResult(body), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
    expect(row(body, 'elide').probe_score).toMatchObject({ tail_probes_total: 0, tail_intact: true });
    expect(body.warnings).toEqual([`no probe was sampled in the protected tail (line ${body.tail_start_line! + 1} on), so the tail check is vacuous: tail_intact is true with nothing in the tail to lose`]);
    // With --json the warning is in the object only; stdout stays that one object.
    expect(stderr).not.toContain('warning:');
    const human = gob(['eval', quiet, ...LOW, '--strategy', 'elide']);
    expect(human.status).toBe(0);
    expect(human.stderr).toContain(`warning: ${body.warnings[0]}`);
    // On an 80-column terminal the warning wraps, in the same words.
    const narrow = gob(['eval', quiet, ...LOW, '--strategy', 'elide'], { COLUMNS: '80' });
    expect(narrow.status).toBe(0);
    for (const line of narrow.stderr.trimEnd().split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(narrow.stderr.replace(/\s+/g, ' ')).toContain(`warning: ${body.warnings[0]}`);
    // A session with probes in its tail gets no warning.
    expect(codexEval.warnings).toEqual([]);
  });

  it('a session under the trigger says why no strategy planned and which --trigger compares them', () => {
    // The default trigger (250,000) is far above this session's context.
    const { status, body, stderr } = json<EvalCommandResult>(['eval', CODEX_ID, '--strategy', 'elide', '--strategy', 'middle']);
    expect(status, stderr).toBe(0);
    expect(validateEvalCommandResult(body), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
    expect(body.rows.map((r) => r.reason_code)).toEqual(['below_trigger', 'below_trigger']);
    const suggested = Math.floor(body.context_tokens / 1000) * 1000;
    expect(body.warnings).toEqual([
      `the context (~${body.context_tokens.toLocaleString('en-US')} tokens) is under the trigger 250,000, so no strategy planned anything; to compare them on this session, lower the trigger for this run: --trigger ${suggested} --floor ${Math.floor(suggested / 2)}`,
    ]);
    expect(gob(['eval', CODEX_ID, '--strategy', 'elide']).stderr).toContain('lower the trigger for this run: --trigger');
    // The suggested flags do make them plan.
    const lowered = json<EvalCommandResult>(['eval', CODEX_ID, '--strategy', 'elide', '--trigger', String(suggested), '--floor', String(Math.floor(suggested / 2))]);
    expect(lowered.body.rows[0]!.status).toBe('plan');
    expect(lowered.body.warnings.some((w) => w.includes('lower the trigger'))).toBe(false);
  });

  it('--strategy measures only the named strategies, in the order given', () => {
    // The session may come after the flags: each --strategy takes one value.
    const { status, body } = json<EvalCommandResult>(['eval', ...LOW, '--strategy', 'scored', '--strategy', 'elide', CODEX_ID]);
    expect(status).toBe(0);
    expect(body.rows.map((r) => r.strategy)).toEqual(['scored', 'elide']);
    // The same frozen source and policy give the same elide rewrite as the full run.
    expect(row(body, 'elide').result_sha256).toBe(row(codexEval, 'elide').result_sha256);
  });

  it('a session the provider cannot read is named by its own path, not the private copy', () => {
    const broken = join(work, 'broken.jsonl');
    writeFileSync(broken, Buffer.concat([readFileSync(claudePath), Buffer.from([0xff, 0xfe, 0x0a])]));
    const message = `${broken}: line ${readFileSync(claudePath, 'utf8').split('\n').length} is not valid UTF-8`;
    const { status, body } = json(['eval', broken]);
    expect(status).toBe(1);
    expect(body.error).toMatchObject({ code: 'invalid_transcript', message });
    // eval-study reads its own private copy, and says the same about the user's file.
    const study = json(['eval-study', broken, '--prepare-manifest', join(work, 'never-written.json')]);
    expect(study.status).toBe(1);
    expect(study.body.error).toMatchObject({ code: 'invalid_transcript', message });
    expect(existsSync(join(work, 'never-written.json'))).toBe(false);
  });

  it('a sub-agent transcript is refused before any strategy runs, for eval, plan and rehearse alike', () => {
    const dir = join(work, 'subagents');
    mkdirSync(dir, { recursive: true });
    const agent = join(dir, 'agent-a1b2c3d.jsonl');
    copyFileSync(claudePath, agent);
    for (const args of [['eval', agent, ...LOW], ['plan', agent, ...LOW], ['rehearse', agent], ['rehearse', claudePath, '--baseline', agent]]) {
      const { status, body } = json(args);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error).toMatchObject({ code: 'not_a_session', details: { session_kind: 'subagent' } });
      expect(body.error.message).toBe(`${agent} is a sub-agent's transcript, not a session the client can resume; only sessions are planned, compacted, forked, measured and rehearsed`);
    }
  });

  it('an unknown strategy is a usage error that names the known ones', () => {
    const { status, body } = json(['eval', CODEX_ID, '--strategy', 'elide', '--strategy', 'nope']);
    expect(status).toBe(2);
    expect(body.error.code).toBe('unknown_strategy');
    expect(body.error.message).toMatch(/^unknown strategy 'nope'; known: .*elide/);
  });

  it('a plugin pinned by the configuration gets its row, and plan --strategy naming it runs it through the pin', () => {
    const bundle = fixturePluginBundle(join(work, 'pinned-bundle'), 'misbehaving-strategy.mjs', { args: ['ok'], id: 'fixture' });
    const manifest = join(bundle, 'gobstopper-plugin.json');
    const pin = createHash('sha256').update(readFileSync(manifest)).digest('hex');
    const config = join(work, 'pinned.toml');
    writeFileSync(config, `[presets.mine]\nstrategy = "fixture_strategy"\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${pin}" }\n`);
    const withPreset = ['--config', config, '--preset', 'mine', ...LOW];
    // Not installed: the strategy is reachable only through the pin.
    expect(json(['eval', CODEX_ID, '--strategy', 'fixture_strategy', '--config', config, ...LOW]).body.error.code).toBe('unknown_strategy');
    const all = json<EvalCommandResult>(['eval', CODEX_ID, ...withPreset]);
    expect(all.status).toBe(0);
    expect(all.body.rows.map((r) => r.strategy)).toEqual([...BUILTIN_STRATEGIES, 'fixture_strategy']);
    expect(all.body.rows.at(-1)).toMatchObject({ strategy: 'fixture_strategy', status: 'no_plan', error: null });
    const one = json<EvalCommandResult>(['eval', CODEX_ID, '--strategy', 'fixture_strategy', ...withPreset]);
    expect(one.body.rows.map((r) => [r.strategy, r.status])).toEqual([['fixture_strategy', 'no_plan']]);
    // The pinned plugin proposes nothing; an unknown id would be a usage error instead.
    const planned = json(['plan', CODEX_ID, '--strategy', 'fixture_strategy', ...withPreset]);
    expect(planned.status).toBe(0);
    expect(planned.body).toMatchObject({ status: 'no_plan' });
  });

  it('a legacy command the policy configures is said not to be measured, and every strategy still is', () => {
    const config = join(work, 'legacy.toml');
    writeFileSync(config, `[presets.cmd]\ncommand = "/bin/false"\ntrusted_legacy_command = true\n`);
    const { status, body } = json<EvalCommandResult>(['eval', CODEX_ID, '--config', config, '--preset', 'cmd', '--strategy', 'elide', ...LOW]);
    expect(status).toBe(0);
    expect(body.rows.map((r) => r.strategy)).toEqual(['elide']);
    expect(body.warnings).toContain('the legacy command that [presets.cmd] configures is not measured: eval compares strategies, and only plan, apply and watch run a command');
  });

  it('a floor at or above the trigger is one clear error', () => {
    const { status, body } = json(['eval', CODEX_ID, '--trigger', '1000']);
    expect(status).not.toBe(0);
    expect(body.ok).toBe(false);
    expect(body.error.message).toMatch(/floor/);
  });

  it('--rehearse without the client installed says so once and still measures every strategy', () => {
    const emptyBin = mkdtempSync(join(work, 'no-clients-'));
    const env = { PATH: emptyBin, GOBSTOPPER_CODEX_BIN: '' };
    const { status, body } = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW, '--strategy', 'elide', '--rehearse'], env);
    expect(status).toBe(0);
    expect(body.rehearsal_note).toMatch(/^codex client not found on PATH; install @openai\/codex/);
    expect(body.rows[0]).toMatchObject({ strategy: 'elide', execution_state: 'rendered', rehearsal: null });
    const human = gob(['eval', CODEX_ID, ...LOW, '--strategy', 'elide', '--rehearse'], env);
    expect(human.status).toBe(0);
    expect(human.stderr.match(/client not found/g)).toHaveLength(1);
    const named = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW, '--strategy', 'elide', '--rehearse', '--codex-bin', join(emptyBin, 'codex')], env);
    expect(named.body.rehearsal_note).toContain('(from --codex-bin)');
    expect(gob(['eval', CODEX_ID, '--codex-bin', join(emptyBin, 'codex')]).status).toBe(2);
  });

  it('--rehearse resumes each rewritten copy with the client and shows the context it rebuilt next to the projected one', () => {
    const clients = mkdtempSync(join(work, 'clients-'));
    // The client named by --codex-bin, as rehearse takes it.
    const env = { PATH: process.env.PATH ?? '', GOBSTOPPER_CODEX_BIN: '' };
    const client = ['--codex-bin', writeFakeClient(clients, 'codex', 'ok')];
    const { status, body, stderr } = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW, '--strategy', 'elide', '--strategy', 'sawtooth', '--rehearse', ...client], env);
    expect(status, stderr).toBe(0);
    expect(validateEvalCommandResult(body)).toBe(true);
    expect(body.rehearsal_note).toBeNull();
    const [elide, sawtooth] = body.rows as [EvalRow, EvalRow];
    expect(elide.rehearsal).toMatchObject({ status: 'passed', ok: true, client_context_tokens: expect.any(Number) });
    // The client rebuilds the candidate's live items; projected and rebuilt agree within the compare tolerance.
    expect(elide.rehearsal!.predicted_context_tokens).toBeGreaterThan(0);
    expect(Math.abs(elide.rehearsal!.client_context_tokens! - elide.rehearsal!.predicted_context_tokens)).toBeLessThan(elide.rehearsal!.predicted_context_tokens * 0.2);
    // A provider control rewrites nothing, so there is nothing to resume.
    expect(sawtooth.rehearsal).toBeNull();
    // The client only ever saw private copies.
    expect(sha256(readFileSync(codexPath))).toBe(body.source_sha256);

    const dropping = { PATH: process.env.PATH ?? '', GOBSTOPPER_CODEX_BIN: writeFakeClient(clients, 'codex', 'drop-history') };
    const human = gob(['eval', CODEX_ID, ...LOW, '--strategy', 'elide', '--rehearse'], dropping);
    expect(human.status, human.stderr).toBe(0);
    const header = human.stdout.split('\n').find((l) => l.includes(' client '))!;
    expect(header).toMatch(/before\s+after\s+client\s+reduction/);
    expect(human.stdout).toMatch(/ elide .* context_mismatch /);
    // The two measures side by side are told apart.
    expect(human.stdout.replace(/\s+/g, ' ')).toContain('client: tokens of the transcript part the real client rebuilt from the candidate');
  });

  it('a strategy that names the providers it applies to is never asked about another provider\'s session', () => {
    const bundle = fixturePluginBundle(join(work, 'codex-only-bundle'), 'misbehaving-strategy.mjs', { args: ['codex-only', '', 'codex-only-fixture', 'codex_only'], id: 'codex-only-fixture', provides: { strategies: ['codex_only'] } });
    expect(gob(['plugin', 'add', bundle]).status).toBe(0);
    try {
      // On Claude it is not run: no plan, and plan says why.
      const claude = json<EvalCommandResult>(['eval', CLAUDE_ID, ...LOW, '--strategy', 'codex_only']);
      expect(claude.body.rows[0]).toMatchObject({ strategy: 'codex_only', status: 'no_plan', reason_code: 'strategy_returned_no_plan', error: null });
      const planned = gob(['plan', CLAUDE_ID, '--strategy', 'codex_only', ...LOW]);
      expect(planned.status).toBe(0);
      expect(planned.stdout).toContain('strategy codex_only applies to codex sessions, not claude_code');
      // On Codex it is asked, and this fixture dies when asked.
      const codex = gob(['eval', CODEX_ID, ...LOW, '--strategy', 'codex_only', '--json']);
      expect(codex.status).toBe(1);
      expect((JSON.parse(codex.stdout) as EvalCommandResult).rows[0]).toMatchObject({ strategy: 'codex_only', status: 'error' });
    } finally {
      expect(gob(['plugin', 'remove', 'codex-only-fixture']).status).toBe(0);
    }
  });

  it('a strategy that sends its answer twice is refused by plan every time, however late the second copy comes', () => {
    const bundle = fixturePluginBundle(join(work, 'twice-bundle'), 'misbehaving-strategy.mjs', { args: ['answer-twice', '', 'twice-fixture', 'twice_strategy'], id: 'twice-fixture', provides: { strategies: ['twice_strategy'] } });
    expect(gob(['plugin', 'add', bundle]).status).toBe(0);
    try {
      const before = treeDigest(home.root);
      for (let run = 0; run < 5; run++) {
        const r = gob(['plan', CODEX_ID, ...LOW, '--strategy', 'twice_strategy', '--json']);
        expect(r.status, r.stdout).toBe(1);
        expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'plugin_not_jsonrpc', message: expect.stringContaining('answered one twice') });
      }
      expect(treeDigest(home.root)).toEqual(before);
    } finally {
      expect(gob(['plugin', 'remove', 'twice-fixture']).status).toBe(0);
    }
  });

  it('one failing strategy becomes an error row; the others are still measured', () => {
    const bundle = fixturePluginBundle(join(work, 'broken-bundle'), 'misbehaving-strategy.mjs', { args: ['exit'], id: 'broken-fixture' });
    expect(gob(['plugin', 'add', bundle]).status).toBe(0);
    const { status, body } = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW, '--strategy', 'fixture_strategy', '--strategy', 'elide']);
    expect(status).toBe(0);
    const [broken, elide] = body.rows as [EvalRow, EvalRow];
    expect(broken).toMatchObject({ strategy: 'fixture_strategy', status: 'error', execution_state: 'failed', best: false });
    expect(broken.error).toMatch(/broken-fixture/);
    // Scripts tell failures apart by code, not by parsing the message.
    expect(broken.error_code).toBe('plugin_handshake_failed');
    expect(elide).toMatchObject({ strategy: 'elide', status: 'plan', execution_state: 'rendered', best: true });
    // When every strategy failed the rows are still the report, and the status tells a script.
    const alone = gob(['eval', CODEX_ID, ...LOW, '--strategy', 'fixture_strategy', '--json']);
    expect(alone.status).toBe(1);
    const only = JSON.parse(alone.stdout) as EvalCommandResult;
    expect(only.rows).toHaveLength(1);
    expect(only.rows[0]).toMatchObject({ execution_state: 'failed', error_code: 'plugin_handshake_failed' });
  });

  it('a strategy that refuses the session it was given is told about by the session, not by the private copy', () => {
    const bundle = fixturePluginBundle(join(work, 'naming-bundle'), 'misbehaving-strategy.mjs', { args: ['name-session', '', 'naming-fixture', 'naming_strategy'], id: 'naming-fixture', provides: { strategies: ['naming_strategy'] } });
    expect(gob(['plugin', 'add', bundle]).status).toBe(0);
    try {
      // Its only strategy failed: exit 1, with the rows.
      const run = gob(['eval', CODEX_ID, ...LOW, '--strategy', 'naming_strategy', '--json']);
      expect(run.status).toBe(1);
      const body = JSON.parse(run.stdout) as EvalCommandResult;
      expect(body.rows[0]).toMatchObject({ strategy: 'naming_strategy', status: 'error' });
      expect(body.rows[0]!.error).toContain(`cannot use ${codexPath}`);
    } finally {
      gob(['plugin', 'remove', 'naming-fixture']);
    }
  });

  it("a failing row's time is its own, not the turn it waited for while a slow strategy proposed", () => {
    const slow = fixturePluginBundle(join(work, 'slow-bundle'), 'misbehaving-strategy.mjs', { args: ['slow', '', 'slow-fixture', 'slow_strategy'], id: 'slow-fixture', provides: { strategies: ['slow_strategy'] } });
    const failing = fixturePluginBundle(join(work, 'failing-bundle'), 'misbehaving-strategy.mjs', { args: ['exit', '', 'failing-fixture', 'failing_strategy'], id: 'failing-fixture', provides: { strategies: ['failing_strategy'] } });
    for (const bundle of [slow, failing]) expect(gob(['plugin', 'add', bundle]).status).toBe(0);
    try {
      const { body } = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW, '--strategy', 'slow_strategy', '--strategy', 'failing_strategy']);
      const [slowRow, failed] = body.rows as [EvalRow, EvalRow];
      expect(slowRow).toMatchObject({ strategy: 'slow_strategy', status: 'no_plan' });
      expect(slowRow.duration_ms).toBeGreaterThanOrEqual(2500);
      expect(failed).toMatchObject({ strategy: 'failing_strategy', status: 'error' });
      expect(failed.duration_ms).toBeLessThan(2000);
    } finally {
      for (const id of ['slow-fixture', 'failing-fixture']) gob(['plugin', 'remove', id]);
    }
  });

  it('an installed bundle that cannot start costs only its own row, and is started once', () => {
    expect(gob(['plugin', 'remove', 'broken-fixture']).status).toBe(0);
    const starts = join(work, 'starts.log');
    const bundle = fixturePluginBundle(join(work, 'wrong-id-bundle'), 'misbehaving-strategy.mjs', { args: ['wrong-id', starts], id: 'wrong-id-fixture' });
    expect(gob(['plugin', 'add', bundle]).status).toBe(0);
    try {
      const { status, body } = json<EvalCommandResult>(['eval', CODEX_ID, ...LOW]);
      expect(status).toBe(0);
      expect(row(body, 'fixture_strategy')).toMatchObject({ status: 'error', execution_state: 'failed', error: expect.stringContaining('failed the initialize handshake'), error_code: 'plugin_handshake_failed' });
      expect(row(body, 'elide')).toMatchObject({ status: 'plan', execution_state: 'rendered' });
      // auto asks for every file strategy's plan too; the failed start is not tried again.
      expect(readFileSync(starts, 'utf8')).toBe('wrong-id\n');
    } finally {
      expect(gob(['plugin', 'remove', 'wrong-id-fixture']).status).toBe(0);
    }
  });
});

describe('eval-study (built CLI)', () => {
  requireBuilt('dist/cli/commands/eval-study.js');
  let manifestPath: string;
  let forkPath: string;
  let forkReceipt: { snapshot_manifest_sha256: string; output_manifest_sha256: string };
  let manifest: RetentionManifest;

  beforeAll(() => {
    home = makeTempHome('gob-e2e-study-');
    work = mkdtempSync(join(tmpdir(), 'gob-e2e-study-work-'));
    codexPath = plantedRollout();
    manifestPath = join(work, 'study.json');
  });
  afterAll(() => {
    home.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  const bad = (name: string, edit: (m: RetentionManifest) => RetentionManifest) => {
    const path = join(work, `${name}.json`);
    writeFileSync(path, JSON.stringify(edit(structuredClone(manifest))));
    return path;
  };

  it('prepares a metadata-only manifest in a new file and refuses to overwrite it', () => {
    const before = treeDigest(home.root);
    const { status, body } = json(['eval-study', CODEX_ID, '--prepare-manifest', manifestPath]);
    expect(status).toBe(0);
    expect(validateEvalStudyCommandResult(body)).toBe(true);
    // Elidable records first, at most 16 per kind: error lines (facts) of outputs 0-15 and the
    // constraints of the 10 even outputs.
    expect(body).toEqual({ checks: 26, label_source: 'heuristic', study_run: false, manifest_path: manifestPath, by_kind: { fact: 16, constraint: 10 }, replay_fits: true });
    const text = readFileSync(manifestPath, 'utf8');
    manifest = JSON.parse(text) as RetentionManifest;
    expect(manifest).toMatchObject({ schema: 'gobstopper-retention-v1', source_sha256: sha256(readFileSync(codexPath)), label_source: 'heuristic' });
    expect(text).not.toContain('planted');
    expect(text).not.toContain('shard');
    expect(statSync(manifestPath).mode & 0o777).toBe(0o600);
    expect(treeDigest(home.root)).toEqual(before);

    const again = json(['eval-study', CODEX_ID, '--prepare-manifest', manifestPath]);
    expect(again.status).toBe(1);
    expect(again.body.error.code).toBe('output_exists');
    expect(readFileSync(manifestPath, 'utf8')).toBe(text);
  });

  it('the next command it prints runs as printed: quoted, with the home the session was found under', () => {
    const spaced = join(work, "my study's manifest.json");
    const prepared = gob(['eval-study', CODEX_ID, '--codex-home', home.codexHome, '--prepare-manifest', spaced]);
    expect(prepared.status, prepared.stderr).toBe(0);
    const next = prepared.stdout.split('\n').find((l) => l.startsWith('next: '))!.slice('next: '.length);
    // Run by a shell with no CODEX_HOME: only the printed --codex-home finds the session.
    const { CODEX_HOME: _codexHome, ...env } = home.env;
    const ran = spawnSync('/bin/sh', ['-c', next.replace(/^gobstopper /, `'${process.execPath}' '${bin}' `) + ' --rounds 1 --json'], { cwd: work, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 180_000 });
    expect(ran.status, ran.stdout + ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ schema: 'gobstopper-retention-study-v1', checks_total: 26, rounds: 1 });
    rmSync(spaced);
  });

  it('a session too large to replay is told so, and the next command it prints scores a compaction instead', () => {
    // Three tool outputs of 22 MiB each: under the per-record limit, over the 64 MiB a replay reads.
    const b = modernSession({ sessionId: CLAUDE_ID });
    for (let i = 0; i < 4; i++) {
      b.user(`Step ${i}: run the tests`);
      b.tools([{ name: 'Bash', input: { command: `npm test -- mod_${i}` }, output: `error: test failed in src/mod_${i}.ts\n` + longOutput(`out${i}`, 40) }]);
    }
    const records = b.toJsonl().trimEnd().split('\n').map((l) => JSON.parse(l));
    const results = records.filter((r) => Array.isArray(r.message?.content) && r.message.content.some((b: { type: string }) => b.type === 'tool_result')).slice(0, 3);
    for (const r of results) for (const b of r.message.content) if (b.type === 'tool_result') b.content = 'z'.repeat(22 * 1024 * 1024);
    const big = join(work, 'big-session.jsonl');
    writeFileSync(big, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const prepared = join(work, 'big-manifest.json');
    const human = gob(['eval-study', big, '--claude-home', home.claudeHome, '--prepare-manifest', prepared]);
    expect(human.status, human.stderr).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[1]).toBe('the session is over the 64 MiB a replay reads; score a compaction of it instead, a fork apply made from it, by its path or as vault:<sha256>:');
    expect(lines[2]).toBe(`next: gobstopper eval-study ${big} --manifest ${prepared} --claude-home ${home.claudeHome} --against <fork path | vault:<sha256>>`);
    // The replay the line no longer offers is indeed refused.
    expect(gob(['eval-study', big, '--manifest', prepared]).stderr).toMatch(/replay reads at most 64 MiB/);
    rmSync(prepared);
    const { body } = json(['eval-study', big, '--prepare-manifest', prepared]);
    expect(validateEvalStudyCommandResult(body)).toBe(true);
    expect(body.replay_fits).toBe(false);
    rmSync(prepared);
    rmSync(big);
  });

  it('replays the three arms on private copies: typed masking keeps every pinned check in place', () => {
    const before = treeDigest(home.root);
    const { status, body, stderr } = json<RetentionStudyReport>(['eval-study', CODEX_ID, '--manifest', manifestPath, '--rounds', '2', ...LOW]);
    expect(status, stderr).toBe(0);
    expect(validateEvalStudyCommandResult(body), JSON.stringify(validateEvalStudyCommandResult.errors)).toBe(true);
    expect(treeDigest(home.root)).toEqual(before);
    expect(body).toMatchObject({ schema: 'gobstopper-retention-study-v1', replay_mode: 'static_stress', provider_calls: 0, checks_total: 26, rounds: 2, trigger_tokens: 1000, floor_tokens: 0 });
    expect(body.rows.map((r) => `${r.arm}:${r.round}`)).toEqual(['observation_masking:1', 'observation_masking:2', 'typed_masking:1', 'typed_masking:2', 'typed_digest:1', 'typed_digest:2']);
    const constraint = (arm: string) => body.rows.find((r) => r.arm === arm && r.round === 1)!.retention.by_kind.find((k) => k.kind === 'constraint')!;
    // Plain masking elides outputs 0-11, losing the constraints of 0, 2, ..., 10 (6 of 10).
    expect(constraint('observation_masking')).toMatchObject({ total: 10, source_bound_retained: 4 });
    // Typed masking never elides a record holding a constraint.
    expect(constraint('typed_masking')).toMatchObject({ total: 10, source_bound_retained: 10 });
    // Typed digest elides them but carries their text verbatim on the state card.
    const digest = body.rows.find((r) => r.arm === 'typed_digest' && r.round === 1)!;
    expect(digest.card_items).toBe(10);
    expect(constraint('typed_digest')).toMatchObject({ total: 10, retained: 10, source_bound_retained: 4 });
    for (const r of body.rows) expect(r.new_verify_errors).toBe(0);
    expect(body.rows[0]).toMatchObject({ status: 'applied', applied_rounds: 1 });
    expect(body.rows[1]).toMatchObject({ status: 'no_change', applied_rounds: 1 });

    const human = gob(['eval-study', CODEX_ID, '--manifest', manifestPath, '--rounds', '1', ...LOW]);
    expect(human.stdout.split('\n')[0]).toBe('gobstopper-retention-study-v1: static_stress (no provider calls; 26 checks, labels heuristic)');
    expect(human.stdout).toMatch(/^typed_masking\s+1\s+applied\s+1\s+[\d,]+\s+[\d,]+\s+\d+\/26\s+\d+\/26\s+\d+\/26\s+\d+\/26\s+0\s+/m);
    expect(human.stdout).toContain('by kind (exact/origin/source/lexical of total, last round):');
    expect(human.stdout + human.stderr).not.toContain(SECRET);
    // On an 80-column terminal every line fits, the context and all four tiers of each row included.
    const narrow = gob(['eval-study', CODEX_ID, '--manifest', manifestPath, '--rounds', '1', ...LOW], { COLUMNS: '80' });
    expect(narrow.stdout.split('\n').filter((l) => l.length > 80)).toEqual([]);
    expect(narrow.stdout).toMatch(/^arm\s+round\s+before\s+after\s+exact\s+origin\s+source\s+lexical$/m);
    expect(narrow.stdout).toMatch(/^typed_digest\s+1\s+[\d,]+\s+[\d,]+(\s+\d+\/26){4}$/m);
    // By kind: a row per kind, a column per arm, each cell the four tiers of that kind's checks.
    expect(narrow.stdout).toMatch(/^kind\s+observation_masking\s+typed_masking\s+typed_digest$/m);
    expect(narrow.stdout).toMatch(/^constraint\s+\d+\/\d+\/\d+\/\d+ of 10\s+10\/10\/10\/10 of 10\s+10\/\d+\/4\/\d+ of 10$/m);
    // On a 60-column terminal every line fits too: the context after and the exact, source and
    // lexical tiers stay, and what was left out is named, in the rounds table and by kind.
    const sixty = gob(['eval-study', CODEX_ID, '--manifest', manifestPath, '--rounds', '1', ...LOW], { COLUMNS: '60' });
    expect(sixty.stdout.split('\n').filter((l) => [...l].length > 60)).toEqual([]);
    expect(sixty.stdout).toMatch(/^arm\s+round\s+after\s+exact\s+source\s+lexical$/m);
    expect(sixty.stdout).toMatch(/^typed_masking\s+1\s+[\d,]+(\s+\d+\/26){3}$/m);
    expect(sixty.stdout.replace(/\s+/g, ' ')).toContain('(not shown at 60 columns: status, applied, before, origin, new errors, floor; widen the terminal or use --json)');
    expect(sixty.stdout).toMatch(/^kind\s+observation\s+typed_masking$/m);
    expect(sixty.stdout.replace(/\s+/g, ' ')).toContain('(not shown at 60 columns: typed_digest; widen the terminal or use --json)');
  });

  it('bad input gets one clear error and changes nothing', () => {
    const before = treeDigest(home.root);
    const cases: Array<[string[], number, string]> = [
      [['--manifest', manifestPath, '--rounds', '11'], 2, 'invalid_rounds'],
      [['--manifest', manifestPath, '--rounds', '0'], 2, 'invalid_rounds'],
      [['--manifest', bad('other-source', (m) => ({ ...m, source_sha256: 'a'.repeat(64) }))], 1, 'manifest_source_mismatch'],
      [['--manifest', bad('wrong-hash', (m) => ({ ...m, checks: m.checks.map((c, i) => (i === 0 ? { ...c, sha256: 'b'.repeat(64) } : c)) }))], 1, 'span_hash_mismatch'],
      [['--manifest', bad('blank-span', (m) => ({ ...m, checks: [{ ...m.checks[0]!, start_byte: 0, end_byte: 0 }] }))], 1, 'invalid_manifest'],
      [['--manifest', bad('too-many', (m) => ({ ...m, checks: Array.from({ length: 257 }, (_, i) => ({ ...m.checks[0]!, id: `c${i}` })) }))], 1, 'invalid_manifest'],
      [['--manifest', join(work, 'missing.json')], 1, 'invalid_manifest'],
      [[], 2, 'manifest_required'],
    ];
    for (const [args, exit, code] of cases) {
      const { status, body } = json(['eval-study', CODEX_ID, ...LOW, ...args]);
      expect({ args, status, code: body.error?.code }).toEqual({ args, status: exit, code });
    }
    // A malformed vault: id is the command line's fault before any vault exists too (none does yet).
    expect(existsSync(join(home.dataHome, 'gobstopper', 'vault'))).toBe(false);
    for (const args of [['vault:zzz', '--manifest', manifestPath], [CODEX_ID, '--manifest', manifestPath, '--against', 'vault:12']]) {
      const { status, body } = json(['eval-study', ...args]);
      expect({ args, status, code: body.error?.code }).toEqual({ args, status: 2, code: 'invalid_sha' });
    }
    expect(treeDigest(home.root)).toEqual(before);
  });

  it('a FIFO named by --manifest or --against is refused at once, not waited on', () => {
    const fifo = join(work, 'named-pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const asManifest = json(['eval-study', CODEX_ID, '--manifest', fifo, ...LOW]);
    expect({ status: asManifest.status, code: asManifest.body.error?.code, message: asManifest.body.error?.message }).toEqual({
      status: 1,
      code: 'invalid_manifest',
      message: `retention manifest ${fifo} is not a regular file`,
    });
    const asAgainst = json(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', fifo]);
    expect({ status: asAgainst.status, code: asAgainst.body.error?.code, message: asAgainst.body.error?.message }).toEqual({
      status: 1,
      code: 'not_a_transcript',
      message: `${fifo} is not a regular file`,
    });
  });

  it('a span that is not text is refused, saying why', () => {
    const fact = manifest.checks[0]!;
    const constraint = manifest.checks[1]!;
    expect([fact.kind, constraint.kind, fact.record_index]).toEqual(['fact', 'constraint', constraint.record_index]);
    const into = Buffer.byteLength('never drop the shard_0 index without a na');
    const cases: Array<[string, Partial<typeof fact>, string]> = [
      ['cuts-char', { start_byte: constraint.start_byte + into + 1, end_byte: constraint.end_byte }, 'it cuts a UTF-8 character'],
      ['blank', { start_byte: fact.end_byte, end_byte: fact.end_byte + 1 }, 'it is blank'],
      ['past-end', { start_byte: 9000, end_byte: 9050 }, "it ends past the slot's"],
    ];
    for (const [name, span, why] of cases) {
      const path = bad(name, (m) => ({ ...m, checks: [{ ...constraint, ...span }] }));
      const { status, body } = json(['eval-study', CODEX_ID, '--manifest', path, ...LOW]);
      expect(status).toBe(1);
      expect(body.error.code).toBe('span_not_text');
      expect(body.error.message).toContain(`(${why}`);
    }
  });

  it('a session that grew after its manifest was prepared is told so, and nothing changes', () => {
    const lines = readFileSync(codexPath, 'utf8').trimEnd().split('\n');
    const grown = join(work, 'rollout-grown.jsonl');
    writeFileSync(grown, [...lines, lines.at(-1)].join('\n') + '\n');
    const before = { home: treeDigest(home.root), grown: readFileSync(grown), manifest: readFileSync(manifestPath) };
    const { status, body } = json(['eval-study', grown, '--manifest', manifestPath, ...LOW]);
    expect(status).toBe(1);
    expect(body.error.code).toBe('manifest_source_mismatch');
    expect(body.error.message).toContain('the session changed after the manifest was prepared, or the manifest is another session\'s; prepare a new one with --prepare-manifest');
    expect({ home: treeDigest(home.root), grown: readFileSync(grown), manifest: readFileSync(manifestPath) }).toEqual(before);
    rmSync(grown);
  });

  it('scores a fork made by apply with --against, by path and from the vault, without replaying', () => {
    const applied = json<any>(['apply', CODEX_ID, ...LOW, '--strategy', 'elide']);
    expect(applied.status, applied.stderr).toBe(0);
    const receipt = applied.body.receipt;
    const sourceBefore = readFileSync(codexPath);
    const before = treeDigest(home.root);

    const byPath = json<RetentionStudyReport>(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', receipt.path]);
    expect(byPath.status, byPath.stderr).toBe(0);
    expect(validateEvalStudyCommandResult(byPath.body)).toBe(true);
    expect(byPath.body).toMatchObject({ replay_mode: 'realized_audit', after_sha256: receipt.output_sha256, provider_calls: 0 });
    expect(byPath.body.rows).toHaveLength(1);
    const realized = byPath.body.rows[0]!;
    expect(realized).toMatchObject({ arm: 'realized', status: 'realized', result_sha256: receipt.output_sha256, new_verify_errors: 0 });
    expect(realized.estimated_context_after).toBeLessThan(realized.estimated_context_before);
    // The fork is the elide plan: the same checks survive as in the replay's plain masking.
    expect(realized.retention.by_kind.find((k) => k.kind === 'constraint')).toMatchObject({ total: 10, source_bound_retained: 4 });

    const fromVault = json<RetentionStudyReport>(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', `vault:${receipt.output_manifest_sha256}`]);
    expect(fromVault.status, fromVault.stderr).toBe(0);
    expect(fromVault.body.after_sha256).toBe(receipt.output_sha256);
    expect(fromVault.body.rows[0]!.retention).toEqual(realized.retention);

    // A relative path is the working directory's, as for every other path flag.
    copyFileSync(receipt.path, join(work, 'fork-copy.jsonl'));
    const relative = json<RetentionStudyReport>(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', 'fork-copy.jsonl']);
    expect(relative.status, relative.stderr).toBe(0);
    expect(relative.body.rows[0]!.retention).toEqual(realized.retention);
    const missing = json(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', 'no-such-fork.jsonl']);
    expect(missing.status).toBe(1);
    expect(missing.body.error).toMatchObject({
      code: 'against_not_found',
      message: '--against no-such-fork.jsonl does not exist; it takes the path of a compacted transcript or vault:<sha256> of an archived one, not a session id',
    });

    // The archived source scored against the fork, with the session given as vault:<sha>.
    const archived = json<RetentionStudyReport>(['eval-study', `vault:${receipt.snapshot_manifest_sha256}`, '--manifest', manifestPath, '--against', receipt.path]);
    expect(archived.status, archived.stderr).toBe(0);
    expect(archived.body.rows[0]!.retention).toEqual(realized.retention);

    expect(readFileSync(codexPath).equals(sourceBefore)).toBe(true);
    expect(treeDigest(home.root)).toEqual(before);
    forkPath = receipt.path;
    forkReceipt = receipt;
  });

  it('the retention apply would put on its event matches what eval reported for the same plan', async () => {
    const dist = (path: string) => import(join(repoRoot, 'dist', path));
    const { Runtime } = (await dist('kernel/services/runtime.js')) as typeof import('../../kernel/services/runtime.js');
    const { evaluateFile } = (await dist('kernel/services/eval.js')) as typeof import('../../kernel/services/eval.js');
    const { measureAppliedRetention } = (await dist('kernel/eval/applied-retention.js')) as typeof import('../../kernel/eval/applied-retention.js');
    const runtime = new Runtime({ env: { ...process.env, ...home.env } });
    try {
      const transcript = await (await runtime.provider('codex')).parse({ path: codexPath });
      const measured = await measureAppliedRetention(codexPath, transcript.source_sha256, transcript.items, forkPath);
      const { result } = await evaluateFile(runtime, { provider: 'codex', path: codexPath }, { strategies: ['elide'], trigger: 1000, floor: 0 });
      const event = result.rows[0]!.event_record!;
      expect(measured).toEqual({ retention_total: event.retention_total, retention_retained: event.retention_retained, retention_lexical: event.retention_lexical });
      expect(measured).toMatchObject({ retention_total: 26, retention_retained: 8 });
      // A source that changed since it was planned is not measured.
      expect(await measureAppliedRetention(codexPath, 'c'.repeat(64), transcript.items, forkPath)).toBeNull();
    } finally {
      await runtime.close();
    }
  });

  it('--rounds, --trigger, --floor, --preset and --config with --against are a usage error, not silently ignored', () => {
    const before = treeDigest(home.root);
    const cases: Array<[string[], string, string]> = [
      [['--rounds', '3'], '--rounds', 'it shapes'],
      [['--trigger', '50000'], '--trigger', 'it shapes'],
      [['--floor', '0'], '--floor', 'it shapes'],
      [['--preset', 'nobody-has-this-preset'], '--preset', 'it shapes'],
      [['--config', join(work, 'no-such-config.toml')], '--config', 'it shapes'],
      [[...LOW, '--rounds', '2'], '--rounds, --trigger, --floor', 'they shape'],
    ];
    for (const [extra, named, shape] of cases) {
      const { status, body } = json(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', forkPath, ...extra]);
      expect({ extra, status, error: body.error }).toEqual({
        extra,
        status: 2,
        error: expect.objectContaining({ code: 'conflicting_flags', message: `${named} cannot be combined with --against: ${shape} the replay, and --against scores the file as it is` }),
      });
    }
    const human = gob(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', forkPath, '--rounds', '3']);
    expect(human.status).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr.trim().split('\n')).toHaveLength(1);
    // Preparing a manifest replays nothing either; the manifest is not written.
    const prepared = join(home.root, 'never-written.json');
    const prepare = json(['eval-study', CODEX_ID, '--prepare-manifest', prepared, '--rounds', '99', '--preset', 'nope']);
    expect({ status: prepare.status, error: prepare.body.error }).toEqual({
      status: 2,
      error: expect.objectContaining({ code: 'conflicting_flags', message: '--rounds, --preset cannot be combined with --prepare-manifest: they shape the replay, and --prepare-manifest only writes the manifest' }),
    });
    expect(existsSync(prepared)).toBe(false);
    // A config, whose policy only a replay reads, was taken and ignored, even one that does not exist.
    const configured = json(['eval-study', CODEX_ID, '--prepare-manifest', prepared, '--config', join(work, 'no-such-config.toml')]);
    expect({ status: configured.status, error: configured.body.error }).toEqual({
      status: 2,
      error: expect.objectContaining({ code: 'conflicting_flags', message: '--config cannot be combined with --prepare-manifest: it shapes the replay, and --prepare-manifest only writes the manifest' }),
    });
    expect(existsSync(prepared)).toBe(false);
    expect(treeDigest(home.root)).toEqual(before);
  });

  it('--against a file of another provider is refused', () => {
    const claude = plantedClaude();
    const { status, body } = json(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', claude]);
    expect(status).toBe(1);
    expect(body.error.code).toBe('provider_mismatch');
  });

  it('--against vault:<id> of another provider\'s fork is provider_mismatch, as its source snapshot is', () => {
    plantedClaude();
    const claudeManifest = join(work, 'claude-study.json');
    expect(json(['eval-study', CLAUDE_ID, '--prepare-manifest', claudeManifest]).status).toBe(0);
    const before = treeDigest(home.root);
    // The fork's retained bytes have no index line; the receipt that published them names codex.
    for (const id of [forkReceipt.snapshot_manifest_sha256, forkReceipt.output_manifest_sha256]) {
      const { status, body } = json(['eval-study', CLAUDE_ID, '--manifest', claudeManifest, '--against', `vault:${id}`]);
      expect({ status, error: body.error }).toEqual({ status: 1, error: { code: 'provider_mismatch', message: `vault:${id} is a codex snapshot but the session is claude_code; the providers must match` } });
    }
    expect(treeDigest(home.root)).toEqual(before);
  });

  it('--against another, smaller session of the same provider is refused: it is not derived from this one', () => {
    const other = new RolloutBuilder({ id: '019c8a4d-8f45-7010-8b5d-7fad920aa6f9', paginated: true });
    other.sessionMeta().turnContext().preamble().user('A short, unrelated task').assistant('Done.');
    const path = other.writeTo(work);
    const before = treeDigest(home.root);
    const { status, body } = json(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', path]);
    expect(status).toBe(1);
    expect(body.error).toMatchObject({
      code: 'against_unrelated',
      message: `--against ${path} is session 019c8a4d-8f45-7010-8b5d-7fad920aa6f9, which is neither session ${CODEX_ID} nor a fork of it that the vault's receipts record; it is not a compaction of this session`,
    });
    expect(treeDigest(home.root)).toEqual(before);
  });

  it('--against a file holding more context than the session is refused: it is not its compaction', () => {
    const records = readFileSync(codexPath, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const last = records.at(-1)!;
    const extra = { timestamp: last.timestamp, ordinal: (last.ordinal ?? records.length) + 1, type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'more '.repeat(20_000) }] } };
    const bigger = join(work, 'bigger.jsonl');
    writeFileSync(bigger, [...records, extra].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const { status, body } = json(['eval-study', CODEX_ID, '--manifest', manifestPath, '--against', bigger]);
    expect(status).toBe(1);
    expect(body.error).toMatchObject({ code: 'against_not_a_compaction', message: expect.stringContaining('it is not a compaction of this session') });
  });
});
