/**
 * The policy commands as a user runs them: the built CLI (`node scripts/build.mjs --kernel`) in a
 * throwaway home, with config files written the way a user would write them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  validateConfigCommandResult,
  validateExplainCommandResult,
  validatePolicyCheckCommandResult,
  validatePresetsCommandResult,
} from '../../schemas/generated/validators.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const bin = join(repoRoot, 'bin', 'run.js');
const built = existsSync(join(repoRoot, 'dist', 'kernel', 'cli', 'commands', 'policy-check.js'));

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

describe.skipIf(!built)('policy commands (built CLI)', () => {
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
    expect(body).toEqual({ config_files: [{ scope: 'user', path: userConfigPath(), loaded: false }], presets: [] });
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
    expect(human.stdout.split('\n')[0]).toBe(`deep-work  strategy="elide" trigger_tokens=150000 floor_tokens=5000  (both: ${join(project, '.gobstopperrc.toml')})`);
  });

  it('config: shows the resolved policy and where each value came from', () => {
    const { status, body } = json(['config', 's-1', '--provider', 'codex', '--preset', 'deep-work']);
    expect(status).toBe(0);
    expect(validateConfigCommandResult(body), JSON.stringify(validateConfigCommandResult.errors)).toBe(true);
    expect(body.policy).toMatchObject({ strategy: 'elide', trigger_tokens: 150_000, floor_tokens: 10_000, effective_trigger_tokens: 150_000 });
    expect(body.sources.floor_tokens).toEqual({ layer: 'session', scope: 'user', table: '[sessions.s-1]', path: userConfigPath() });
    expect(body.sources.strategy).toEqual({ layer: 'preset', scope: 'user', table: '[presets.deep-work]', path: userConfigPath() });
    expect(body.config_files).toEqual([
      { scope: 'user', path: userConfigPath(), loaded: true },
      { scope: 'project', path: join(project, '.gobstopperrc.toml'), loaded: true },
    ]);
    const human = gob(['config', '--provider', 'codex', '--trigger', '190000']);
    expect(human.stdout).toContain('trigger_tokens = 190000  # command-line flag');
    expect(human.stdout).toContain(`min_savings_tokens = 4096  # built-in default`);
  });

  it('config: an unknown preset is a usage error listing the presets', () => {
    const { status, body } = json(['config', '--preset', 'deepwork']);
    expect(status).toBe(2);
    expect(body).toEqual({ ok: false, error: { code: 'unknown_preset', message: "unknown preset 'deepwork'; configured presets: deep-work, team", details: { presets: ['deep-work', 'team'] } } });
  });

  it('config: a bad config file is one clear error and changes nothing', () => {
    const bad = write(join(home.root, 'bad.toml'), '[provider.codex]\ntrigger = 100000\n');
    const { status, body } = json(['config', '--config', bad]);
    expect(status).toBe(1);
    expect(body.error).toEqual({ code: 'invalid_config', message: `config ${bad}: unknown key 'trigger' in [provider.codex]` });
    const human = gob(['config', '--config', bad]);
    expect(human.status).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toBe(`gobstopper: config ${bad}: unknown key 'trigger' in [provider.codex]\n`);
    const notToml = write(join(home.root, 'broken.toml'), '[policy\n');
    expect(json(['presets', '--config', notToml]).body.error.message).toMatch(/^config .*broken\.toml is not valid TOML: .* at line 1, column \d+$/);
  });

  it('config: floor at or above the trigger is refused', () => {
    const { status, body } = json(['config', '--provider', 'codex', '--floor', '180000']);
    expect(status).toBe(1);
    expect(body.error.code).toBe('invalid_policy');
    expect(body.error.message).toMatch(/^invalid policy bounds: floor_tokens \(180000\) must be below trigger_tokens \(180000\)/);
  });

  it('policy-check: live, idle and below the trigger', () => {
    const live = json(['policy-check', '--provider', 'codex', '--context-tokens', '300000', '--session-active']);
    expect(live.status).toBe(0);
    expect(validatePolicyCheckCommandResult(live.body)).toBe(true);
    expect(live.body).toMatchObject({ action: 'provider_compact', control: 'thread/compact/start', trigger_tokens: 180_000, strategy: 'auto', provider: 'codex' });
    expect(json(['policy-check', '--provider', 'claude_code', '--context-tokens', '300000', '--session-active']).body).toMatchObject({ action: 'provider_compact', control: '/compact', trigger_tokens: 200_000 });
    expect(json(['policy-check', '--provider', 'devin', '--context-tokens', '300000']).body).toMatchObject({ action: 'transcript_compact', control: null });
    expect(json(['policy-check', '--provider', 'codex', '--context-tokens', '100000', '--session-active']).body).toMatchObject({ action: 'none', control: null });
    const high = json(['policy-check', '--provider', 'codex', '--context-tokens', '130000', '--session-active', '--quota-pressure', 'high']);
    expect(high.body).toMatchObject({ action: 'provider_compact', trigger_tokens: 126_000, configured_trigger_tokens: 180_000 });
    expect(gob(['policy-check', '--provider', 'codex', '--context-tokens', '300000', '--session-active']).stdout).toBe(
      'action=provider_compact strategy=auto trigger_tokens=180000 control=thread/compact/start\n',
    );
  });

  it('policy-check: bad flags are usage errors', () => {
    expect(gob(['policy-check', '--provider', 'gemini', '--context-tokens', '1']).status).toBe(2);
    expect(gob(['policy-check', '--provider', 'codex']).status).toBe(2);
    const { status, body } = json(['policy-check', '--provider', 'codex', '--context-tokens', 'many']);
    expect(status).toBe(2);
    expect(body.ok).toBe(false);
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
  });

  it('never runs code from the working directory while looking for config', () => {
    const marker = join(project, 'meta-config-ran');
    write(join(project, '.config', 'config.js'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x');\nmodule.exports = {};\n`);
    write(join(project, '.config', 'config.cjs'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x');\nmodule.exports = {};\n`);
    expect(gob(['presets']).status).toBe(0);
    expect(existsSync(marker)).toBe(false);
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
