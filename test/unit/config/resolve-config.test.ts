import { describe, expect, it } from 'vitest';
import { checkConfigData, type LoadedConfig } from '../../../kernel/config/load-config.js';
import { parseConfigToml } from '../../../kernel/config/read-config-file.js';
import { presetNames, resolveConfig, type ResolveOptions } from '../../../kernel/config/resolve-config.js';
import { listPresets } from '../../../kernel/cli/commands/presets.js';
import { toResolvedPolicy } from '../../../kernel/policy/effective-policy.js';
import { validateConfigCommandResult, validateResolvedPolicy } from '../../../schemas/generated/validators.js';

const USER_PATH = '/home/u/.config/gobstopper/config.toml';
const PROJECT_PATH = '/work/repo/.gobstopperrc.toml';
const SHA = 'c'.repeat(64);

function loaded(userToml: string, projectToml?: string): LoadedConfig {
  const user = { scope: 'user' as const, path: USER_PATH, loaded: true, data: checkConfigData(parseConfigToml(userToml, USER_PATH), 'user', USER_PATH) };
  const project =
    projectToml === undefined ? null : { scope: 'project' as const, path: PROJECT_PATH, loaded: true, data: checkConfigData(parseConfigToml(projectToml, PROJECT_PATH), 'project', PROJECT_PATH) };
  return { user, project };
}

const USER = `
[policy]
strategy = "auto"
trigger_tokens = 200_000
keep_score_threshold = 0.4

[provider.codex]
trigger_tokens = 180_000
floor_tokens = 30_000

[presets.deep-work]
strategy = "elide"
trigger_tokens = 150_000
floor_tokens = 20_000

[presets.custom-script]
command = "python3 ~/bin/compact.py"
trusted_legacy_command = true

[presets.pinned]
strategy = "mine"
plugin = { manifest = "/opt/mine/gobstopper-plugin.json", trusted_sha256 = "${SHA}" }

[sessions."s-1"]
trigger_tokens = 120_000
`;

const PROJECT = `
[policy]
min_savings_tokens = 8_000

[provider.codex]
floor_tokens = 25_000

[presets.deep-work]
floor_tokens = 10_000

[presets.team]
strategy = "structured"
`;

interface LayerCase {
  name: string;
  options: ResolveOptions;
  project?: boolean;
  expect: Record<string, unknown>;
  from?: Record<string, string>;
}

const layering: LayerCase[] = [
  { name: 'defaults under [policy]', options: {}, expect: { strategy: 'auto', trigger_tokens: 200_000, floor_tokens: 40_000, min_savings_tokens: 4_096 }, from: { trigger_tokens: 'policy user', floor_tokens: 'default builtin' } },
  { name: 'the project [policy] refines the user [policy]', options: {}, project: true, expect: { trigger_tokens: 200_000, min_savings_tokens: 8_000 }, from: { min_savings_tokens: 'policy project' } },
  { name: 'a provider table over [policy]', options: { provider: 'codex' }, expect: { trigger_tokens: 180_000, floor_tokens: 30_000 }, from: { trigger_tokens: 'provider user' } },
  { name: 'a project provider table over the user one', options: { provider: 'codex' }, project: true, expect: { trigger_tokens: 180_000, floor_tokens: 25_000 }, from: { floor_tokens: 'provider project' } },
  { name: 'another provider is untouched', options: { provider: 'claude_code' }, expect: { trigger_tokens: 200_000, floor_tokens: 40_000 } },
  { name: 'a preset over the provider', options: { provider: 'codex', preset: 'deep-work' }, expect: { strategy: 'elide', trigger_tokens: 150_000, floor_tokens: 20_000 }, from: { strategy: 'preset user' } },
  { name: 'a project preset refines the user preset key by key', options: { preset: 'deep-work' }, project: true, expect: { strategy: 'elide', trigger_tokens: 150_000, floor_tokens: 10_000 }, from: { floor_tokens: 'preset project', trigger_tokens: 'preset user' } },
  { name: 'a preset only the project defines', options: { preset: 'team' }, project: true, expect: { strategy: 'structured' } },
  { name: 'a session table over the preset', options: { provider: 'codex', preset: 'deep-work', session_id: 's-1' }, expect: { strategy: 'elide', trigger_tokens: 120_000, floor_tokens: 20_000 }, from: { trigger_tokens: 'session user' } },
  { name: 'another session is untouched', options: { session_id: 's-2' }, expect: { trigger_tokens: 200_000 } },
  {
    name: 'flags over everything',
    options: { provider: 'codex', preset: 'deep-work', session_id: 's-1', flags: { strategy: 'middle', trigger_tokens: 90_000, floor_tokens: 9_000 } },
    expect: { strategy: 'middle', trigger_tokens: 90_000, floor_tokens: 9_000 },
    from: { strategy: 'flag flag', trigger_tokens: 'flag flag' },
  },
  { name: 'an omitted threshold is inherited', options: { preset: 'deep-work' }, expect: { keep_score_threshold: 0.4 }, from: { keep_score_threshold: 'policy user' } },
];

describe('config layering', () => {
  it.each(layering)('$name', (c) => {
    const resolved = resolveConfig(loaded(USER, c.project ? PROJECT : undefined), c.options);
    expect(resolved.values).toMatchObject(c.expect);
    for (const [key, where] of Object.entries(c.from ?? {})) {
      const source = resolved.sources[key];
      expect(`${source?.layer} ${source?.scope}`, key).toBe(where);
    }
    expect(validateResolvedPolicy(toResolvedPolicy(resolved.values))).toBe(true);
  });

  it('records the table and file of every value', () => {
    const resolved = resolveConfig(loaded(USER, PROJECT), { provider: 'codex', session_id: 's-1' });
    expect(resolved.sources.trigger_tokens).toEqual({ layer: 'session', scope: 'user', table: '[sessions."s-1"]', path: USER_PATH });
    expect(resolved.sources.floor_tokens).toEqual({ layer: 'provider', scope: 'project', table: '[provider.codex]', path: PROJECT_PATH });
    expect(resolved.sources.adaptive).toEqual({ layer: 'default', scope: 'builtin', table: null, path: null });
    const output = {
      provider: resolved.provider,
      session_id: resolved.session_id,
      session_match: null,
      preset: resolved.preset,
      config_files: resolved.files,
      policy: toResolvedPolicy(resolved.values),
      external: resolved.external,
      discovery: resolved.discovery,
      sources: resolved.sources,
      problems: [],
      unapplied_session_tables: resolved.unapplied_session_tables,
      inert_settings: [],
    };
    expect(validateConfigCommandResult(output), JSON.stringify(validateConfigCommandResult.errors)).toBe(true);
  });

  it("names the keys the session's own table sets, even those a flag overrides", () => {
    const text = '[sessions."s-1"]\ntrigger_tokens = 90_000\nfloor_tokens = 9_000\nauto_apply_store = true\n';
    const flagged = resolveConfig(loaded(text), { session_id: 's-1', flags: { trigger_tokens: 100_000, floor_tokens: 5_000 } });
    expect(flagged.session_table_keys).toEqual(['floor_tokens', 'trigger_tokens']);
    expect(flagged.sources.trigger_tokens?.layer).toBe('flag');
    expect(resolveConfig(loaded(text), { session_id: 's-2' }).session_table_keys).toBeNull();
    expect(resolveConfig(loaded(text)).session_table_keys).toBeNull();
  });

  it('quotes session ids that are not bare TOML keys', () => {
    const resolved = resolveConfig(loaded('[sessions."01a0.7c"]\ntrigger_tokens = 90_000\n'), { session_id: '01a0.7c' });
    expect(resolved.sources.trigger_tokens?.table).toBe('[sessions."01a0.7c"]');
  });

  it('lists presets from both files', () => {
    expect(presetNames(loaded(USER, PROJECT))).toEqual(['custom-script', 'deep-work', 'pinned', 'team']);
  });
});

describe('proposers: command and plugin', () => {
  it('a trusted command becomes the proposer, named by its table', () => {
    const resolved = resolveConfig(loaded(USER), { preset: 'custom-script' });
    expect(resolved.external).toEqual({ kind: 'legacy_command', command: 'python3 ~/bin/compact.py', table: '[presets.custom-script]' });
  });

  it('a pinned plugin becomes the proposer', () => {
    const resolved = resolveConfig(loaded(USER), { preset: 'pinned' });
    expect(resolved.external).toEqual({ kind: 'plugin', manifest: '/opt/mine/gobstopper-plugin.json', trusted_sha256: SHA, table: '[presets.pinned]' });
    expect(resolved.values.strategy).toBe('mine');
  });

  it('--strategy drops a configured command or plugin, unless it names the strategy the plugin is pinned for', () => {
    expect(resolveConfig(loaded(USER), { preset: 'custom-script', flags: { strategy: 'elide' } }).external).toBeNull();
    const flagged = resolveConfig(loaded(USER), { preset: 'pinned', flags: { strategy: 'elide' } });
    expect(flagged.external).toBeNull();
    expect(flagged.sources.plugin?.layer).toBe('flag');
    // Naming the strategy the plugin is pinned for runs it through that pin.
    const same = resolveConfig(loaded(USER), { preset: 'pinned', flags: { strategy: 'mine' } });
    expect(same.external).toMatchObject({ kind: 'plugin', table: '[presets.pinned]' });
    expect(same.values.strategy).toBe('mine');
    // A command is not tied to a strategy id: --strategy still means the strategy.
    const command = resolveConfig(loaded(USER), { preset: 'custom-script' });
    expect(resolveConfig(loaded(USER), { preset: 'custom-script', flags: { strategy: command.values.strategy } }).external).toBeNull();
  });

  it('a command without trusted_legacy_command is an error', () => {
    expect(() => resolveConfig(loaded('[presets.raw]\ncommand = "./compact.sh"\n'), { preset: 'raw' })).toThrow(
      "'command' in [presets.raw] of /home/u/.config/gobstopper/config.toml runs only with trusted_legacy_command = true; add it to that table if you trust the command",
    );
  });

  it('an untrusted command in a preset nobody selected is not an error', () => {
    expect(resolveConfig(loaded('[presets.raw]\ncommand = "./compact.sh"\n'), {}).external).toBeNull();
  });

  it('a later command needs its own trust; an earlier trust does not carry over', () => {
    const toml = '[policy]\ncommand = "a"\ntrusted_legacy_command = true\n[sessions.s]\ncommand = "b"\n';
    expect(() => resolveConfig(loaded(toml), { session_id: 's' })).toThrow(/'command' in \[sessions."s"\]/);
  });

  it('a later table may grant trust to an inherited command', () => {
    const toml = '[policy]\ncommand = "a"\n[sessions.s]\ntrusted_legacy_command = true\n';
    expect(resolveConfig(loaded(toml), { session_id: 's' }).external).toMatchObject({ kind: 'legacy_command', command: 'a', table: '[policy]' });
  });

  it('a later trusted_legacy_command = false is named as what withdrew the trust, not the table that granted it', () => {
    const toml = '[policy]\ncommand = "a"\ntrusted_legacy_command = true\n[provider.codex]\ntrusted_legacy_command = false\n';
    expect(() => resolveConfig(loaded(toml), { provider: 'codex' })).toThrow(
      `'command' in [policy] of ${USER_PATH} runs only with trusted_legacy_command = true; trusted_legacy_command = false in [provider.codex] of ${USER_PATH} withdraws it`,
    );
  });

  it('a later command replaces an earlier plugin, and a later plugin an earlier command', () => {
    const commandOverPlugin = `[policy]\nplugin = { manifest = "/p.json", trusted_sha256 = "${SHA}" }\n[provider.codex]\ncommand = "c"\ntrusted_legacy_command = true\n`;
    expect(resolveConfig(loaded(commandOverPlugin), { provider: 'codex' }).external).toMatchObject({ kind: 'legacy_command', command: 'c' });
    const pluginOverCommand = `[policy]\ncommand = "c"\ntrusted_legacy_command = true\n[provider.codex]\nplugin = { manifest = "/p.json", trusted_sha256 = "${SHA}" }\n`;
    expect(resolveConfig(loaded(pluginOverCommand), { provider: 'codex' }).external).toMatchObject({ kind: 'plugin', manifest: '/p.json' });
  });
});

describe('strategy parameters follow their strategy', () => {
  const toml = '[policy]\nstrategy = "scored"\nstrategy_params = { window = 4 }\n[presets.same]\nstrategy = "scored"\n[presets.other]\nstrategy = "elide"\n[presets.tuned]\nstrategy = "elide"\nstrategy_params = { depth = 2 }\n';

  it.each([
    ['inherited when the strategy stays', { preset: 'same' }, { window: 4 }],
    ['dropped when a table switches strategy', { preset: 'other' }, {}],
    ['replaced when the switching table gives its own', { preset: 'tuned' }, { depth: 2 }],
    ['dropped when a flag switches strategy', { flags: { strategy: 'middle' } }, {}],
    ['kept when a flag names the same strategy', { flags: { strategy: 'scored' } }, { window: 4 }],
  ])('%s', (_name, options, params) => {
    expect(resolveConfig(loaded(toml), options as ResolveOptions).values.strategy_params).toEqual(params);
  });

  it('a switch that drops no parameters leaves them attributed to the built-in default', () => {
    const builtin = { layer: 'default', scope: 'builtin', table: null, path: null };
    expect(resolveConfig(loaded('[policy]\nstrategy = "compacted"\n')).sources.strategy_params).toEqual(builtin);
    expect(resolveConfig(loaded('[policy]\ntrigger_tokens = 300000\n'), { flags: { strategy: 'elide' } }).sources.strategy_params).toEqual(builtin);
    // Parameters a table did give are dropped by the switch, and it says which table switched.
    expect(resolveConfig(loaded(toml), { preset: 'other' }).sources.strategy_params).toMatchObject({ layer: 'preset', table: '[presets.other]' });
    expect(resolveConfig(loaded(toml), { flags: { strategy: 'middle' } }).sources.strategy_params).toMatchObject({ layer: 'flag' });
  });

  it('presets lists what the layering keeps when a project preset switches the strategy', () => {
    const both = loaded('[presets.x]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide"] }\n[presets.y]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide"] }\n', '[presets.x]\nstrategy = "elide"\n[presets.y]\nfloor_tokens = 1\n');
    const listed = Object.fromEntries(listPresets(both).map((p) => [p.name, p.keys]));
    expect(listed.x).toEqual({ strategy: 'elide' });
    expect(listed.x.strategy_params ?? {}).toEqual(resolveConfig(both, { preset: 'x' }).values.strategy_params);
    expect(listed.y).toEqual({ strategy: 'auto', strategy_params: { candidates: ['elide'] }, floor_tokens: 1 });
  });
});

describe('bad resolved policies', () => {
  it('an unknown preset is a usage error listing the presets', () => {
    try {
      resolveConfig(loaded(USER, PROJECT), { preset: 'deepwork' });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'unknown_preset', exit: 2, message: "unknown preset 'deepwork' (did you mean deep-work?); configured presets: custom-script, deep-work, pinned, team" });
    }
  });

  it('an unknown preset with none configured says where it looked', () => {
    expect(() => resolveConfig(loaded(''), { preset: 'x' })).toThrow(`unknown preset 'x'; no presets are configured in ${USER_PATH}`);
  });

  it.each([
    ['floor at or above trigger across tables', '[policy]\nfloor_tokens = 60_000\n[provider.codex]\ntrigger_tokens = 50_000\n', { provider: 'codex' }, /^invalid policy bounds: floor_tokens \(60000\) must be below trigger_tokens \(50000\) \[floor_tokens: \[policy\] in .*; trigger_tokens: \[provider.codex\] in .*\]$/],
    // A value out of its own range in a file is refused when the file loads (load-config.test.ts); a flag's here.
    ['a trigger flag of 0', '', { flags: { trigger_tokens: 0 } }, /^invalid policy bounds: trigger_tokens must be a whole number from 1 to 10000000 \(got 0\) \[trigger_tokens: command-line flag\]$/],
    ['a floor flag at the trigger', '', { flags: { floor_tokens: 250_000 } }, /floor_tokens \(250000\) must be below trigger_tokens \(250000\) \[floor_tokens: command-line flag; trigger_tokens: built-in default\]/],
  ])('%s', (_name, toml, options, pattern) => {
    try {
      resolveConfig(loaded(toml), options as ResolveOptions);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_policy' });
      expect((error as Error).message).toMatch(pattern);
    }
  });

  it('a --strategy that is not an id is a usage error', () => {
    expect(() => resolveConfig(loaded(''), { flags: { strategy: 'rm -rf' } })).toThrow(expect.objectContaining({ code: 'invalid_strategy_id', exit: 2 }));
  });

  it('reads the discovery window, project over user', () => {
    expect(resolveConfig(loaded('')).discovery.max_age_secs).toBe(604_800);
    expect(resolveConfig(loaded('[discovery]\nmax_age_secs = 0\n', '[discovery]\nmax_age_secs = 3600\n')).discovery.max_age_secs).toBe(3600);
  });
});
