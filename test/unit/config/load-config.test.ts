import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, loadFile } from '../../../kernel/config/load-config.js';
import { userConfigPath } from '../../../kernel/config/paths.js';
import { findProjectConfig } from '../../../kernel/config/project-search.js';
import { makeConfigDir } from './config-fixtures.js';

const dir = makeConfigDir();
afterAll(() => dir.cleanup());
let counter = 0;

function loadText(text: string | Buffer, scope: 'user' | 'project' = 'user') {
  const path = dir.write(`case-${counter++}/config.toml`, text);
  return loadFile(scope, path);
}

function errorOf(text: string | Buffer, scope: 'user' | 'project' = 'user'): { code: string; message: string; details?: Record<string, unknown> } {
  try {
    loadText(text, scope);
  } catch (error) {
    return error as { code: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected the config to be refused');
}

describe('config file: bad input gets one clear line', () => {
  it.each([
    ['not TOML', '[policy]\ntrigger_tokens = = 1\n', /is not valid TOML: .* at line 2, column \d+$/],
    // TOML's own message names only a line; the table and key say which of two [policy] tables it is.
    ['a duplicate key', '[policy]\nadaptive = true\nadaptive = false\n', /is not valid TOML: 'adaptive' in \[policy\] is defined a second time at line 3, column 1$/],
    ['a table written twice', '[policy]\nadaptive = true\n\n[provider.codex]\nfloor_tokens = 1\n\n[policy]\nfloor_tokens = 2\n', /is not valid TOML: table \[policy\] is defined a second time at line 7, column 2$/],
    ['a session table written twice, quoted two ways', '[sessions."a.b"]\nfloor_tokens = 1\n[sessions.\'a.b\']\n', /is not valid TOML: table \[sessions\."a\.b"\] is defined a second time at line 3, column 2$/],
    ['a key repeated in the second of two tables', '[presets.x]\nfloor_tokens = 1\n[presets.y]\n"floor_tokens" = 1\nfloor_tokens = 2 # [presets.x]\n', /is not valid TOML: 'floor_tokens' in \[presets\.y\] is defined a second time at line 5, column 1$/],
    ['an unknown key in a provider table', '[provider.codex]\ntrigger = 100000\n', /: unknown key 'trigger' in \[provider\.codex\] \(did you mean 'trigger_tokens'\?\)$/],
    ['an unknown key in [policy]', '[policy]\nfloor = 1\n', /: unknown key 'floor' in \[policy\] \(did you mean 'floor_tokens'\?\)$/],
    ['an unknown top-level key', 'trigger_tokens = 1\n', /: unknown key 'trigger_tokens' at the top level \(expected \[policy\]/],
    ['an unknown table', '[telemetry]\nenabled = true\n', /: unknown key 'telemetry' at the top level \(expected \[policy\], \[provider\.<claude_code\|codex\|devin>\], \[presets\.<name>\], \[sessions\."<id>"\], \[discovery\] or \[rollout\]\)$/],
    ['an unknown provider', '[provider.gemini]\ntrigger_tokens = 1\n', /: unknown key 'gemini' in \[provider\]: providers are claude_code, codex and devin$/],
    ['an unknown key in a session table', '[sessions."abc.def"]\nstrat = "elide"\n', /: unknown key 'strat' in \[sessions\."abc\.def"\]$/],
    // A misspelling, or the words joined as a flag joins them, gets the key probably meant.
    ['a misspelt key', '[presets.x]\ntriger_tokens = 1\n', /: unknown key 'triger_tokens' in \[presets\.x\] \(did you mean 'trigger_tokens'\?\)$/],
    ['a key spelt as a flag', '[sessions."abc"]\nkeep-recent-turns = 1\n', /: unknown key 'keep-recent-turns' in \[sessions\."abc"\] \(did you mean 'keep_recent_turns'\?\)$/],
    ['a misspelt discovery key', '[discovery]\nmax_age = 1\n', /: unknown key 'max_age' in \[discovery\] \(did you mean 'max_age_secs'\?\)$/],
    // A start two keys share is not guessed at.
    ['the start of two keys', '[policy]\nkeep_recent = 1\n', /: unknown key 'keep_recent' in \[policy\]$/],
    ['cosmiconfig imports', '"$import" = "/etc/passwd"\n', /: unknown key '\$import' at the top level/],
    ['a string for a number', '[policy]\ntrigger_tokens = "lots"\n', /: wrong type for 'trigger_tokens' in \[policy\]: expected a whole number, got a string "lots"$/],
    ['a float for a whole number', '[presets.x]\nfloor_tokens = 1.5\n', /: wrong type for 'floor_tokens' in \[presets\.x\]: expected a whole number, got the float 1\.5$/],
    ['a number for a boolean', '[policy]\nadaptive = 1\n', /: wrong type for 'adaptive' in \[policy\]: expected true or false, got the integer 1$/],
    ['a value for a table', 'policy = 3\n', /: wrong type for 'policy' at the top level: expected a table, got the integer 3$/],
    ['a NaN threshold', '[presets.r]\nkeep_score_threshold = nan\n', /: keep_score_threshold must be a finite value between 0 and 1 in \[presets\.r\] \(got nan\)$/],
    ['an infinite threshold', '[policy]\nkeep_score_threshold = inf\n', /keep_score_threshold must be a finite value between 0 and 1 in \[policy\] \(got inf\)$/],
    // The same sentence as for 0 (below the range) and for 20,000,000 (past it).
    ['a negative count', '[policy]\ntrigger_tokens = -5\n', /: 'trigger_tokens' in \[policy\] must be a whole number from 1 to 10000000 \(got the integer -5\)$/],
    ['a zero trigger', '[policy]\ntrigger_tokens = 0\n', /: 'trigger_tokens' in \[policy\] must be a whole number from 1 to 10000000 \(got 0\)$/],
    ['an unknown quota pressure', '[policy]\nquota_pressure = "extreme"\n', /: 'quota_pressure' in \[policy\] must be one of low, normal, high \(got a string "extreme"\)$/],
    ['a strategy id with a space', '[policy]\nstrategy = "my strategy"\n', /: 'strategy' in \[policy\] must be an id of 1-128 letters/],
    ['a preset name with a space', '[presets."deep work"]\nstrategy = "elide"\n', /: invalid preset name "deep work" in \[presets\]/],
    ['an empty session id', '[sessions.""]\nstrategy = "elide"\n', /: invalid session id "" in \[sessions\]/],
    ['a plugin without its pin', '[policy]\nplugin = { manifest = "/opt/p/gobstopper-plugin.json" }\n', /: missing key 'trusted_sha256' in \[policy\.plugin\]$/],
    ['a plugin with a bad pin', `[policy]\nplugin = { manifest = "/opt/p/gobstopper-plugin.json", trusted_sha256 = "${'A'.repeat(64)}" }\n`, /'trusted_sha256' in \[policy\.plugin\] must be 64 lowercase hex digits$/],
    ['a plugin with a relative manifest', `[policy]\nplugin = { manifest = "p/gobstopper-plugin.json", trusted_sha256 = "${'a'.repeat(64)}" }\n`, /: 'manifest' in \[policy\.plugin\] must be an absolute path$/],
    ['an unknown key in a plugin table', `[policy]\nplugin = { manifest = "/p.json", trusted_sha256 = "${'a'.repeat(64)}", args = [] }\n`, /: unknown key 'args' in \[policy\.plugin\]$/],
    [
      'both command and plugin in one table',
      `[presets.both]\ncommand = "x"\ntrusted_legacy_command = true\nplugin = { manifest = "/p.json", trusted_sha256 = "${'a'.repeat(64)}" }\n`,
      /: \[presets\.both\] sets both 'command' and 'plugin'; a table may name one proposer$/,
    ],
    ['an empty command', '[policy]\ncommand = ""\n', /: 'command' in \[policy\] must not be empty$/],
    ['a command holding a NUL', '[presets.s]\ncommand = "echo\\u0000x"\ntrusted_legacy_command = true\n', /: 'command' in \[presets\.s\] holds a NUL character \(\\u0000\), which no command line can$/],
    ['a command over 4096 bytes', `[policy]\ncommand = "${'x'.repeat(4097)}"\ntrusted_legacy_command = true\n`, /: 'command' in \[policy\] is longer than 4096 bytes$/],
    ['a negative discovery age', '[discovery]\nmax_age_secs = -1\n', /'max_age_secs' in \[discovery\] must be at least 0/],
    // TOML tells 8 from 8.0; a key that counts something takes only the former.
    ['a whole float for a count', '[policy]\nkeep_recent_tool_outputs = 8.0\n', /: wrong type for 'keep_recent_tool_outputs' in \[policy\]: expected a whole number, got the float 8\.0$/],
    ['an exponent for a count', '[policy]\ntrigger_tokens = 2.5e5\n', /: wrong type for 'trigger_tokens' in \[policy\]: expected a whole number, got the float 250000\.0$/],
    ['an exponent for seconds', '[presets.p]\nmin_interval_secs = 3e2\n', /: wrong type for 'min_interval_secs' in \[presets\.p\]: expected a whole number, got the float 300\.0$/],
    ['a whole float in a session table', '[sessions."s/1"]\nfloor_tokens = 100000.0\n', /: wrong type for 'floor_tokens' in \[sessions\."s\/1"\]: expected a whole number, got the float 100000\.0$/],
    ['a whole float for the discovery age', '[discovery]\nmax_age_secs = 60.0\n', /: wrong type for 'max_age_secs' in \[discovery\]: expected a whole number, got the float 60\.0$/],
    // A TOML date reaches the schema as its text, which a string key would otherwise take.
    ['a date for a strategy id', '[policy]\nstrategy = 1979-05-27\n', /: wrong type for 'strategy' in \[policy\]: expected a string, got the date\/time 1979-05-27$/],
    ['a date-time for a command', '[presets.c]\ncommand = 1979-05-27T07:32:00Z\ntrusted_legacy_command = true\n', /: wrong type for 'command' in \[presets\.c\]: expected a string, got the date\/time 1979-05-27T07:32:00\.000Z$/],
    ['a date for a quota pressure', '[policy]\nquota_pressure = 1979-05-27\n', /: 'quota_pressure' in \[policy\] must be one of low, normal, high \(got the date\/time 1979-05-27\)$/],
    ['a time for a count', '[policy]\ntrigger_tokens = 07:32:00\n', /: wrong type for 'trigger_tokens' in \[policy\]: expected a whole number, got the date\/time 07:32:00\.000$/],
    ['an integer past what a number holds exactly', '[policy]\nblock_tokens = 99999999999999999999\n', /: 'block_tokens' in \[policy\] is an integer too large to read exactly$/],
    // A value out of its own range is refused in any table, whether or not this run uses it.
    ['a threshold above 1 in an unused preset', '[presets.x]\nkeep_score_threshold = 3.0\n', /: keep_score_threshold must be a finite value between 0 and 1 in \[presets\.x\] \(got 3\)$/],
    ['a negative threshold', '[policy]\nkeep_score_threshold = -0.5\n', /: keep_score_threshold must be a finite value between 0 and 1 in \[policy\] \(got -0\.5\)$/],
    ['a zero trigger', '[provider.codex]\ntrigger_tokens = 0\n', /: 'trigger_tokens' in \[provider\.codex\] must be a whole number from 1 to 10000000 \(got 0\)$/],
    ['a trigger past the maximum', '[presets.big]\ntrigger_tokens = 20_000_000\n', /: 'trigger_tokens' in \[presets\.big\] must be a whole number from 1 to 10000000 \(got 20000000\)$/],
    ['an interval past a day in another session', '[sessions."other"]\nmin_interval_secs = 100000\n', /: 'min_interval_secs' in \[sessions\."other"\] must be a whole number from 0 to 86400 \(got 100000\)$/],
    ['a protected tail past the item limit', '[policy]\nkeep_recent_tool_outputs = 100001\n', /: 'keep_recent_tool_outputs' in \[policy\] must be a whole number from 0 to 100000 \(got 100001\)$/],
  ])('%s', (_name, text, pattern) => {
    const error = errorOf(text);
    expect(error.code).toBe('invalid_config');
    expect(error.message).toMatch(/^config \/.*config\.toml/);
    expect(error.message).toMatch(pattern);
    expect(error.message).not.toContain('\n');
  });

  // Scripts reading `--json` errors get the table and key apart from the sentence.
  it.each([
    ['an unknown key', '[provider.codex]\ntrigger = 100000\n', { table: '[provider.codex]', key: 'trigger' }],
    ['an unknown top-level table', '[telemetry]\nenabled = true\n', { table: null, key: 'telemetry' }],
    ['a wrong type', '[presets.x]\nfloor_tokens = "lots"\n', { table: '[presets.x]', key: 'floor_tokens' }],
    ['a whole float for a count', '[policy]\nkeep_recent_tool_outputs = 8.0\n', { table: '[policy]', key: 'keep_recent_tool_outputs' }],
    ['a missing pin', '[policy]\nplugin = { manifest = "/p.json" }\n', { table: '[policy.plugin]', key: 'trusted_sha256' }],
    ['a bad session id', '[sessions.""]\nstrategy = "elide"\n', { table: '[sessions]', key: '' }],
    ['a value out of range', '[presets.x]\nkeep_score_threshold = 3.0\n', { table: '[presets.x]', key: 'keep_score_threshold' }],
    ['an integer too large to read exactly', '[presets.x]\nfloor_tokens = 99999999999999999999\n', { table: '[presets.x]', key: 'floor_tokens' }],
    ['an integer too large in a session table', '[sessions."s/1"]\ntrigger_tokens = 99999999999999999999\n', { table: '[sessions."s/1"]', key: 'trigger_tokens' }],
    ['both command and plugin', `[presets.both]\ncommand = "x"\ntrusted_legacy_command = true\nplugin = { manifest = "/p.json", trusted_sha256 = "${'a'.repeat(64)}" }\n`, { table: '[presets.both]', key: 'plugin' }],
  ])('names the table and key of %s in the details', (_name, text, place) => {
    const error = errorOf(text);
    expect(error.code).toBe('invalid_config');
    expect(error.details).toEqual({ path: expect.stringMatching(/config\.toml$/), ...place });
  });

  it('names the table and key a TOML redefinition repeats in the details', () => {
    expect(errorOf('[policy]\nadaptive = true\n[sessions."s-1"]\nadaptive = true\nadaptive = false\n').details).toEqual({ path: expect.stringMatching(/config\.toml$/), line: 5, column: 1, table: '[sessions."s-1"]', key: 'adaptive' });
    expect(errorOf('[provider.codex]\n[provider.codex]\n').details).toMatchObject({ table: '[provider.codex]', key: null });
  });

  it('refuses code-running keys in a project file', () => {
    for (const key of ['command = "rm -rf ~"', 'trusted_legacy_command = true', `plugin = { manifest = "/p.json", trusted_sha256 = "${'a'.repeat(64)}" }`]) {
      const error = errorOf(`[presets.evil]\n${key}\n`, 'project');
      expect(error.message).toMatch(/in \[presets\.evil\] is not allowed in a project file; commands and plugins are configured only in the user config$/);
    }
  });

  it('refuses a symlink, a directory, an oversized file and bytes that are not UTF-8', () => {
    const target = dir.write('real/config.toml', '[policy]\n');
    const link = join(dir.root, 'link.toml');
    symlinkSync(target, link);
    expect(() => loadFile('user', link)).toThrow(/config .*link\.toml is a symlink/);
    const folder = join(dir.root, 'folder.toml');
    mkdirSync(folder);
    expect(() => loadFile('user', folder)).toThrow(/folder\.toml is a directory$/);
    expect(errorOf(`# ${'x'.repeat(64 * 1024)}\n`).message).toMatch(/is 65539 bytes; the limit is 65536$/);
    expect(errorOf(Buffer.from([0x5b, 0x70, 0xff, 0x5d])).message).toMatch(/is not valid UTF-8$/);
  });

  it('refuses nesting deeper than the parser allows inline, which dotted keys and table headers reach unbounded', () => {
    // Each step after the parse recursed once per level: 5,000 levels overflowed the stack.
    const error = errorOf(`[policy.strategy_params]\n${'a.'.repeat(5000)}b = 1\n`);
    expect(error).toMatchObject({ code: 'invalid_config', details: { table: '[policy]', key: 'strategy_params' } });
    expect(error.message).toMatch(/: 'strategy_params' in \[policy\] nests tables or values more than 1000 levels deep$/);
    expect(errorOf(`[${'a.'.repeat(2000)}b]\nx = 1\n`).message).toMatch(/: 'a' in \[a\] nests tables or values more than 1000 levels deep$/);
    // Up to the bound it loads, as an inline value as deep does.
    const deep = loadText(`[policy.strategy_params]\n${'a.'.repeat(997)}b = 1\n`).data.policy?.strategy_params;
    expect(JSON.stringify(deep)).toContain('{"b":1}');
  });

  it('keeps a date inside strategy_params, which has no types of its own, as its text', () => {
    expect(loadText('[policy]\nstrategy_params = { since = 1979-05-27, at = [07:32:00] }\n').data.policy?.strategy_params).toEqual({ since: '1979-05-27', at: ['07:32:00.000'] });
  });

  it('takes integers, floats where any number goes, and floats inside strategy_params as written', () => {
    const file = loadText('[policy]\ntrigger_tokens = 100_000\nfloor_tokens = 0\nkeep_score_threshold = 1.0\nstrategy_params = { ratio = 2.0, n = 3 }\n\n[presets.low]\nkeep_score_threshold = 0\n');
    expect(file.data.policy).toEqual({ trigger_tokens: 100_000, floor_tokens: 0, keep_score_threshold: 1, strategy_params: { ratio: 2, n: 3 } });
    expect(file.data.presets?.low).toEqual({ keep_score_threshold: 0 });
  });

  it('leaves rules between keys to the layered policy, where a later table may still set the other key', () => {
    expect(loadText('[presets.y]\ntrigger_tokens = 10\nfloor_tokens = 20\n').loaded).toBe(true);
  });

  it('accepts an empty file and a file exactly at the size limit', () => {
    expect(loadText('').data).toEqual({});
    const padded = '[policy]\n' + '#'.repeat(64 * 1024 - 10) + '\n';
    expect(Buffer.byteLength(padded)).toBe(64 * 1024);
    expect(loadText(padded).loaded).toBe(true);
  });

  it('reads every documented key into plain data', () => {
    const file = loadText(
      [
        '[policy]',
        'strategy = "scored"',
        'trigger_tokens = 250_000',
        'floor_tokens = 40_000',
        'min_savings_tokens = 4096',
        'keep_recent_tool_outputs = 8',
        'keep_score_threshold = 0.5',
        'adaptive = true',
        'quota_pressure = "high"',
        'min_interval_secs = 300',
        'apply_hold_secs = 1800',
        'block_tokens = 0',
        'keep_recent_turns = 3',
        'result_max_bytes = 500',
        'scorer = "heuristic"',
        'strategy_params = { window = 4, labels = ["Bash"] }',
        '[discovery]',
        'max_age_secs = 0',
      ].join('\n'),
    );
    expect(file.data.policy).toMatchObject({ strategy: 'scored', keep_score_threshold: 0.5, strategy_params: { window: 4, labels: ['Bash'] } });
    expect(Object.getPrototypeOf(file.data.policy)).toBe(Object.prototype);
    expect(file.data.discovery).toEqual({ max_age_secs: 0 });
  });
});

describe('config file that fails while being read', () => {
  // A file that stats as regular but whose read fails (EIO); Linux has one at hand.
  it.skipIf(!existsSync('/proc/self/mem'))('names the file and the error, not the bare errno', () => {
    expect(() => loadFile('user', '/proc/self/mem')).toThrow(/^cannot read config \/proc\/self\/mem: EIO$/);
  });

  it('a file where a directory on the way should be is named, with what to do', () => {
    const dir = makeConfigDir();
    try {
      const file = dir.write('gobstopper', '');
      expect(() => loadFile('user', join(file, 'config.toml'))).toThrow(`cannot read config ${file}/config.toml: ${file} is a file where a directory is expected; move it aside (ENOTDIR)`);
    } finally {
      dir.cleanup();
    }
  });
});

describe('config locations', () => {
  it('honours an absolute XDG_CONFIG_HOME and ignores a relative one', () => {
    expect(userConfigPath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/u' })).toBe('/x/cfg/gobstopper/config.toml');
    expect(userConfigPath({ XDG_CONFIG_HOME: 'rel', HOME: '/home/u' })).toBe('/home/u/.config/gobstopper/config.toml');
    expect(userConfigPath({ HOME: '/home/u' })).toBe('/home/u/.config/gobstopper/config.toml');
  });

  it('treats a missing user file as defaults but a missing --config as an error', async () => {
    const home = makeConfigDir();
    try {
      const loaded = await loadConfig({ env: { XDG_CONFIG_HOME: join(home.root, 'cfg') }, cwd: home.root, project: false });
      expect(loaded.user).toMatchObject({ loaded: false, data: {} });
      await expect(loadConfig({ configPath: join(home.root, 'nope.toml'), cwd: home.root })).rejects.toMatchObject({ code: 'config_not_found', exit: 2 });
      const explicit = home.write('team.toml', '[policy]\ntrigger_tokens = 100000\n');
      const fromFlag = await loadConfig({ configPath: 'team.toml', cwd: home.root, env: { XDG_CONFIG_HOME: join(home.root, 'cfg') }, project: false });
      expect(fromFlag.user).toMatchObject({ path: explicit, loaded: true });
    } finally {
      home.cleanup();
    }
  });

  it('takes a --config that names no readable file for a usage error, and a bad file for a config error', async () => {
    const home = makeConfigDir();
    try {
      const env = { XDG_CONFIG_HOME: join(home.root, 'cfg') };
      const load = (configPath: string) => loadConfig({ configPath, cwd: home.root, env, project: false });
      await expect(load('')).rejects.toMatchObject({ code: 'config_not_found', exit: 2, message: '--config was given an empty path; give the path of a config file' });
      mkdirSync(join(home.root, 'folder'));
      await expect(load('folder')).rejects.toMatchObject({ code: 'invalid_config', exit: 2, message: `config ${join(home.root, 'folder')} is a directory` });
      const target = home.write('real.toml', '[policy]\n');
      symlinkSync(target, join(home.root, 'link.toml'));
      await expect(load('link.toml')).rejects.toMatchObject({ code: 'invalid_config', exit: 2 });
      home.write('broken.toml', '[policy\n');
      await expect(load('broken.toml')).rejects.toMatchObject({ code: 'invalid_config', exit: 1 });
    } finally {
      home.cleanup();
    }
  });
});

describe('project config search', () => {
  it('finds the nearest project file walking up from the working directory', async () => {
    const repo = makeConfigDir();
    try {
      repo.write('package.json', '{}');
      const rc = repo.write('.gobstopperrc.toml', '[policy]\n');
      mkdirSync(join(repo.root, 'src', 'deep'), { recursive: true });
      expect(await findProjectConfig(join(repo.root, 'src', 'deep'))).toBe(rc);
      const nested = repo.write('src/.config/gobstopper.toml', '[policy]\n');
      expect(await findProjectConfig(join(repo.root, 'src', 'deep'))).toBe(nested);
      const named = repo.write('src/deep/gobstopper.config.toml', '');
      expect(await findProjectConfig(join(repo.root, 'src', 'deep'))).toBe(named);
    } finally {
      repo.cleanup();
    }
  });

  it('stops at the enclosing package root', async () => {
    const outer = makeConfigDir();
    try {
      outer.write('.gobstopperrc.toml', '[policy]\n');
      outer.write('pkg/package.json', '{}');
      mkdirSync(join(outer.root, 'pkg', 'src'), { recursive: true });
      expect(await findProjectConfig(join(outer.root, 'pkg', 'src'))).toBeNull();
    } finally {
      outer.cleanup();
    }
  });

  it('stops at a repository root or the home directory, and outside both reads the working directory only', async () => {
    const shared = makeConfigDir();
    try {
      // A file in a parent anyone may write (think /tmp) must not configure the runs below it.
      shared.write('.gobstopperrc.toml', '[policy]\n');
      mkdirSync(join(shared.root, 'scratch', 'deep'), { recursive: true });
      expect(await findProjectConfig(join(shared.root, 'scratch', 'deep'), '/nonexistent-home')).toBeNull();
      // Unless the working directory is the one holding it.
      expect(await findProjectConfig(shared.root, '/nonexistent-home')).toBe(join(shared.root, '.gobstopperrc.toml'));
      // A home directory below it is a ceiling too; a repository root below it is one.
      expect(await findProjectConfig(join(shared.root, 'scratch', 'deep'), join(shared.root, 'scratch'))).toBeNull();
      mkdirSync(join(shared.root, 'repo', '.git', 'objects'), { recursive: true });
      mkdirSync(join(shared.root, 'repo', 'src'), { recursive: true });
      expect(await findProjectConfig(join(shared.root, 'repo', 'src'), '/nonexistent-home')).toBeNull();
      const inRepo = shared.write('repo/.gobstopperrc.toml', '[policy]\n');
      expect(await findProjectConfig(join(shared.root, 'repo', 'src'), '/nonexistent-home')).toBe(inRepo);
      // Home: a file in the home directory counts for the directories below it.
      const homeRc = shared.write('scratch/.gobstopperrc.toml', '[policy]\n');
      expect(await findProjectConfig(join(shared.root, 'scratch', 'deep'), join(shared.root, 'scratch'))).toBe(homeRc);
    } finally {
      shared.cleanup();
    }
  });

  it('refuses a directory holding two project files instead of taking the first', async () => {
    const repo = makeConfigDir();
    try {
      repo.write('package.json', '{}');
      const rc = repo.write('.gobstopperrc.toml', '[policy]\ntrigger_tokens = 111111\n');
      const nested = repo.write('.config/gobstopper.toml', '[policy]\ntrigger_tokens = 222222\n');
      mkdirSync(join(repo.root, 'src'), { recursive: true });
      const refused = findProjectConfig(join(repo.root, 'src'), '/nonexistent-home');
      await expect(refused).rejects.toMatchObject({ code: 'invalid_config' });
      await expect(findProjectConfig(join(repo.root, 'src'), '/nonexistent-home')).rejects.toThrow(`${rc}, ${nested}`);
    } finally {
      repo.cleanup();
    }
  });

  it("does not take the home directory's .config/gobstopper.toml for a project file", async () => {
    const home = makeConfigDir();
    try {
      // The user file lives in that .config directory; a file beside it would otherwise configure
      // every directory under home outside a repository, and none inside one.
      home.write('.config/gobstopper.toml', '[policy]\ntrigger_tokens = 333333\n');
      mkdirSync(join(home.root, 'notes', 'deep'), { recursive: true });
      expect(await findProjectConfig(join(home.root, 'notes', 'deep'), home.root)).toBeNull();
      expect(await findProjectConfig(home.root, home.root)).toBeNull();
      // Beside it, the home directory's own project file still counts, without a conflict.
      const rc = home.write('.gobstopperrc.toml', '[policy]\n');
      expect(await findProjectConfig(join(home.root, 'notes', 'deep'), home.root)).toBe(rc);
      // A repository's .config/gobstopper.toml is that repository's file.
      home.write('repo/package.json', '{}');
      const repoFile = home.write('repo/.config/gobstopper.toml', '[policy]\n');
      mkdirSync(join(home.root, 'repo', 'src'), { recursive: true });
      expect(await findProjectConfig(join(home.root, 'repo', 'src'), home.root)).toBe(repoFile);
    } finally {
      home.cleanup();
    }
  });

  it('never executes a cosmiconfig meta config in the working directory', async () => {
    const repo = makeConfigDir();
    const marker = join(repo.root, 'executed');
    repo.write('.config/config.js', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); module.exports = {};`);
    repo.write('.config/config.mjs', `import { writeFileSync } from 'fs'; writeFileSync(${JSON.stringify(marker)}, 'x'); export default {};`);
    repo.write('.gobstopperrc.toml', '[policy]\ntrigger_tokens = 123456\n');
    const previous = process.cwd();
    process.chdir(repo.root);
    try {
      const loaded = await loadConfig({ env: { XDG_CONFIG_HOME: join(repo.root, 'cfg') } });
      expect(loaded.project?.data.policy?.trigger_tokens).toBe(123456);
      expect(existsSync(marker)).toBe(false);
    } finally {
      process.chdir(previous);
      repo.cleanup();
    }
  });

  it("refuses a search place it cannot look at or read, instead of taking a parent's file in its place", async () => {
    const repo = makeConfigDir();
    try {
      repo.write('package.json', '{}');
      repo.write('.gobstopperrc.toml', '[policy]\ntrigger_tokens = 123456\n');
      mkdirSync(join(repo.root, 'src'));
      // A `.config` that points at itself: its gobstopper.toml can be neither found nor ruled out.
      symlinkSync('.config', join(repo.root, 'src', '.config'));
      const looped = join(repo.root, 'src', '.config', 'gobstopper.toml');
      await expect(findProjectConfig(join(repo.root, 'src'))).rejects.toMatchObject({ code: 'invalid_config', message: `cannot read config ${looped}: ELOOP` });
      // A `.config` that is a file holds no gobstopper.toml: the walk goes on up.
      const plain = join(repo.root, 'plain');
      repo.write('plain/.config', '');
      expect(await findProjectConfig(plain)).toBe(join(repo.root, '.gobstopperrc.toml'));
    } finally {
      repo.cleanup();
    }
  });

  it('refuses a project file it may not read', async (ctx) => {
    const repo = makeConfigDir();
    try {
      repo.write('package.json', '{}');
      repo.write('.gobstopperrc.toml', '[policy]\ntrigger_tokens = 123456\n');
      const locked = repo.write('src/.gobstopperrc.toml', '[policy]\ntrigger_tokens = 111111\n');
      chmodSync(locked, 0o000);
      const refusal = { code: 'invalid_config', message: `cannot open config ${locked}: EACCES` };
      if (process.getuid?.() !== 0) {
        await expect(findProjectConfig(join(repo.root, 'src'))).rejects.toMatchObject(refusal);
        return;
      }
      // root reads any file whatever its mode, so the refusal is seen as nobody, who owns the
      // directories (they do not refuse it first) and a file whose mode lets its owner nothing.
      spawnSync('chown', ['-R', '65534:65534', repo.root]);
      const checkout = join(import.meta.dirname, '..', '..', '..');
      const search = join(checkout, 'kernel', 'config', 'project-search.ts');
      const script =
        `import { findProjectConfig } from ${JSON.stringify(search)};` +
        `findProjectConfig(${JSON.stringify(join(repo.root, 'src'))}).then((found) => console.log(JSON.stringify({ found })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));`;
      const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: checkout, encoding: 'utf8', uid: 65534, gid: 65534 });
      if (run.status !== 0 && /ERR_MODULE_NOT_FOUND|EACCES/.test(run.stderr) && !run.stdout) return ctx.skip('nobody cannot read this checkout');
      expect(JSON.parse(run.stdout), run.stderr).toEqual(refusal);
    } finally {
      repo.cleanup();
    }
  });

  it('refuses a FIFO or a directory at a search place without opening it, and never walks past the ceiling', async () => {
    const repo = makeConfigDir();
    try {
      repo.write('package.json', '{}');
      mkdirSync(join(repo.root, 'src'), { recursive: true });
      const fifo = join(repo.root, 'src', '.gobstopperrc.toml');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      // Opened, a FIFO would block this test until its timeout; refused, it answers at once.
      await expect(findProjectConfig(join(repo.root, 'src'))).rejects.toMatchObject({ code: 'invalid_config', message: `config ${fifo} is not a regular file` });
      const dir = join(repo.root, 'gobstopper.config.toml');
      mkdirSync(dir);
      await expect(findProjectConfig(repo.root)).rejects.toMatchObject({ code: 'invalid_config', message: `config ${dir} is a directory` });
      // Above a package root the search never reaches, so what is refused there changes nothing below it.
      const inner = join(repo.root, 'pkg');
      mkdirSync(join(inner, 'src'), { recursive: true });
      repo.write('pkg/package.json', '{}');
      const rc = repo.write('pkg/.gobstopperrc.toml', '[policy]\n');
      expect(await findProjectConfig(join(inner, 'src'))).toBe(rc);
      expect(await findProjectConfig(join(inner, 'src'), inner)).toBe(rc);
    } finally {
      repo.cleanup();
    }
  });

  it('reads the project file under the same rules as the user file', async () => {
    const repo = makeConfigDir();
    try {
      repo.write('package.json', '{}');
      const real = repo.write('elsewhere.toml', '[policy]\n');
      symlinkSync(real, join(repo.root, '.gobstopperrc.toml'));
      await expect(loadConfig({ cwd: repo.root, env: { XDG_CONFIG_HOME: join(repo.root, 'cfg') } })).rejects.toThrow(/is a symlink/);
    } finally {
      repo.cleanup();
    }
  });
});
