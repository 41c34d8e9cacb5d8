/**
 * The policy commands as a user runs them: the built CLI (`node scripts/build.mjs --kernel`) in a
 * throwaway home, with config files written the way a user would write them.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  validateConfigCommandResult,
  validateExplainCommandResult,
  validatePolicyCheckCommandResult,
  validatePresetsCommandResult,
  validateHelpCommandResult,
  validateTuneCommandResult,
} from '../../schemas/generated/validators.js';
import { shellWord } from '../../kernel/text/shell-word.js';
import { fixturePluginBundle } from '../fixtures/bundles/build-bundle.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { requireBuilt } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const bin = join(repoRoot, 'bin', 'run.js');

let home: TempHome;
let project: string;

function write(path: string, text: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function gob(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? project,
    env: { PATH: process.env.PATH ?? '', ...home.env, ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json(args: string[], options?: Parameters<typeof gob>[1]) {
  const result = gob([...args, '--json'], options);
  // Results are pretty-printed JSON; errors are exactly one line.
  if (result.status !== 0) expect(result.stdout.trim().split('\n'), result.stderr).toHaveLength(1);
  return { ...result, body: JSON.parse(result.stdout) as Record<string, any> };
}

const USER_CONFIG = `
[policy]
trigger_tokens = 200_000

[provider.codex]
trigger_tokens = 180_000

[presets.deep-work]
strategy = "elide"
trigger_tokens = 150_000
floor_tokens = 20_000

[sessions."s-1"]
floor_tokens = 10_000
`;

describe('policy commands (built CLI)', () => {
  requireBuilt('dist/kernel/cli/commands/policy-check.js');
  beforeAll(() => {
    home = makeTempHome('gob-e2e-policy-');
    project = join(home.root, 'work', 'repo');
    write(join(project, 'package.json'), '{}');
  });
  afterAll(() => home.cleanup());

  const userConfigPath = () => join(home.configHome, 'gobstopper', 'config.toml');

  it('presets: says where it looked when there are none', () => {
    const human = gob(['presets']);
    expect(human.status).toBe(0);
    expect(human.stdout.trim()).toBe(`No presets in ${userConfigPath()}.`);
    const { status, body } = json(['presets']);
    expect(status).toBe(0);
    expect(validatePresetsCommandResult(body)).toBe(true);
    expect(body).toEqual({ config_files: [{ scope: 'user', path: userConfigPath(), loaded: false }], presets: [], problems: [] });
  });

  it('presets: lists user and project presets with their keys', () => {
    write(userConfigPath(), USER_CONFIG);
    write(join(project, '.gobstopperrc.toml'), '[presets.deep-work]\nfloor_tokens = 5_000\n\n[presets.team]\nstrategy = "structured"\n');
    const { status, body } = json(['presets']);
    expect(status).toBe(0);
    expect(validatePresetsCommandResult(body), JSON.stringify(validatePresetsCommandResult.errors)).toBe(true);
    expect(body.presets).toEqual([
      { name: 'deep-work', scope: 'both', path: join(project, '.gobstopperrc.toml'), keys: { strategy: 'elide', trigger_tokens: 150_000, floor_tokens: 5_000 } },
      { name: 'team', scope: 'project', path: join(project, '.gobstopperrc.toml'), keys: { strategy: 'structured' } },
    ]);
    const human = gob(['presets']);
    expect(human.stdout.split('\n')[0]).toBe(`deep-work  strategy="elide" trigger_tokens=150000 floor_tokens=5000  (both: ${userConfigPath()} and ${join(project, '.gobstopperrc.toml')})`);
    expect(human.stdout.split('\n')[1]).toBe(`team  strategy="structured"  (project: ${join(project, '.gobstopperrc.toml')})`);
  });

  it('config: shows the resolved policy and where each value came from', () => {
    const { status, body } = json(['config', 's-1', '--provider', 'codex', '--preset', 'deep-work']);
    expect(status).toBe(0);
    expect(validateConfigCommandResult(body), JSON.stringify(validateConfigCommandResult.errors)).toBe(true);
    expect(body.policy).toMatchObject({ strategy: 'elide', trigger_tokens: 150_000, floor_tokens: 10_000, effective_trigger_tokens: 150_000 });
    expect(body.sources.floor_tokens).toEqual({ layer: 'session', scope: 'user', table: '[sessions."s-1"]', path: userConfigPath() });
    expect(body.sources.strategy).toEqual({ layer: 'preset', scope: 'user', table: '[presets.deep-work]', path: userConfigPath() });
    expect(body.config_files).toEqual([
      { scope: 'user', path: userConfigPath(), loaded: true },
      { scope: 'project', path: join(project, '.gobstopperrc.toml'), loaded: true },
    ]);
    // claude is taken for claude_code here too, as in policy-check.
    expect(json(['config', '--provider', 'claude']).body.provider).toBe('claude_code');
    const human = gob(['config', '--provider', 'codex', '--trigger', '190000']);
    expect(human.stdout).toContain('trigger_tokens = 190000  # command-line flag');
    expect(human.stdout).toContain(`min_savings_tokens = 4096  # built-in default`);
    // What config prints pastes into a [policy] table and loads as the same policy.
    expect(human.stdout).toContain('# keep_score_threshold is unset: no score cutoff, the lowest-scored stale outputs go first  # built-in default');
    expect(human.stdout).toContain('# scorer is unset: the built-in heuristic scorer scores  # built-in default');
    // Validated and shown like the rest, but said to do nothing, so nobody tunes them expecting a change.
    expect(human.stdout).toContain('apply_hold_secs = 1800  # built-in default; no effect in this version: nothing is edited in place');
    expect(human.stdout).toContain('block_tokens = 0  # built-in default; no effect in this version: no prompt hook ships (policy-check reports it)');
    const pasted = write(join(home.root, 'pasted.toml'), `[policy]\n${human.stdout.split('\n').filter((l) => l && !l.startsWith('#')).join('\n')}\n`);
    const reloaded = json(['config', '--provider', 'codex', '--config', pasted]);
    expect(reloaded.status).toBe(0);
    expect(reloaded.body.policy).toEqual(json(['config', '--provider', 'codex', '--trigger', '190000']).body.policy);
  });

  it('config: a session id or prefix is read as plan reads it, with its provider and full id', () => {
    const id = '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11';
    const b = modernSession({ sessionId: id });
    b.user('hello');
    b.text('hi');
    mkdirSync(join(home.claudeHome, 'projects', '-home-dev-demo'), { recursive: true });
    b.write(join(home.claudeHome, 'projects', '-home-dev-demo', `${id}.jsonl`));
    const config = write(join(home.root, 'session-config.toml'), `[provider.claude_code]\ntrigger_tokens = 50_000\n\n[sessions."${id}"]\nmin_savings_tokens = 1_000\n`);
    const { status, body } = json(['config', '7d3f', '--config', config]);
    expect(status).toBe(0);
    expect(validateConfigCommandResult(body), JSON.stringify(validateConfigCommandResult.errors)).toBe(true);
    expect(body).toMatchObject({ provider: 'claude_code', session_id: id, session_match: 'discovered' });
    expect(body.policy).toMatchObject({ trigger_tokens: 50_000, min_savings_tokens: 1_000 });
    expect(gob(['config', '7d3f', '--config', config]).stdout).toContain(`# session: claude_code session ${id}\n`);
    // The transcript's path names it too, as its help says.
    const byPath = json(['config', join(home.claudeHome, 'projects', '-home-dev-demo', `${id}.jsonl`), '--config', config]);
    expect(byPath.body).toMatchObject({ provider: 'claude_code', session_id: id, session_match: 'discovered' });
    expect(gob(['config', '--help']).stdout).toMatch(/\[SESSION-ID\]\s+A session id, unique prefix or transcript path;/);
    // --strategy keeps a plugin pinned for the strategy it names (the pin is how that id runs), as its help says.
    const bundle = join(repoRoot, 'examples', 'plugins', 'keep-last-jq');
    const pin = json(['plugin', 'check', bundle]).body.manifest_sha256 as string;
    const pinned = write(join(home.root, 'pinned-plugin.toml'), `[policy]\nstrategy = "keep_last_jq"\nplugin = { manifest = ${JSON.stringify(join(bundle, 'gobstopper-plugin.json'))}, trusted_sha256 = "${pin}" }\n`);
    expect(json(['config', '--strategy', 'keep_last_jq', '--config', pinned]).body.external).toMatchObject({ kind: 'plugin', table: '[policy]' });
    expect(json(['config', '--strategy', 'elide', '--config', pinned]).body.external).toBeNull();
    expect(gob(['config', '--help']).stdout.replace(/\s+/g, ' ')).toContain('--strategy=<id> Override the strategy (drops a configured command, and a pinned plugin unless it serves that strategy).');
    // An id nothing on disk has: applied as written, and said so.
    const literal = json(['config', 'zzz', '--config', config]);
    expect(literal.body).toMatchObject({ provider: null, session_id: 'zzz', session_match: 'as_given' });
    expect(gob(['config', 'zzz', '--config', config]).stdout).toContain('# session: no session on disk matches zzz; its id is applied as written; no [sessions."zzz"] table sets anything');
    // A table keyed by a prefix of the id never applies, and config says why.
    const byPrefix = write(join(home.root, 'prefix-config.toml'), `[sessions."7d3f"]\nmin_savings_tokens = 1_000\n`);
    expect(json(['config', '7d3f', '--config', byPrefix]).body.policy.min_savings_tokens).not.toBe(1_000);
    expect(gob(['config', '7d3f', '--config', byPrefix]).stdout).toContain(
      `# session: claude_code session ${id}; no [sessions."${id}"] table sets anything ([sessions."7d3f"] is not applied: a session table is keyed by the full session id)\n`,
    );
    // plan says it too, on stderr beside the plan, and with --json in its warnings, as apply does.
    const loosePlan = gob(['plan', '7d3f', '--config', byPrefix]);
    expect(loosePlan.status, loosePlan.stderr).toBe(0);
    expect(loosePlan.stderr).toContain(`[sessions."7d3f"] is not applied: a session table is keyed by the full session id (${id})`);
    const loosePlanJson = json(['plan', '7d3f', '--config', byPrefix]);
    expect(loosePlanJson.stderr).toContain('[sessions."7d3f"] is not applied');
    expect(loosePlanJson.body).toMatchObject({ status: 'no_plan', warnings: [`[sessions."7d3f"] is not applied: a session table is keyed by the full session id (${id})`] });
    // apply says it as well when it ends with nothing to do, which is when the table mattered.
    const looseApply = gob(['apply', '7d3f', '--config', byPrefix]);
    expect(looseApply.status, looseApply.stderr).toBe(0);
    expect(looseApply.stdout).toContain('nothing to do');
    expect(looseApply.stderr).toContain(`[sessions."7d3f"] is not applied: a session table is keyed by the full session id (${id})`);
    const looseApplyJson = json(['apply', '7d3f', '--config', byPrefix]);
    // Under the default trigger, which this session never reaches, that is said too.
    expect(looseApplyJson.body).toMatchObject({ status: 'no_plan', warnings: [expect.stringContaining('[sessions."7d3f"] is not applied'), expect.stringContaining('so it never fires for this session')] });
    expect(looseApplyJson.stderr).toContain('[sessions."7d3f"] is not applied');
    // explain and tune of the session apply its tables as plan does, so they say it too, and with
    // --json in their warnings (explain's by code), as plan does.
    const unapplied = `[sessions."7d3f"] is not applied: a session table is keyed by the full session id (${id})`;
    for (const command of ['explain', 'tune']) {
      const loose = gob([command, '7d3f', '--config', byPrefix]);
      expect(loose.status, loose.stderr).toBe(0);
      expect(loose.stderr, command).toContain(unapplied);
      expect(loose.stdout, command).not.toContain('not applied');
      const looseJson = json([command, '7d3f', '--config', byPrefix]);
      expect(looseJson.stderr, command).toContain('[sessions."7d3f"] is not applied');
      expect(looseJson.body.warnings, command).toContainEqual(command === 'explain' ? { code: 'session_table_unapplied', message: unapplied } : unapplied);
      expect(command === 'explain' ? validateExplainCommandResult(looseJson.body) : validateTuneCommandResult(looseJson.body), command).toBe(true);
    }
    // A table under the full id applies; the loose one beside it is still named, since what it sets is lost.
    const both = write(join(home.root, 'both-config.toml'), `[sessions."7d3f"]\nmin_savings_tokens = 1_000\n[sessions."${id}"]\nmin_savings_tokens = 2_000\n`);
    expect(gob(['plan', '7d3f', '--config', both]).stderr).toContain(`[sessions."7d3f"] is not applied`);
    expect(json(['config', '7d3f', '--config', both]).body).toMatchObject({ policy: { min_savings_tokens: 2000 }, unapplied_session_tables: ['7d3f'] });
    expect(gob(['config', '7d3f', '--config', both]).stdout).toMatch(/^# session: .*\[sessions\."7d3f"\] is not applied/m);
    // A provider flag that contradicts the session is refused.
    const clash = json(['config', '7d3f', '--provider', 'codex', '--config', config]);
    expect(clash.status).toBe(2);
    expect(clash.body.error.code).toBe('provider_mismatch');
    // explain too, rather than quietly dropping the flag.
    const explained = json(['explain', '7d3f', '--provider', 'codex', '--config', config]);
    expect({ status: explained.status, code: explained.body.error?.code }).toEqual({ status: 2, code: 'provider_mismatch' });
    expect(json(['explain', '7d3f', '--provider', 'claude_code', '--config', config]).status).toBe(0);
  });

  it("config: a session table flags override is named as overridden, not as missing", () => {
    const id = '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11';
    const config = write(
      join(home.root, 'overridden-session.toml'),
      `[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n[sessions."${id}"]\ntrigger_tokens = 50000\nfloor_tokens = 9000\n`,
    );
    const sessionLine = (...flags: string[]) => gob(['config', '7d3f', '--config', config, ...flags]).stdout.split('\n').find((l) => l.startsWith('# session:'));
    expect(sessionLine('--trigger', '60000', '--floor', '100')).toBe(
      `# session: claude_code session ${id}; flags override every key its [sessions."${id}"] table sets (floor_tokens, trigger_tokens)`,
    );
    expect(sessionLine('--trigger', '60000')).toBe(`# session: claude_code session ${id}; flags override trigger_tokens of its [sessions."${id}"] table`);
    expect(sessionLine()).toBe(`# session: claude_code session ${id}`);
    const inertOnly = write(join(home.root, 'inert-session.toml'), `[sessions."${id}"]\nauto_apply_store = true\n`);
    expect(gob(['config', '7d3f', '--config', inertOnly]).stdout).toContain(`# session: claude_code session ${id}; its [sessions."${id}"] table sets no policy key\n`);
  });

  it('config --json carries the notes the text gives: loose session tables and settings with no effect', () => {
    const config = write(
      join(home.root, 'notes.toml'),
      '[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nauto_apply_store = true\n[sessions."7d3f"]\nstrategy = "elide"\n[rollout]\ncodex = 50\n',
    );
    const { status, body, stderr } = json(['config', '7d3f', '--config', config]);
    expect(status).toBe(0);
    expect(validateConfigCommandResult(body), JSON.stringify(validateConfigCommandResult.errors)).toBe(true);
    expect(body.unapplied_session_tables).toEqual(['7d3f']);
    expect(body.inert_settings).toEqual([`auto_apply_store in [policy] of ${config}`, `[rollout] of ${config}`]);
    expect(stderr).toBe('');
    // The text says the same things.
    const human = gob(['config', '7d3f', '--config', config]).stdout;
    expect(human).toContain('[sessions."7d3f"] is not applied: a session table is keyed by the full session id');
    for (const setting of body.inert_settings) expect(human).toContain(`# accepted from the original tool's configuration, no effect here: ${setting}\n`);
    // Nothing to say is an empty list, not a missing field.
    expect(json(['config', '--config', write(join(home.root, 'quiet.toml'), '[policy]\n')]).body).toMatchObject({ unapplied_session_tables: [], inert_settings: [] });
  });

  it('config: an unknown preset is a usage error listing the presets', () => {
    const { status, body } = json(['config', '--preset', 'deepwork']);
    expect(status).toBe(2);
    expect(body).toEqual({ ok: false, error: { code: 'unknown_preset', message: "unknown preset 'deepwork' (did you mean deep-work?); configured presets: deep-work, team", details: { presets: ['deep-work', 'team'] } } });
  });

  it('an unknown strategy or scorer id is refused by config, policy-check, plan, explain and tune, whatever the context', () => {
    const strategyTypo = write(join(home.root, 'typo-strategy.toml'), '[policy]\nstrategy = "elidee"\n');
    const scorerTypo = write(join(home.root, 'typo-scorer.toml'), '[policy]\nscorer = "nope"\n');
    for (const args of [
      ['config', '--config', strategyTypo],
      ['policy-check', '--provider', 'codex', '--context-tokens', '300000', '--config', strategyTypo],
      // The demo-sized session is far below this trigger: the id is checked before that matters.
      ['plan', '7d3f', '--config', strategyTypo],
      ['plan', '7d3f', '--strategy', 'nonexistent', '--trigger', '10000000', '--floor', '1'],
      ['explain', '--config', strategyTypo],
      ['explain', '7d3f', '--config', strategyTypo],
      ['tune', '7d3f', '--config', strategyTypo],
    ]) {
      const { status, body } = json(args);
      // A typo on the command line is a usage error; one in a file is a broken configuration.
      const fromFile = args.includes(strategyTypo);
      expect(status, args.join(' ')).toBe(fromFile ? 1 : 2);
      expect(body.error.code).toBe('unknown_strategy');
      // A near miss is named; a word like no strategy is not given a guess.
      expect(body.error.message).toMatch(/^unknown strategy '(elidee' \(did you mean elide\?\)|nonexistent'); known: .*\belide\b/);
      if (fromFile) expect(body.error.message).toContain(`(set by strategy: [policy] in ${strategyTypo})`);
    }
    // A scorer named as a strategy is said to be one.
    const mixedUp = json(['plan', '7d3f', '--strategy', 'heuristic']);
    expect(mixedUp.status).toBe(2);
    expect(mixedUp.body.error.message).toContain(`('heuristic' is a scorer: set scorer = "heuristic" and use the scored strategy)`);
    const scorer = json(['plan', '7d3f', '--config', scorerTypo]);
    expect(scorer.status).toBe(1);
    expect(scorer.body.error).toMatchObject({ code: 'unknown_scorer', message: `unknown scorer 'nope'; known: heuristic (set by scorer: [policy] in ${scorerTypo})` });
    expect(json(['config', '--config', scorerTypo]).body.error.code).toBe('unknown_scorer');
    expect(json(['explain', '--config', scorerTypo]).body.error.code).toBe('unknown_scorer');
    expect(json(['tune', '7d3f', '--config', scorerTypo]).body.error.code).toBe('unknown_scorer');
    // tune's numbers do not depend on the strategy, so it takes no --strategy to ignore.
    expect(json(['tune', '7d3f', '--strategy', 'elide'])).toMatchObject({ status: 2, body: { error: { code: 'usage', message: 'Nonexistent flag: --strategy; gobstopper tune --help lists its flags' } } });
  });

  it('an unknown flag is refused with the flag probably meant and where the flags are listed', () => {
    // The config spells it trigger_tokens; the flag is --trigger.
    const typed = gob(['plan', '7d3f', '--trigger-tokens', '100000', '--flor', '30000']);
    expect(typed.status).toBe(2);
    expect(typed.stderr).toBe('gobstopper: Nonexistent flags: --trigger-tokens (did you mean --trigger?), --flor (did you mean --floor?); gobstopper plan --help lists its flags\n');
    expect(json(['detect', '--limt', '3']).body.error).toEqual({ code: 'usage', message: 'Nonexistent flag: --limt (did you mean --limit?); gobstopper detect --help lists its flags' });
    // A command under a topic is named as it is typed; a flag nothing is near gets the pointer alone.
    expect(json(['plugin', 'list', '--nosuch']).body.error.message).toBe('Nonexistent flag: --nosuch; gobstopper plugin list --help lists its flags');
    expect(json(['detect', '--jsn']).body.error.message).toContain('(did you mean --json?)');
  });

  it('config and presets report broken tables they do not layer, naming each, before plan meets them', () => {
    const broken = write(
      join(home.root, 'broken-tables.toml'),
      '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nadaptive = true\n[provider.codex]\nstrategy = "nosuch"\n[provider.claude_code]\ncommand = "echo hi"\n' +
        '[presets.z]\nstrategy = "nosuch2"\n[presets.fine]\nstrategy = "elide"\n[sessions."zzz"]\nfloor_tokens = 999999\n',
    );
    const config = json(['config', '--config', broken]);
    expect(config.status).toBe(0);
    expect(validateConfigCommandResult(config.body)).toBe(true);
    expect(config.body.problems).toHaveLength(4);
    expect(config.body.problems[0]).toMatch(/^\[provider\.claude_code\]: 'command' in \[provider\.claude_code\] .* runs only with trusted_legacy_command = true/);
    expect(config.body.problems[1]).toMatch(/^\[provider\.codex\]: unknown strategy 'nosuch'/);
    expect(config.body.problems[2]).toMatch(/^\[presets\.z\]: unknown strategy 'nosuch2'/);
    expect(config.body.problems[3]).toMatch(/^\[sessions\."zzz"\]: invalid policy bounds: floor_tokens \(999999\) must be below trigger_tokens \(20000\)/);
    // With --json the problems are in the answer only; for people they are warnings on stderr.
    expect(config.stderr).toBe('');
    const human = gob(['config', '--config', broken]);
    expect(human.stderr.split('\n').filter((l) => l.startsWith('warning: '))).toHaveLength(4);
    expect(human.stdout).toContain('# adaptive = true: plan tunes trigger_tokens and floor_tokens per session');
    const presets = json(['presets', '--config', broken]);
    expect(validatePresetsCommandResult(presets.body)).toBe(true);
    expect(presets.body.problems).toEqual(config.body.problems);
    // And a table plan uses is refused: the Claude session's provider table holds the command.
    expect(json(['plan', '7d3f', '--config', broken]).body.error.code).toBe('untrusted_legacy_command');
    // A clean file reports none.
    expect(json(['presets', '--config', write(join(home.root, 'clean.toml'), '[presets.fine]\nstrategy = "elide"\n')]).body.problems).toEqual([]);
  });

  it('config and presets report strategy_params a table they do not layer gets wrong, without failing', () => {
    const tables = write(
      join(home.root, 'param-tables.toml'),
      '[provider.codex]\nstrategy = "auto"\nstrategy_params = { candidates = "elide" }\n[presets.edited]\nstrategy = "agentic"\nstrategy_params = { editor = "scorred" }\n[presets.fine]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide", "dedupe"] }\n',
    );
    const config = json(['config', '--config', tables]);
    expect(config.status, config.stderr).toBe(0);
    expect(validateConfigCommandResult(config.body)).toBe(true);
    expect(config.body.problems).toEqual([
      `[provider.codex]: strategy_params for auto do not match the params_schema it declares at /candidates: must be array (set by strategy_params: [provider.codex] in ${tables})`,
      expect.stringMatching(new RegExp(`^\\[presets\\.edited\\]: unknown strategy 'scorred' in strategy_params\\.editor of agentic \\(did you mean scored\\?\\); known: .*\\belide\\b.* \\(set by strategy_params: \\[presets\\.edited\\] in .*param-tables\\.toml\\)$`)),
    ]);
    const presets = json(['presets', '--config', tables]);
    expect(presets.status).toBe(0);
    expect(validatePresetsCommandResult(presets.body)).toBe(true);
    expect(presets.body.problems).toEqual(config.body.problems);
    const human = gob(['presets', '--config', tables]);
    expect(human.status).toBe(0);
    expect(human.stderr).toContain(`warning: [provider.codex]: strategy_params for auto do not match the params_schema it declares at /candidates: must be array (set by strategy_params: [provider.codex] in ${tables}) (refused when that table is used)\n`);
    // A command that does not use those tables is not failed by them; one that does is.
    const unused = json(['plan', '7d3f', '--config', tables]);
    expect(unused.status, JSON.stringify(unused.body)).toBe(0);
    expect(json(['plan', '7d3f', '--config', tables, '--preset', 'edited']).body.error).toMatchObject({ code: 'unknown_strategy', details: { key: 'strategy_params.editor' } });
  });

  it('config starts a strategy once when [policy] and a preset both set its strategy_params', () => {
    // An installed strategy that writes a line per start, in a data home of its own so no other test sees it.
    const dataHome = join(home.root, 'counted-data');
    const starts = join(home.root, 'counted-starts.log');
    const bundle = fixturePluginBundle(join(home.root, 'counted'), 'misbehaving-strategy.mjs', { args: ['ok', starts, 'counted'], id: 'counted', provides: { strategies: ['fixture_strategy'] } });
    const env = { XDG_DATA_HOME: dataHome };
    const added = gob(['plugin', 'add', bundle], { env });
    expect(added.status, added.stderr).toBe(0);
    const tables = write(join(home.root, 'counted.toml'), '[policy]\nstrategy = "fixture_strategy"\nstrategy_params = { a = 1 }\n[presets.x]\nstrategy_params = { b = 2 }\n');
    const config = json(['config', '--config', tables], { env });
    expect(config.status, config.stdout).toBe(0);
    expect(config.body.problems).toEqual([]);
    expect(readFileSync(starts, 'utf8')).toBe('ok\n');
  });

  it('a pinned plugin manifest that does not exist is named, by plan below its trigger and by config', () => {
    const manifest = join(home.root, 'nowhere', 'gobstopper-plugin.json');
    const config = write(join(home.root, 'missing-plugin.toml'), `[policy]\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${'a'.repeat(64)}" }\n`);
    for (const args of [['plan', '7d3f'], ['config']]) {
      const { status, body } = json([...args, '--config', config]);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error).toMatchObject({ code: 'not_a_bundle', message: `the configured plugin manifest ${manifest} does not exist (set by plugin: [policy] in ${config})` });
    }
  });

  it('a pinned plugin whose manifest is not the pinned one is refused by plan below its trigger and by config', () => {
    const id = 'e1e1e1e1-0000-4000-8000-000000000001';
    const b = modernSession({ sessionId: id });
    b.user('hello');
    b.text('hi');
    mkdirSync(join(home.claudeHome, 'projects', '-home-dev-pins'), { recursive: true });
    b.write(join(home.claudeHome, 'projects', '-home-dev-pins', `${id}.jsonl`));
    const manifest = join(repoRoot, 'examples', 'plugins', 'keep-last-jq', 'gobstopper-plugin.json');
    const actual = createHash('sha256').update(readFileSync(manifest)).digest('hex');
    const config = write(join(home.root, 'wrong-pin.toml'), `[policy]\nstrategy = "keep_last_jq"\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${'a'.repeat(64)}" }\n`);
    for (const args of [['plan', id], ['config']]) {
      const { status, body } = json([...args, '--config', config]);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error).toMatchObject({
        code: 'pin_mismatch',
        message: expect.stringContaining(`(pinned ${'a'.repeat(64)}, now ${actual}); if the change is yours, check the bundle (gobstopper plugin check ${shellWord(dirname(manifest))}) and set trusted_sha256 to ${actual} (set by plugin: [policy] in ${config})`),
      });
    }
    const right = write(join(home.root, 'right-pin.toml'), `[policy]\nstrategy = "keep_last_jq"\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${actual}" }\n`);
    const planned = json(['plan', id, '--config', right]);
    expect(planned.status, JSON.stringify(planned.body)).toBe(0);
    expect(planned.body.reason_code).toBe('below_trigger');
  });

  it('a pinned plugin that does not serve the policy strategy is refused by plan and config, naming the table', () => {
    const manifest = join(repoRoot, 'examples', 'plugins', 'keep-last-jq', 'gobstopper-plugin.json');
    const actual = createHash('sha256').update(readFileSync(manifest)).digest('hex');
    const config = write(join(home.root, 'other-strategy-pin.toml'), `[policy]\nstrategy = "elide"\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${actual}" }\n`);
    for (const args of [['plan', '7d3f'], ['config']]) {
      const { status, body } = json([...args, '--config', config]);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error).toMatchObject({ code: 'unknown_strategy', message: `the configured plugin keep-last-jq does not serve strategy elide (set by plugin: [policy] in ${config})` });
    }
  });

  it("config: the original tool's watch and rollout settings load, and are named as having no effect", () => {
    const legacy = write(join(home.root, 'original.toml'), '[policy]\nauto_apply_store = false\nacp_timeout_secs = 1800\n\n[rollout]\ncodex = 50\n');
    const human = gob(['config', '--config', legacy]);
    expect(human.status, human.stderr).toBe(0);
    expect(human.stdout).toContain(`# accepted from the original tool's configuration, no effect here: auto_apply_store in [policy] of ${legacy}`);
    expect(human.stdout).toContain(`no effect here: acp_timeout_secs in [policy] of ${legacy}`);
    expect(human.stdout).toContain(`no effect here: [rollout] of ${legacy}`);
    // An integer past what a number holds is named by table and key in the details, as every config error is.
    const huge = write(join(home.root, 'huge.toml'), '[presets.x]\nfloor_tokens = 99999999999999999999\n');
    expect(json(['config', '--config', huge]).body.error).toMatchObject({ code: 'invalid_config', details: { path: huge, table: '[presets.x]', key: 'floor_tokens' } });
    const over = write(join(home.root, 'rollout-over.toml'), '[rollout]\ncodex = 101\n');
    const { status, body } = json(['config', '--config', over]);
    expect(status).toBe(1);
    expect(body.error.code).toBe('invalid_config');
  });

  it('strategy_params are checked against the params_schema the strategy declares', () => {
    const typo = write(join(home.root, 'params-typo.toml'), '[policy]\nstrategy = "elide"\nstrategy_params = { bogus = 1 }\n');
    const refused = json(['plan', '7d3f', '--config', typo, '--trigger', '2', '--floor', '1']);
    expect(refused.status).toBe(1);
    expect(refused.body.error).toMatchObject({
      code: 'invalid_strategy_params',
      message: `strategy_params for elide do not match the params_schema it declares: must NOT have additional properties 'bogus' (set by strategy_params: [policy] in ${typo})`,
    });
    // Far below the default trigger, and without a session at all: a broken table is an error every time.
    for (const args of [
      ['plan', '7d3f', '--config', typo],
      ['apply', '7d3f', '--config', typo],
      ['eval', '7d3f', '--config', typo],
      ['config', '--config', typo],
      ['explain', '--config', typo],
      ['explain', '7d3f', '--config', typo],
      ['tune', '7d3f', '--config', typo],
      ['policy-check', '--provider', 'codex', '--context-tokens', '1', '--config', typo],
    ]) {
      const { status, body } = json(args);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error, args.join(' ')).toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining(`'bogus' (set by strategy_params: [policy] in ${typo})`) });
    }
    const fine = write(join(home.root, 'params-fine.toml'), '[policy]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide", "dedupe"] }\n');
    for (const args of [['plan', '7d3f'], ['config'], ['explain']]) expect(json([...args, '--config', fine]).status, args.join(' ')).toBe(0);
    const planned = json(['plan', '7d3f', '--config', fine, '--trigger', '2', '--floor', '1']);
    expect(planned.status, planned.stderr).toBe(0);
    const wrongType = write(join(home.root, 'params-type.toml'), '[policy]\nstrategy = "auto"\nstrategy_params = { candidates = "elide" }\n');
    expect(json(['plan', '7d3f', '--config', wrongType, '--trigger', '2', '--floor', '1']).body.error).toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining('at /candidates: must be array') });
  });

  it("a strategy id inside strategy_params that nothing serves is refused at resolution, naming the file, table and key", () => {
    const typo = write(join(home.root, 'param-ids.toml'), '[policy]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide", "elidee"] }\n[presets.edited]\nstrategy = "agentic"\nstrategy_params = { editor = "scorred" }\n');
    // Far below the trigger: refused before any strategy runs, exit 1 as every config error.
    for (const args of [
      ['plan', '7d3f', '--config', typo],
      ['config', '--config', typo],
      ['policy-check', '--provider', 'codex', '--context-tokens', '1', '--config', typo],
    ]) {
      const { status, body } = json(args);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error, args.join(' ')).toMatchObject({
        code: 'unknown_strategy',
        message: expect.stringMatching(new RegExp(`^unknown strategy 'elidee' in strategy_params\\.candidates\\[1\\] of auto \\(did you mean elide\\?\\); known: .*\\belide\\b.* \\(set by strategy_params: \\[policy\\] in ${typo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`)),
        details: { id: 'elidee', key: 'strategy_params.candidates[1]' },
      });
    }
    const fixed = write(join(home.root, 'param-ids-editor.toml'), readFileSync(typo, 'utf8').replace('"elidee"', '"dedupe"'));
    const human = gob(['plan', '7d3f', '--config', fixed, '--preset', 'edited']);
    expect(human.status).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(new RegExp(`^gobstopper: unknown strategy 'scorred' in strategy_params\\.editor of agentic \\(did you mean scored\\?\\); known: .* \\(set by strategy_params: \\[presets\\.edited\\] in .*param-ids-editor\\.toml\\)\\n$`));
    expect(json(['plan', '7d3f', '--config', fixed]).status).toBe(0);
  });

  it('every strategy id inside strategy_params that nothing serves is named in one error, not one per run', () => {
    const text = '[policy]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide", "nope1", "nope2"] }\n[presets.two]\nstrategy = "auto"\nstrategy_params = { candidates = ["nada1", "dedupe", "nada2"] }\n';
    const typos = write(join(home.root, 'param-ids-two.toml'), text);
    const both = `unknown strategies 'nope1' in strategy_params.candidates[1] and 'nope2' in strategy_params.candidates[2] of auto; known: `;
    for (const args of [
      ['plan', '7d3f', '--config', typos],
      ['config', '--config', typos],
    ]) {
      const { status, body } = json(args);
      expect(status, args.join(' ')).toBe(1);
      expect(body.error.code).toBe('unknown_strategy');
      expect(body.error.message.startsWith(both), body.error.message).toBe(true);
      expect(body.error.message).toMatch(/\belide\b.* \(set by strategy_params: \[policy\] in .*param-ids-two\.toml\)$/);
      // The first is where it always was; all of them are listed beside it.
      expect(body.error.details).toMatchObject({
        id: 'nope1',
        key: 'strategy_params.candidates[1]',
        unknown: [
          { id: 'nope1', key: 'strategy_params.candidates[1]' },
          { id: 'nope2', key: 'strategy_params.candidates[2]' },
        ],
      });
    }
    const human = gob(['plan', '7d3f', '--config', typos]);
    expect(human.status).toBe(1);
    expect(human.stderr.startsWith(`gobstopper: ${both}`)).toBe(true);
    expect(human.stderr.split('\n')).toHaveLength(2);
    // A table config does not layer is reported the same way, among its problems.
    const fine = write(join(home.root, 'param-ids-preset.toml'), text.replace('"nope1", "nope2"', '"dedupe"'));
    const presets = json(['presets', '--config', fine]);
    expect(presets.status, presets.stderr).toBe(0);
    expect(presets.body.problems).toEqual([
      expect.stringMatching(/^\[presets\.two\]: unknown strategies 'nada1' in strategy_params\.candidates\[0\] and 'nada2' in strategy_params\.candidates\[2\] of auto; known: /),
    ]);
    expect(readFileSync(typos, 'utf8')).toBe(text);
  });

  it('config: a bad config file is one clear error and changes nothing', () => {
    const bad = write(join(home.root, 'bad.toml'), '[provider.codex]\ntrigger = 100000\n');
    const { status, body } = json(['config', '--config', bad]);
    expect(status).toBe(1);
    expect(body.error).toEqual({ code: 'invalid_config', message: `config ${bad}: unknown key 'trigger' in [provider.codex] (did you mean 'trigger_tokens'?)`, details: { path: bad, table: '[provider.codex]', key: 'trigger' } });
    const human = gob(['config', '--config', bad]);
    expect(human.status).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toBe(`gobstopper: config ${bad}: unknown key 'trigger' in [provider.codex] (did you mean 'trigger_tokens'?)\n`);
    const notToml = write(join(home.root, 'broken.toml'), '[policy\n');
    expect(json(['presets', '--config', notToml]).body.error.message).toMatch(/^config .*broken\.toml is not valid TOML: .* at line 1, column \d+$/);
  });

  it('config: floor at or above the trigger is refused, a usage error naming the flag to add when a flag broke it', () => {
    const { status, body } = json(['config', '--provider', 'codex', '--floor', '180000']);
    expect(status).toBe(2);
    expect(body.error.code).toBe('invalid_policy');
    expect(body.error.message).toMatch(/^invalid policy bounds: floor_tokens \(180000\) must be below trigger_tokens \(180000\) .*; add --trigger above 180000$/);
    const alone = json(['config', '--provider', 'codex', '--trigger', '10000']);
    expect(alone.status).toBe(2);
    expect(alone.body.error.message).toMatch(/floor_tokens: built-in default; trigger_tokens: command-line flag\]; add --floor below 10000$/);
    // A script finds the keys and where each value came from without reading the sentence.
    expect(alone.body.error.details.violations).toEqual([
      { keys: ['floor_tokens', 'trigger_tokens'], message: 'floor_tokens (40000) must be below trigger_tokens (10000)', origins: ['floor_tokens: built-in default', 'trigger_tokens: command-line flag'] },
    ]);
  });

  it('policy-check: live, idle and below the trigger', () => {
    const live = json(['policy-check', '--provider', 'codex', '--context-tokens', '300000', '--session-active']);
    expect(live.status).toBe(0);
    expect(validatePolicyCheckCommandResult(live.body)).toBe(true);
    expect(live.body).toMatchObject({ action: 'provider_compact', control: 'thread/compact/start', trigger_tokens: 180_000, strategy: 'auto', provider: 'codex' });
    expect(json(['policy-check', '--provider', 'claude_code', '--context-tokens', '300000', '--session-active']).body).toMatchObject({ action: 'provider_compact', control: '/compact or relaunch --autocompact', trigger_tokens: 200_000 });
    // No bundle reads Devin sessions: the decision stands, and its JSON says nothing here can carry it out.
    const devin = json(['policy-check', '--provider', 'devin', '--context-tokens', '300000']);
    expect(devin.body).toMatchObject({ action: 'transcript_compact', control: null, notes: ['no installed provider bundle reads devin sessions, so gobstopper apply cannot act on this'] });
    expect(validatePolicyCheckCommandResult(devin.body)).toBe(true);
    expect(live.body.notes).toBeUndefined();
    // Adaptive tuning reads the transcript, which policy-check never does: said, in JSON too.
    const adaptive = json(['policy-check', '--provider', 'codex', '--context-tokens', '100000', '--config', write(join(home.root, 'adaptive.toml'), '[policy]\nadaptive = true\n')]);
    expect(adaptive.body.notes).toEqual([expect.stringMatching(/^adaptive is on: plan and apply tune the trigger and floor per session/)]);
    expect(json(['policy-check', '--provider', 'codex', '--context-tokens', '100000', '--session-active']).body).toMatchObject({ action: 'none', control: null });
    const high = json(['policy-check', '--provider', 'codex', '--context-tokens', '130000', '--session-active', '--quota-pressure', 'high']);
    expect(high.body).toMatchObject({ action: 'provider_compact', trigger_tokens: 180_000, effective_trigger_tokens: 126_000 });
    expect(gob(['policy-check', '--provider', 'codex', '--context-tokens', '130000', '--session-active', '--quota-pressure', 'high']).stdout).toBe(
      'action=provider_compact strategy=auto trigger_tokens=180000 effective_trigger_tokens=126000 control=thread/compact/start\n',
    );
    // ×0.7 would put the trigger under the floor; it stays where a compaction can still save the minimum, and says so.
    const nearFloor = write(join(home.root, 'near-floor.toml'), '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 15000\n');
    const held = json(['policy-check', '--provider', 'codex', '--context-tokens', '14500', '--quota-pressure', 'high', '--config', nearFloor]);
    expect(validatePolicyCheckCommandResult(held.body)).toBe(true);
    expect(held.body).toMatchObject({ action: 'none', effective_trigger_tokens: 19_096, notes: [expect.stringContaining('would bring the trigger 20,000 to 14,000 (×0.7), too near the floor (15,000)')] });
    // config gives the same reason beside the same number, in its JSON as in its comment line.
    const configHeld = json(['config', '--quota-pressure', 'high', '--config', nearFloor]);
    expect(validateConfigCommandResult(configHeld.body), JSON.stringify(validateConfigCommandResult.errors)).toBe(true);
    expect(configHeld.body).toMatchObject({ policy: { effective_trigger_tokens: 19_096 }, notes: held.body.notes });
    expect(json(['config', '--quota-pressure', 'high']).body.notes).toBeUndefined();
    // The reference's name for Claude Code is taken too.
    expect(json(['policy-check', '--provider', 'claude', '--context-tokens', '300000']).body).toMatchObject({ provider: 'claude_code', action: 'transcript_compact' });
    expect(gob(['policy-check', '--provider', 'codex', '--context-tokens', '300000', '--session-active']).stdout).toBe(
      'action=provider_compact strategy=auto trigger_tokens=180000 control=thread/compact/start\n',
    );
    // A control with spaces stays one key=value word.
    expect(gob(['policy-check', '--provider', 'claude', '--context-tokens', '300000', '--session-active']).stdout).toBe(
      'action=provider_compact strategy=auto trigger_tokens=200000 control="/compact or relaunch --autocompact"\n',
    );
  });

  it('policy-check: bad flags are usage errors', () => {
    const gemini = gob(['policy-check', '--provider', 'gemini', '--context-tokens', '1']);
    expect({ status: gemini.status, stderr: gemini.stderr }).toEqual({ status: 2, stderr: 'gobstopper: --provider must be one of claude_code, codex, devin, claude (got gemini)\n' });
    expect(json(['policy-check', '--provider', 'codx', '--context-tokens', '1']).body.error.message).toBe('--provider must be one of claude_code, codex, devin, claude (got codx; did you mean codex?)');
    expect(gob(['policy-check', '--provider', 'codex']).status).toBe(2);
    expect(gob(['policy-check', '--provider', 'codex', '--context-tokens', '100000001']).status).toBe(2);
    expect(gob(['policy-check', '--provider', 'codex', '--context-tokens', '100000000']).status).toBe(0);
    const { status, body } = json(['policy-check', '--provider', 'codex', '--context-tokens', 'many']);
    expect(status).toBe(2);
    expect(body.ok).toBe(false);
  });

  it('an argument a command does not take, or an unknown command, is one usage error, in JSON with --json', () => {
    const extra = json(['presets', 'extra']);
    expect(extra.status).toBe(2);
    expect(extra.body).toEqual({ ok: false, error: { code: 'usage', message: 'Unexpected argument: extra (gobstopper presets --help lists what it takes)' } });
    // A command that takes an argument, given more, points at its help the same way.
    const more = gob(['vault', 'a', 'b', 'c']);
    expect({ status: more.status, stdout: more.stdout, stderr: more.stderr }).toEqual({ status: 2, stdout: '', stderr: 'gobstopper: Unexpected arguments: b, c (gobstopper vault --help lists what it takes)\n' });
    expect(json(['plugin', 'add', 'a', 'b']).body.error).toEqual({ code: 'usage', message: 'Unexpected argument: b (gobstopper plugin add --help lists what it takes)' });
    const unknown = gob(['nosuchcmd']);
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe("gobstopper: unknown command 'nosuchcmd'; gobstopper --help lists the commands\n");
    // A typo gets the nearest command; a flag before the command says where flags go.
    expect(json(['detcet']).body.error.message).toBe("unknown command 'detcet' (did you mean 'detect'?); gobstopper --help lists the commands");
    expect(json(['DETECT']).body.error.message).toBe("unknown command 'DETECT' (did you mean 'detect'?); gobstopper --help lists the commands");
    // The mistyped word is named, not the arguments after it, and still gets its suggestion.
    expect(json(['aply', '7d3f', '--strategy', 'elide']).body.error.message).toBe("unknown command 'aply' (did you mean 'apply'?); gobstopper --help lists the commands");
    expect(json(['plugin', 'lst']).body.error.message).toBe("unknown command 'plugin lst' (did you mean 'plugin list'?); gobstopper --help lists the commands");
    expect(json(['nosuchcmd', 'some-session']).body.error.message).toBe("unknown command 'nosuchcmd'; gobstopper --help lists the commands");
    // A short argument is not taken for part of the command.
    expect(json(['plugin', 'ad', '.']).body.error.message).toBe("unknown command 'plugin ad' (did you mean 'plugin add'?); gobstopper --help lists the commands");
    // The hidden `plugins` group is never suggested.
    expect(json(['pluginz']).body.error.message).not.toContain('did you mean');
    const early = gob(['--verbose', 'detect']);
    expect(early.status).toBe(2);
    expect(early.stderr).toContain("'--verbose' is a flag: flags go after the command");
    // --json put first still asks for JSON: the refusal is the one error object on stdout.
    const earlyJson = gob(['--json', 'detect']);
    expect({ status: earlyJson.status, stderr: earlyJson.stderr }).toEqual({ status: 2, stderr: '' });
    expect(JSON.parse(earlyJson.stdout)).toEqual({ ok: false, error: { code: 'usage', message: "'--json' is a flag: flags go after the command, as in gobstopper detect --json (gobstopper --help lists the commands)" } });
    // --json=true is named for what it is, not as an unexpected argument somewhere else.
    const valued = gob(['plan', '7d3f', '--json=true']);
    expect({ status: valued.status, stderr: valued.stderr }).toEqual({ status: 2, stderr: 'gobstopper: --json takes no value; pass --json alone\n' });
    // So is any flag that takes no value: oclif would take the value for the command's argument.
    const verify = gob(['vault', '--verify=true']);
    expect({ status: verify.status, stdout: verify.stdout, stderr: verify.stderr }).toEqual({ status: 2, stdout: '', stderr: 'gobstopper: --verify takes no value; pass --verify alone\n' });
    expect(json(['apply', '--allow-live=false', '7d3f']).body).toEqual({ ok: false, error: { code: 'usage', message: '--allow-live takes no value; pass --allow-live alone' } });
    expect(json(['prune', '--yes=true']).body.error.message).toBe('--yes takes no value; pass --yes alone');
  });

  it('help answers as every command does: -h, help <command>, and --json for scripts', () => {
    const short = gob(['detect', '-h']);
    expect(short.status).toBe(0);
    expect(short.stdout).toContain('USAGE\n  $ gobstopper detect');
    expect(short.stderr).toBe('');
    expect(gob(['-h']).stdout).toContain('COMMANDS');
    expect(gob(['help', 'plugin', 'add']).stdout).toContain('$ gobstopper plugin add SOURCE');
    // The help command has help of its own, as every command does, not the root listing.
    for (const asked of [['help', '--help'], ['help', '-h'], ['help', 'help']]) {
      const own = gob(asked);
      expect(own.status, asked.join(' ')).toBe(0);
      expect(own.stdout, asked.join(' ')).toContain('USAGE\n  $ gobstopper help [COMMAND...]');
      expect(own.stdout, asked.join(' ')).toContain('With no words, lists every command.');
      expect(own.stdout, asked.join(' ')).not.toContain('\nCOMMANDS\n');
    }
    expect(gob(['help']).stdout).toContain('\nCOMMANDS\n');
    const plan = json(['help', 'plan']);
    expect(plan.status).toBe(0);
    expect(validateHelpCommandResult(plan.body)).toBe(true);
    expect(plan.body).toMatchObject({ command: 'plan', args: [{ name: 'session', required: true }] });
    expect(plan.body.flags.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['strategy', 'trigger', 'floor', 'preset']));
    const all = json(['help']);
    expect(all.body.commands.map((c: { command: string }) => c.command)).toEqual(expect.arrayContaining(['apply', 'plugin add', 'search-snapshot']));
    // oclif's own installer of command packages stays out of the listing.
    expect(all.body.commands.some((c: { command: string }) => c.command.startsWith('plugins'))).toBe(false);
    // A missing argument is one line that keeps its name apart from its description.
    expect(json(['plan']).body.error.message).toBe('Missing 1 required arg: session (Session id, unique id prefix, or transcript path.); gobstopper plan --help lists what it takes');
    // A required flag left out points at the flags the same way.
    expect(json(['policy-check', '--provider', 'codex']).body).toEqual({ ok: false, error: { code: 'usage', message: 'missing required flag --context-tokens; gobstopper policy-check --help lists its flags' } });
    // A bare topic lists its commands; with --json as one object, the same listing help --json gives.
    const topic = json(['plugin']);
    expect(topic.status, topic.stderr).toBe(0);
    expect(validateHelpCommandResult(topic.body)).toBe(true);
    expect(topic.body).toEqual(json(['help', 'plugin']).body);
    expect(topic.body.commands.map((c: { command: string }) => c.command)).toEqual(['plugin add', 'plugin check', 'plugin inspect', 'plugin list', 'plugin remove']);
    expect(gob(['plugin']).stdout).toContain('USAGE\n  $ gobstopper plugin COMMAND');
    // --help asks for the help, with or without --json, as it does for a command.
    expect(gob(['plugin', '--help', '--json']).stdout).toContain('USAGE\n  $ gobstopper plugin COMMAND');
    // A flag given to the group is refused as a command refuses one, not answered with help and 0.
    const flagged = gob(['plugin', '--force']);
    expect(flagged.status).toBe(2);
    expect(flagged.stdout).toBe('');
    expect(flagged.stderr).toBe("gobstopper: Nonexistent flag: --force; 'plugin' is a group of commands, which take the flags (gobstopper plugin --help lists them)\n");
    const flaggedJson = json(['plugin', '--force']);
    expect(flaggedJson.status).toBe(2);
    expect(flaggedJson.body).toMatchObject({ ok: false, error: { code: 'usage', message: expect.stringContaining('Nonexistent flag: --force;') } });
    // oclif's own commands write placeholders that their --help fills in; help --json fills them in too.
    const installer = json(['help', 'plugins', 'install']);
    expect(installer.status).toBe(0);
    expect(JSON.stringify(installer.body)).not.toContain('<%');
    expect(installer.body.summary).toBe('Installs a plugin into gobstopper.');
    expect(installer.body.examples).toContain('gobstopper plugins install someuser/someplugin');
    expect(JSON.stringify(json(['help', 'plugins']).body)).not.toContain('<%');
    const nosuch = json(['help', 'nosuch']);
    expect(nosuch.status).toBe(2);
    expect(nosuch.body).toEqual({ ok: false, error: { code: 'unknown_command', message: "no command 'nosuch'; gobstopper help lists the commands" } });
    // A typo given to help gets the nearest command, as the same typo given as a command does.
    expect(json(['help', 'pln']).body.error.message).toBe("no command 'pln' (did you mean 'plan'?); gobstopper help lists the commands");
    const topicTypo = gob(['help', 'plugin', 'lst']);
    expect({ status: topicTypo.status, stderr: topicTypo.stderr }).toEqual({ status: 2, stderr: "gobstopper: no command 'plugin lst' (did you mean 'plugin list'?); gobstopper help lists the commands\n" });
  });

  it('explain: the occupancy math in words and numbers', () => {
    const { status, body } = json(['explain', '--provider', 'codex', '--context-tokens', '250000']);
    expect(status).toBe(0);
    expect(validateExplainCommandResult(body), JSON.stringify(validateExplainCommandResult.errors)).toBe(true);
    expect(body.policy).toMatchObject({ trigger_tokens: 180_000, effective_trigger_tokens: 180_000 });
    expect(body.assessment).toMatchObject({ over_trigger: true, reclaimable_to_floor_tokens: 210_000 });
    const human = gob(['explain']);
    expect(human.status).toBe(0);
    expect(human.stdout).toContain('compact when the context reaches 200,000 tokens');
    expect(human.stdout).toContain('What counts as context:');
    expect(human.stdout).toContain('What a cycle costs:');
    // Compared with a window nobody named, it says so, and how to name one.
    expect(human.stdout.replace(/\n/g, ' ')).toContain('That window is an assumption: no session was named and no --window given.');
    expect(gob(['explain', '--window', '200000']).stdout).not.toContain('That window is an assumption');
    // A trigger past where a small window's client compacts by itself: no figures of a cycle that never happens.
    const small = json(['explain', '--window', '20000']);
    expect(validateExplainCommandResult(small.body), JSON.stringify(validateExplainCommandResult.errors)).toBe(true);
    expect(small.body.cycle).toMatchObject({ reclaimed_per_cycle_tokens: null, average_context_tokens: null, compaction_input_tokens: null, fewer_tokens_ratio: null, native_trigger_tokens: 18_000 });
    expect(small.body.warnings.map((w: { code: string }) => w.code)).toEqual(['trigger_never_reached']);
    expect(body.warnings).toEqual([]);
    // The window is bounded as a context size is: no ratio from an absurd window, no advice to go below 1.
    for (const window of ['999', '100000001']) expect(json(['explain', '--window', window]).status, window).toBe(2);
    expect(json(['explain', '--window', '100000000']).status).toBe(0);
  });

  it('never runs code from the working directory while looking for config', () => {
    const marker = join(project, 'meta-config-ran');
    write(join(project, '.config', 'config.js'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x');\nmodule.exports = {};\n`);
    write(join(project, '.config', 'config.cjs'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x');\nmodule.exports = {};\n`);
    expect(gob(['presets']).status).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it('a refused legacy proposal says where it broke and whose it was', () => {
    const script = write(join(home.root, 'bin', 'bad-proposer.sh'), '#!/bin/sh\ncat >/dev/null\necho \'{"edits":[{"op":"elide","line_indexes":[99999],"stub_template":"[x]"}]}\'\n');
    chmodSync(script, 0o755);
    const config = write(join(home.root, 'legacy.toml'), `[policy]\ntrigger_tokens = 2\nfloor_tokens = 1\n\n[presets.u]\ncommand = "${script}"\ntrusted_legacy_command = true\n`);
    const shown = gob(['config', '--preset', 'u', '--config', config]).stdout;
    expect(shown).toContain(`command = ${JSON.stringify(script)}  # [presets.u] in ${config}`);
    expect(shown).toContain(`trusted_legacy_command = true  # [presets.u] in ${config}`);
    const human = gob(['plan', '7d3f', '--preset', 'u', '--config', config]);
    expect(human.status).toBe(1);
    // The rule's exact text first, then what broke it; the suffix adds what the reason does not name.
    expect(human.stderr).toMatch(/^gobstopper: unknown edit index: line 100000 is not a record of this transcript, which has \d+ \(edit 0, proposed by the command of \[presets\.u\]\)\n$/);
    const { body } = json(['plan', '7d3f', '--preset', 'u', '--config', config]);
    expect(body.error).toMatchObject({ code: 'unknown_edit_index', details: { rule: 'unknown_edit_index', edit_index: 0, line_index: 99999, proposer: 'command of [presets.u]' } });
    expect(body.error.message).toBe(`unknown edit index: ${body.error.details.why}`);

    // Orchestrators and readers of explain learn that a user's script writes the edits, as plan names it.
    const check = json(['policy-check', '--provider', 'codex', '--context-tokens', '30000', '--preset', 'u', '--config', config]);
    expect(validatePolicyCheckCommandResult(check.body)).toBe(true);
    expect(check.body).toMatchObject({ strategy: 'preset:auto', proposer: { kind: 'legacy_command', command: script, table: '[presets.u]' }, notes: ['plans come from the command of [presets.u], not from a strategy bundle'] });
    expect(gob(['policy-check', '--provider', 'codex', '--context-tokens', '30000', '--preset', 'u', '--config', config]).stdout).toBe('action=transcript_compact strategy=preset:auto trigger_tokens=2\n');
    const explained = json(['explain', '--preset', 'u', '--config', config]);
    expect(validateExplainCommandResult(explained.body)).toBe(true);
    expect(explained.body.proposer).toMatchObject({ kind: 'legacy_command', table: '[presets.u]' });
    expect(explained.body.lines[0]).toMatch(/^Policy: strategy auto \(proposed by the command of \[presets\.u\]; plans are named preset:auto\); compact when/);
    // Without one, neither says anything of a proposer.
    expect(json(['policy-check', '--provider', 'codex', '--context-tokens', '30000', '--config', config]).body.proposer).toBeUndefined();
  });

  it('a project file may not configure a command', () => {
    const repo = join(home.root, 'work', 'evil');
    write(join(repo, 'package.json'), '{}');
    write(join(repo, 'gobstopper.config.toml'), '[policy]\ncommand = "touch pwned"\ntrusted_legacy_command = true\n');
    const { status, body } = json(['config'], { cwd: repo });
    expect(status).toBe(1);
    expect(body.error.message).toMatch(/'command' in \[policy\] is not allowed in a project file/);
    expect(existsSync(join(repo, 'pwned'))).toBe(false);
  });
});
