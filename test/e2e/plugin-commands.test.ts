import { execFile, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as validators from '../../schemas/generated/validators.js';
import type { GeneratedValidator } from '../../schemas/generated/validators.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';
import { fixturePluginBundle, repoRoot, sha256, writeBundle } from '../fixtures/bundles/build-bundle.js';

const run = promisify(execFile);
const cli = join(repoRoot, 'bin', 'run.js');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('gobstopper plugin commands (built CLI, temporary home)', () => {
  let home: TempHome;

  async function gob(...args: string[]): Promise<CliResult> {
    return gobWith({}, ...args);
  }

  async function gobWith(extraEnv: Record<string, string>, ...args: string[]): Promise<CliResult> {
    const env = { PATH: process.env.PATH ?? '', ...home.env, ...extraEnv };
    try {
      const { stdout, stderr } = await run(process.execPath, [cli, ...args], { env, cwd: repoRoot, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  /** Runs with --json and checks stdout is exactly one object matching the command's schema. */
  async function gobJson<T>(def: string, ...args: string[]): Promise<T> {
    const result = await gob(...args, '--json');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const value = JSON.parse(result.stdout) as T;
    const validate = (validators as unknown as Record<string, GeneratedValidator>)[`validate${def}`]!;
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
    return value;
  }

  const installedDir = () => join(home.dataHome, 'gobstopper', 'plugins');
  const snapshot = () => {
    const root = join(home.dataHome, 'gobstopper');
    if (!existsSync(root)) return {};
    const out: Record<string, string> = {};
    for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (e.isFile()) out[join(e.parentPath, e.name)] = sha256(readFileSync(join(e.parentPath, e.name)));
    }
    return out;
  };

  beforeAll(() => {
    if (!existsSync(join(repoRoot, 'dist', 'kernel', 'cli', 'commands', 'plugin', 'add.js'))) {
      throw new Error('build first: node scripts/build.mjs --kernel');
    }
    home = makeTempHome();
  });
  afterAll(() => home?.cleanup());

  for (const example of [
    { dir: 'keep-last-python', id: 'keep-last-python', strategy: 'keep_last_py' },
    { dir: 'keep-last-jq', id: 'keep-last-jq', strategy: 'keep_last_jq' },
  ]) {
    it(`adds ${example.dir}, lists it, and inspects its handshake`, async () => {
      const source = join('examples', 'plugins', example.dir);
      // A directory's code runs only against a pin: none is recorded yet.
      const untrusted = await gob('plugin', 'inspect', source, '--json');
      expect(untrusted.code).toBe(2);
      expect(JSON.parse(untrusted.stdout).error.code).toBe('trust_required');
      const human = await gob('plugin', 'add', source);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toContain(`Added ${example.id} 0.1.0: strategy ${example.strategy}`);
      expect(human.stdout).toContain('declares no network use and asks for no transcript content');
      expect(human.stdout).toContain('it runs as you: add only bundles you would run yourself');
      expect(human.stdout).toMatch(/pinned manifest_sha256 [0-9a-f]{64}/);
      // The data directory a first `plugin add` creates is as private as the vault needs it.
      expect(statSync(join(home.dataHome, 'gobstopper')).mode & 0o777).toBe(0o700);

      const again = await gobJson<{ already_installed: boolean; manifest_sha256: string; path: string }>('PluginAddCommandResult', 'plugin', 'add', source);
      expect(again.already_installed).toBe(true);
      expect(again.manifest_sha256).toBe(sha256(readFileSync(join(repoRoot, source, 'gobstopper-plugin.json'))));
      expect(again.path).toBe(join(installedDir(), example.id, '0.1.0'));

      const list = await gobJson<{ bundles: { id: string; source: string; status: string; provides: { strategies: string[] } }[] }>('PluginListCommandResult', 'plugin', 'list');
      expect(list.bundles.find((b) => b.id === example.id)).toMatchObject({ source: 'installed', status: 'ok', provides: { strategies: [example.strategy] } });

      const inspect = await gobJson<{ protocol_version: number; strategies: { id: string; kind: string; params_schema?: unknown }[] }>(
        'PluginInspectCommandResult',
        'plugin',
        'inspect',
        example.id,
      );
      expect(inspect.protocol_version).toBe(1);
      expect(inspect.strategies).toEqual([expect.objectContaining({ id: example.strategy, kind: 'file', params_schema: expect.objectContaining({ type: 'object' }) })]);
      const inspectHuman = await gob('plugin', 'inspect', example.id);
      expect(inspectHuman.stdout).toContain(`strategy ${example.strategy} (file)`);
      // Beside the directory it was added from, the id names that directory, whose bytes are the pinned ones.
      const env = { PATH: process.env.PATH ?? '', ...home.env };
      const beside = await run(process.execPath, [cli, 'plugin', 'inspect', example.id], { env, cwd: join(repoRoot, 'examples', 'plugins'), timeout: 60_000 });
      expect(beside.stdout).toContain(`strategy ${example.strategy} (file)`);
      // A hash given for an installed bundle is checked against its pin, not ignored.
      const pinned = again.manifest_sha256;
      expect((await gob('plugin', 'inspect', example.id, '--trusted-sha256', pinned.toUpperCase())).code).toBe(0);
      // So is one given for the directory, in capitals too.
      const dirUpper = await gob('plugin', 'inspect', source, '--trusted-sha256', pinned.toUpperCase());
      expect(dirUpper.code, dirUpper.stderr).toBe(0);
      const wrong = await gob('plugin', 'inspect', example.id, '--trusted-sha256', '0'.repeat(64), '--json');
      expect(wrong.code).toBe(1);
      expect(JSON.parse(wrong.stdout).error).toMatchObject({ code: 'pin_mismatch', message: `--trusted-sha256 ${'0'.repeat(64)} is not the pin of ${example.id}@0.1.0 (${pinned}); nothing was run` });
    });
  }

  it("takes an id for the bundle it names when a folder of that name without a manifest is where the command runs (an author's source folder)", async () => {
    expect((await gob('plugin', 'add', join('examples', 'plugins', 'keep-last-jq'))).code).toBe(0);
    const work = join(home.root, 'src');
    mkdirSync(join(work, 'keep-last-jq', 'bundle'), { recursive: true });
    mkdirSync(join(work, 'no-such-bundle'), { recursive: true });
    const env = { PATH: process.env.PATH ?? '', ...home.env };
    const inWork = async (...args: string[]) => {
      try {
        return { code: 0, ...(await run(process.execPath, [cli, ...args], { env, cwd: work, timeout: 60_000 })) };
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    const inspected = await inWork('plugin', 'inspect', 'keep-last-jq');
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(inspected.stdout).toContain(`keep-last-jq 0.1.0 (installed, ${join(installedDir(), 'keep-last-jq', '0.1.0')})`);
    const checked = await inWork('plugin', 'check', 'keep-last-jq', '--json');
    expect(checked.code, checked.stdout).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ id: 'keep-last-jq', path: join(installedDir(), 'keep-last-jq', '0.1.0') });
    // A folder that names no bundle is still read as the path it is.
    const unknown = await inWork('plugin', 'check', 'no-such-bundle', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({ code: 'not_a_bundle', message: `${join(work, 'no-such-bundle')} is not a plugin bundle: it has no gobstopper-plugin.json` });
  });

  it('checks a bundle without running it and prints manifest_sha256', async () => {
    const result = await gobJson<{ code_executed: boolean; manifest_sha256: string; trusted: boolean }>('PluginCheckCommandResult', 'plugin', 'check', 'examples/plugins/keep-last-jq');
    expect(result.code_executed).toBe(false);
    expect(result.manifest_sha256).toBe(sha256(readFileSync(join(repoRoot, 'examples', 'plugins', 'keep-last-jq', 'gobstopper-plugin.json'))));
    const human = await gob('plugin', 'check', 'examples/plugins/keep-last-jq/gobstopper-plugin.json');
    expect(human.stdout).toContain(`manifest_sha256 ${result.manifest_sha256}`);
    // A packed bundle is checked as plugin add would take it, and nothing of it stays behind.
    const packed = join(home.root, 'keep-last-jq.tgz');
    await run('tar', ['-czf', packed, '-C', join(repoRoot, 'examples', 'plugins'), 'keep-last-jq']);
    const fromTgz = await gobJson<{ manifest_sha256: string; path: string }>('PluginCheckCommandResult', 'plugin', 'check', packed);
    expect(fromTgz).toMatchObject({ manifest_sha256: result.manifest_sha256, path: packed });
  });

  it('a config with a typo, or a pin still holding its placeholder, stops neither the check that prints the pin nor the list', async () => {
    const configDir = join(home.configHome, 'gobstopper');
    mkdirSync(configDir, { recursive: true });
    const configPath = join(configDir, 'config.toml');
    const manifest = join(repoRoot, 'examples', 'plugins', 'keep-last-jq', 'gobstopper-plugin.json');
    writeFileSync(configPath, `[presets.mine]\nstrategy = "keep_last_jq"\nplugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "<manifest_sha256>" }\n`);
    try {
      // The value to paste over the placeholder comes from check, which needs no config for a path.
      const checked = await gobJson<{ manifest_sha256: string }>('PluginCheckCommandResult', 'plugin', 'check', 'examples/plugins/keep-last-jq');
      expect(checked.manifest_sha256).toBe(sha256(readFileSync(manifest)));

      const list = await gob('plugin', 'list', '--json');
      expect(list.code, list.stderr).toBe(0);
      const listed = JSON.parse(list.stdout) as { bundles: { id: string; source: string }[]; warnings: string[] };
      expect(validators.validatePluginListCommandResult(listed)).toBe(true);
      expect(listed.bundles.some((b) => b.source === 'builtin' && b.id === 'strategies-core')).toBe(true);
      expect(listed.warnings).toEqual([expect.stringMatching(/^the config could not be read, so no bundle it pins is listed: .*trusted_sha256.*64 lowercase hex digits/)]);
      const listHuman = await gob('plugin', 'list');
      expect(listHuman.code).toBe(0);
      expect(listHuman.stdout).toContain('strategies-core');
      expect(listHuman.stderr).toContain('warning: the config could not be read, so no bundle it pins is listed');

      // An id may name a pin, so there the config's problem is the answer.
      const byId = await gob('plugin', 'check', 'strategies-core', '--json');
      expect(byId.code).toBe(1);
      expect(JSON.parse(byId.stdout).error).toMatchObject({ code: 'invalid_config' });
      expect(JSON.parse(byId.stdout).error.message).toContain('trusted_sha256');

      // A --config the command line names that cannot be read is refused at once, path or not.
      const named = await gob('plugin', 'check', 'examples/plugins/keep-last-jq', '--config', configPath, '--json');
      expect(named.code).toBe(1);
      expect(JSON.parse(named.stdout).error.code).toBe('invalid_config');
    } finally {
      rmSync(configPath);
    }
  });

  it('check says when plugin add would refuse a bundle it admits: a built-in id, an id another installed bundle serves, or its id@version installed with other content', async () => {
    const builtinId = fixturePluginBundle(join(home.root, 'check-builtin'), 'misbehaving-strategy.mjs', { id: 'strategies-core' });
    const asBuiltin = await gobJson<{ add_refusal?: { code: string; message: string } }>('PluginCheckCommandResult', 'plugin', 'check', builtinId);
    expect(asBuiltin.add_refusal).toMatchObject({ code: 'plugin_id_builtin' });
    expect((await gob('plugin', 'check', builtinId)).stderr).toContain('warning: plugin add would refuse it: bundle id strategies-core is taken by a built-in bundle');
    const refused = await gob('plugin', 'add', builtinId, '--json');
    expect(JSON.parse(refused.stdout).error.code).toBe(asBuiltin.add_refusal!.code);

    const owner = fixturePluginBundle(join(home.root, 'check-owner'), 'misbehaving-strategy.mjs', { id: 'owner-bundle' });
    expect((await gob('plugin', 'add', owner)).code).toBe(0);
    try {
      const rival = fixturePluginBundle(join(home.root, 'check-rival'), 'misbehaving-strategy.mjs', { id: 'rival-bundle' });
      expect((await gobJson<{ add_refusal?: { code: string } }>('PluginCheckCommandResult', 'plugin', 'check', rival)).add_refusal).toMatchObject({ code: 'plugin_id_conflict' });
      // Checking the installed bundle itself by id is no add: nothing to refuse.
      expect((await gobJson<{ add_refusal?: unknown }>('PluginCheckCommandResult', 'plugin', 'check', 'owner-bundle')).add_refusal).toBeUndefined();
      // Nor is checking its directory again as it is; once edited without a new version, add refuses it.
      expect((await gobJson<{ add_refusal?: unknown }>('PluginCheckCommandResult', 'plugin', 'check', owner)).add_refusal).toBeUndefined();
      const manifestPath = join(owner, 'gobstopper-plugin.json');
      writeFileSync(manifestPath, JSON.stringify({ ...JSON.parse(readFileSync(manifestPath, 'utf8')), description: 'edited' }));
      const edited = await gobJson<{ add_refusal?: { code: string; message: string } }>('PluginCheckCommandResult', 'plugin', 'check', owner);
      expect(edited.add_refusal).toMatchObject({ code: 'plugin_version_exists', message: expect.stringContaining('owner-bundle@1.0.0 is already installed with different content') });
      const again = await gob('plugin', 'add', owner, '--json');
      expect(JSON.parse(again.stdout).error.code).toBe(edited.add_refusal!.code);
    } finally {
      await gob('plugin', 'remove', 'owner-bundle');
    }
  });

  it('a packed bundle that admission refuses is named by its archive, not by the temporary copy it was unpacked into', async () => {
    const work = join(home.root, 'packed-damaged');
    cpSync(join(repoRoot, 'examples', 'plugins', 'keep-last-jq'), join(work, 'keep-last-jq'), { recursive: true });
    writeFileSync(join(work, 'keep-last-jq', 'main.sh'), '#!/bin/sh\nexit 0\n');
    const packed = join(home.root, 'keep-last-jq-damaged.tgz');
    await run('tar', ['-czf', packed, '-C', work, 'keep-last-jq']);
    const before = snapshot();
    for (const command of ['add', 'check']) {
      const r = await gob('plugin', command, packed, '--json');
      expect(r.code, command).toBe(1);
      expect(JSON.parse(r.stdout).error, command).toMatchObject({
        code: 'file_hash_mismatch',
        message: expect.stringContaining(`bundle ${packed}: main.sh does not match the sha256`),
        details: { bundle: packed, file: 'main.sh' },
      });
    }
    expect(snapshot()).toEqual(before);
  });

  it('without npm or tar on PATH, add says which program is missing, not that npm exited with undefined or that the archive is bad', async () => {
    const packed = join(home.root, 'keep-last-jq-nopath.tgz');
    await run('tar', ['-czf', packed, '-C', join(repoRoot, 'examples', 'plugins'), 'keep-last-jq']);
    const emptyPath = join(home.root, 'empty-path');
    mkdirSync(emptyPath, { recursive: true });
    // The CLI is started by its absolute path: nothing it looks up on PATH is found.
    const bare = async (...args: string[]): Promise<CliResult> => {
      try {
        const { stdout, stderr } = await run(process.execPath, [cli, ...args], { env: { ...home.env, PATH: emptyPath }, cwd: repoRoot, timeout: 60_000 });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code?: number; stdout?: string; stderr?: string };
        return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      }
    };
    const before = snapshot();
    const npm = await bare('plugin', 'add', 'some-gobstopper-strategy', '--json');
    expect(npm.code).toBe(1);
    expect(JSON.parse(npm.stdout).error).toEqual({ code: 'npm_pack_failed', message: 'cannot fetch some-gobstopper-strategy from npm: npm is not on PATH', details: { spec: 'some-gobstopper-strategy' } });
    for (const command of ['add', 'check']) {
      const tar = await bare('plugin', command, packed);
      expect(tar.code, command).toBe(1);
      expect(tar.stderr, command).toBe(`gobstopper: cannot unpack ${packed}: tar is not on PATH\n`);
    }
    expect(snapshot()).toEqual(before);
  });

  it('Ctrl-C during a slow npm fetch leaves no temporary directory behind', async () => {
    const fakeBin = join(home.root, 'slow-npm-bin');
    mkdirSync(fakeBin, { recursive: true });
    const started = join(home.root, 'slow-npm-started');
    writeFileSync(join(fakeBin, 'npm'), `#!/bin/sh\n: > ${JSON.stringify(started)}\nexec sleep 30\n`, { mode: 0o755 });
    const tmp = join(home.root, 'tmp-for-fetch');
    mkdirSync(tmp, { recursive: true });
    const child = spawn(process.execPath, [cli, 'plugin', 'add', 'slow-strategy'], {
      env: { ...home.env, PATH: `${fakeBin}:${process.env.PATH}`, TMPDIR: tmp },
      cwd: repoRoot,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 30_000;
    while (!existsSync(started) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(started)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("a failed npm fetch says what npm said, and leaves npm's log and update check out of the home", async () => {
    // An npm that fails as the registry does for a name it has not got, and notes how it was asked.
    const fakeBin = join(home.root, 'fake-npm-bin');
    mkdirSync(fakeBin, { recursive: true });
    const argsFile = join(home.root, 'npm-args');
    writeFileSync(
      join(fakeBin, 'npm'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(argsFile)}\necho 'npm error code E404' >&2\necho 'npm error 404 Not Found - GET https://registry.npmjs.org/nope-strategy' >&2\necho 'npm error 404' >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const before = snapshot();
    const { code, stdout } = await gobWith({ PATH: `${fakeBin}:${process.env.PATH}` }, 'plugin', 'add', 'nope-strategy', '--json');
    expect(code).toBe(1);
    expect(JSON.parse(stdout).error).toEqual({ code: 'npm_pack_failed', message: 'cannot fetch nope-strategy from npm: 404 Not Found - GET https://registry.npmjs.org/nope-strategy', details: { spec: 'nope-strategy' } });
    const args = readFileSync(argsFile, 'utf8').split('\n');
    expect(args).toContain('--no-update-notifier');
    const logs = args[args.indexOf('--logs-dir') + 1]!;
    expect(logs.startsWith(args[args.indexOf('--pack-destination') + 1]!)).toBe(true);
    expect(existsSync(logs)).toBe(false);
    expect(snapshot()).toEqual(before);
  });

  it('one changed byte in an installed bundle makes check and inspect fail, naming the file', async () => {
    await gob('plugin', 'add', 'examples/plugins/keep-last-python');
    const file = join(installedDir(), 'keep-last-python', '0.1.0', 'main.py');
    const bytes = readFileSync(file);
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 0x01;
    writeFileSync(file, bytes);
    const check = await gob('plugin', 'check', 'keep-last-python', '--json');
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: false, error: { code: 'file_hash_mismatch', message: expect.stringContaining('main.py') } });
    const inspect = await gob('plugin', 'inspect', 'keep-last-python');
    expect(inspect.code).toBe(1);
    expect(inspect.stderr).toMatch(/main\.py does not match the sha256/);
    // An installed copy is not the author's to re-pin: the advice is to install it again.
    expect(inspect.stderr).toContain('this is the copy plugin add installed, changed since: install it again (gobstopper plugin remove keep-last-python@0.1.0, then gobstopper plugin add <the bundle>)');
    expect(inspect.stderr).not.toContain('rehash.mjs');
    const list = await gobJson<{ bundles: { id: string; status: string }[] }>('PluginListCommandResult', 'plugin', 'list');
    expect(list.bundles.find((b) => b.id === 'keep-last-python')?.status).toBe('damaged');
    // Restore for the tests that follow.
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 0x01;
    writeFileSync(file, bytes);
    // A file that appeared in the installed copy (a plugin writing a cache beside itself) is named
    // as such, with where such files belong: reinstalling alone would only repeat it.
    const cache = join(installedDir(), 'keep-last-python', '0.1.0', 'cache.json');
    writeFileSync(cache, '{}');
    const appeared = await gob('plugin', 'inspect', 'keep-last-python');
    expect(appeared.code).toBe(1);
    expect(appeared.stderr).toContain('cache.json is not declared in the manifest\'s files; it appeared in the copy plugin add installed, most likely written by the plugin while it ran');
    expect(appeared.stderr).toContain('keep caches and scratch files in a temporary directory');
    rmSync(cache);
  });

  it("inspect shows a plugin's description on one line, so none of its lines passes for gobstopper's", async () => {
    const bundle = fixturePluginBundle(join(home.root, 'multiline-bundle'), 'misbehaving-strategy.mjs', { args: ['multiline-description', '', 'multiline-fixture', 'multiline_strategy'], id: 'multiline-fixture', provides: { strategies: ['multiline_strategy'] } });
    const pin = (await gobJson<{ manifest_sha256: string }>('PluginCheckCommandResult', 'plugin', 'check', bundle)).manifest_sha256;
    const human = await gob('plugin', 'inspect', bundle, '--trusted-sha256', pin);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('  strategy multiline_strategy (file): test fixture\\u000awarning: nothing to worry about\n');
    expect(human.stdout).not.toMatch(/^warning:/m);
    // --json keeps the plugin's words as they are.
    const json = await gobJson<{ strategies: { description: string }[] }>('PluginInspectCommandResult', 'plugin', 'inspect', bundle, '--trusted-sha256', pin);
    expect(json.strategies[0]!.description).toBe('test fixture\nwarning: nothing to worry about');
  });

  it('inspect says when a plugin does not answer shutdown, which every command then waits out', async () => {
    const deaf = fixturePluginBundle(join(home.root, 'deaf-bundle'), 'misbehaving-strategy.mjs', { args: ['deaf', '', 'deaf-fixture', 'deaf_strategy'], id: 'deaf-fixture', provides: { strategies: ['deaf_strategy'] } });
    const pin = (await gobJson<{ manifest_sha256: string }>('PluginCheckCommandResult', 'plugin', 'check', deaf)).manifest_sha256;
    const json = await gobJson<{ shutdown_answered: boolean }>('PluginInspectCommandResult', 'plugin', 'inspect', deaf, '--trusted-sha256', pin);
    expect(json.shutdown_answered).toBe(false);
    const human = await gob('plugin', 'inspect', deaf, '--trusted-sha256', pin);
    expect(human.code).toBe(0);
    expect(human.stderr).toContain('warning: the plugin did not answer shutdown');
    // A well-behaved one is not warned about.
    const quiet = await gob('plugin', 'inspect', 'keep-last-python');
    expect(quiet.stderr).not.toContain('shutdown');
  });

  it('bad input gets one line (or one JSON object), a non-zero exit, and changes nothing', async () => {
    const before = snapshot();
    const notBundle = await gob('plugin', 'add', 'docs');
    expect(notBundle.code).toBe(1);
    expect(notBundle.stderr.trim().split('\n')).toHaveLength(1);
    expect(notBundle.stderr).toContain('is not a plugin bundle');

    // Not the current directory, which an empty path would otherwise resolve to.
    const empty = await gob('plugin', 'add', '', '--json');
    expect(empty.code).toBe(2);
    expect(JSON.parse(empty.stdout).error).toEqual({ code: 'bad_source', message: expect.stringContaining('the bundle source is empty') });

    const broken = join(home.root, 'broken');
    writeBundle(broken, { files: { 'main.mjs': 'x' }, manifest: { permissions: ['all'] } });
    const brokenJson = await gob('plugin', 'add', broken, '--json');
    expect(brokenJson.code).toBe(1);
    expect(JSON.parse(brokenJson.stdout)).toEqual({
      ok: false,
      error: { code: 'manifest_unknown_field', message: expect.stringContaining('/permissions'), details: expect.objectContaining({ pointer: '/permissions' }) },
    });

    // A repeated member is one bundle to JSON.parse (the last wins) and maybe another to a reader.
    const twice = join(home.root, 'twice');
    writeBundle(twice, { files: { 'main.mjs': 'x' }, manifest: { id: 'twice' } });
    const twiceManifest = join(twice, 'gobstopper-plugin.json');
    writeFileSync(twiceManifest, readFileSync(twiceManifest, 'utf8').replace('"id": "twice",', '"id": "twice",\n  "id": "keep-last-python",'));
    const twiceHuman = await gob('plugin', 'add', twice);
    expect({ code: twiceHuman.code, stderr: twiceHuman.stderr }).toEqual({
      code: 1,
      stderr: `gobstopper: bundle ${twice}: gobstopper-plugin.json has the key "id" twice at /id; JSON parsers disagree on which one counts, so keep one\n`,
    });
    const twiceJson = await gob('plugin', 'add', twice, '--json');
    expect(twiceJson.code).toBe(1);
    expect(JSON.parse(twiceJson.stdout)).toEqual({
      ok: false,
      error: { code: 'manifest_duplicate_key', message: expect.stringContaining('"id" twice at /id'), details: { bundle: twice, file: 'gobstopper-plugin.json', pointer: '/id', key: 'id' } },
    });
    expect((await gob('plugin', 'check', twice)).code).toBe(1);

    // A bundle that serves no id would never run: not installed.
    const idle = join(home.root, 'idle');
    writeBundle(idle, { files: { 'main.mjs': 'x' }, manifest: { id: 'idle', provides: {} } });
    const idleAdd = await gob('plugin', 'add', idle);
    expect({ code: idleAdd.code, stderr: idleAdd.stderr }).toEqual({
      code: 1,
      stderr: `gobstopper: bundle ${idle}: gobstopper-plugin.json provides nothing at /provides; list at least one id under providers, strategies or scorers, since a bundle that serves no id is never run\n`,
    });
    const idleJson = await gob('plugin', 'add', idle, '--json');
    expect(JSON.parse(idleJson.stdout).error).toMatchObject({ code: 'manifest_provides_nothing', details: { pointer: '/provides' } });

    const unknown = await gob('plugin', 'inspect', 'no-such-plugin', '--json');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error.code).toBe('plugin_not_found');
    const removeUnknown = await gob('plugin', 'remove', 'no-such-plugin');
    expect(removeUnknown.code).toBe(2);
    expect(removeUnknown.stderr.trim().split('\n')).toHaveLength(1);
    // `..` and `.` match the id pattern but name the data directory (vault, pins) and the plugins
    // directory: refused as specs, with nothing deleted.
    const beforeDots = snapshot();
    for (const spec of ['..', '.']) {
      const removeDots = await gob('plugin', 'remove', spec, '--json');
      expect(removeDots.code).toBe(2);
      expect(JSON.parse(removeDots.stdout).error.code).toBe('bad_plugin_spec');
    }
    expect(snapshot()).toEqual(beforeDots);

    // A second bundle claiming an id an installed bundle serves: refused, not left to break plans.
    const claimer = join(home.root, 'claimer');
    writeBundle(claimer, { files: { 'main.mjs': 'x' }, manifest: { id: 'claimer', provides: { strategies: ['keep_last_py'] } } });
    const claimed = await gob('plugin', 'add', claimer, '--json');
    // What is installed refuses it, not the command line: exit 1, as for an id@version with other content.
    expect(claimed.code).toBe(1);
    expect(JSON.parse(claimed.stdout).error).toMatchObject({
      code: 'plugin_id_conflict',
      message: 'strategy "keep_last_py" is already provided by the installed bundle keep-last-python@0.1.0; remove it first with `gobstopper plugin remove keep-last-python`',
    });

    // Other bytes under an installed id@version: refused with the same exit as the claimed id.
    const sameVersion = join(home.root, 'same-version');
    writeBundle(sameVersion, { files: { 'main.mjs': 'other' }, manifest: { id: 'keep-last-python', version: '0.1.0', provides: { strategies: ['keep_last_py'] } } });
    const exists = await gob('plugin', 'add', sameVersion, '--json');
    expect({ code: exists.code, error: JSON.parse(exists.stdout).error.code }).toEqual({ code: 1, error: 'plugin_version_exists' });

    // An empty argument is not the current directory, whatever that holds.
    for (const command of ['check', 'inspect']) {
      const empty = await gob('plugin', command, '');
      expect({ code: empty.code, stderr: empty.stderr }).toEqual({ code: 2, stderr: 'gobstopper: the bundle argument is empty; give a bundle id (id or id@version) or a bundle directory\n' });
    }
    // keep-last-jq was added from its example directory, so those bytes are pinned; a copy with
    // one byte changed is not, and its code does not run.
    const changed = join(home.root, 'keep-last-jq-changed');
    cpSync(join(repoRoot, 'examples', 'plugins', 'keep-last-jq'), changed, { recursive: true });
    const manifestPath = join(changed, 'gobstopper-plugin.json');
    writeFileSync(manifestPath, readFileSync(manifestPath, 'utf8').replace('"keep-last-jq"', '"keep-last-jq" '));
    const dirWithoutPin = await gob('plugin', 'inspect', changed);
    expect(dirWithoutPin.code).toBe(2);
    expect(dirWithoutPin.stderr).toContain('--trusted-sha256');
    const notASha = await gob('plugin', 'inspect', 'examples/plugins/keep-last-jq', '--trusted-sha256', 'abc');
    expect(notASha.code).toBe(2);
    expect(notASha.stderr.trim()).toBe('gobstopper: --trusted-sha256 must be the 64-hex manifest_sha256 that gobstopper plugin check examples/plugins/keep-last-jq prints');
    expect(snapshot()).toEqual(before);
  });

  it('a FIFO named gobstopper-plugin.json is refused at once as not a regular file, whichever path names it', async () => {
    const before = snapshot();
    const dir = join(home.root, 'fifo-bundle');
    mkdirSync(dir);
    writeFileSync(join(dir, 'main.mjs'), 'x');
    const fifo = join(dir, 'gobstopper-plugin.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const said = `${dir} is not a plugin bundle: gobstopper-plugin.json is not a regular file`;
    for (const target of [dir, fifo]) {
      for (const command of ['check', 'add']) {
        // Opened for reading, the FIFO would wait for a writer that never comes.
        const started = Date.now();
        const human = await gob('plugin', command, target);
        expect(Date.now() - started).toBeLessThan(20_000);
        expect({ code: human.code, stderr: human.stderr }).toEqual({ code: 1, stderr: `gobstopper: ${said}\n` });
        const json = await gob('plugin', command, target, '--json');
        expect({ code: json.code, error: JSON.parse(json.stdout).error }).toEqual({ code: 1, error: { code: 'not_a_bundle', message: said, details: { bundle: dir, file: 'gobstopper-plugin.json' } } });
      }
    }
    expect(snapshot()).toEqual(before);
  });

  it("a bundle taking a built-in's id is refused, so the built-in stays the one that id names", async () => {
    const before = snapshot();
    const impostor = writeBundle(join(home.root, 'impostor'), { files: { 'main.mjs': 'x' }, manifest: { id: 'strategies-core', version: '0.1.0', provides: { strategies: ['impostor_s'] } } });
    const human = await gob('plugin', 'add', impostor);
    expect({ code: human.code, stdout: human.stdout }).toEqual({ code: 1, stdout: '' });
    expect(human.stderr).toBe(
      'gobstopper: bundle id strategies-core is taken by a built-in bundle; give yours an id of its own in gobstopper-plugin.json (whatever its id, it replaces the built-in for each strategy, provider or scorer id it provides)\n',
    );
    const json = await gob('plugin', 'add', impostor, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'plugin_id_builtin', details: { id: 'strategies-core' } });
    expect(snapshot()).toEqual(before);
    const inspected = await gobJson<{ source: string; strategies: { id: string }[] }>('PluginInspectCommandResult', 'plugin', 'inspect', 'strategies-core');
    expect(inspected.source).toBe('builtin');
    expect(inspected.strategies.map((s) => s.id)).toContain('elide');
  });

  it('inspect warns about ids the manifest provides but the handshake does not offer', async () => {
    const dir = fixturePluginBundle(join(home.root, 'ghostly'), 'misbehaving-strategy.mjs', { id: 'fixture', provides: { strategies: ['fixture_strategy', 'ghost_strategy'] } });
    expect((await gob('plugin', 'add', dir)).code).toBe(0);
    try {
      const inspected = await gobJson<{ not_served: string[] }>('PluginInspectCommandResult', 'plugin', 'inspect', 'fixture');
      expect(inspected.not_served).toEqual(['strategy ghost_strategy']);
      const human = await gob('plugin', 'inspect', 'fixture');
      expect(human.stderr).toContain('warning: the manifest provides strategy ghost_strategy, which the handshake did not offer; calls for it fail\n');
    } finally {
      await gob('plugin', 'remove', 'fixture');
    }
  });

  it('inspect warns about a params_schema plan would refuse, before any plan meets it', async () => {
    const dir = fixturePluginBundle(join(home.root, 'badschema'), 'misbehaving-strategy.mjs', { id: 'fixture', args: ['bad-params-schema'] });
    expect((await gob('plugin', 'add', dir)).code).toBe(0);
    try {
      const inspected = await gobJson<{ unusable_params_schemas: Array<{ strategy: string; problem: string }> }>('PluginInspectCommandResult', 'plugin', 'inspect', 'fixture');
      expect(inspected.unusable_params_schemas).toEqual([{ strategy: 'fixture_strategy', problem: expect.stringMatching(/^strategy fixture_strategy declares a params_schema that is not a usable JSON Schema \(.*type/) }]);
      const human = await gob('plugin', 'inspect', 'fixture');
      expect(human.stderr).toMatch(/warning: strategy fixture_strategy declares a params_schema that is not a usable JSON Schema .*; plan and eval refuse to run it until the schema is fixed\n/);
    } finally {
      await gob('plugin', 'remove', 'fixture');
    }
  });

  it('adds and removes run at the same time each keep their pin, and a bundle added twice at once is installed once', async () => {
    const ids = ['para-a', 'para-b', 'para-c', 'para-d'];
    const dirs = ids.map((id) => writeBundle(join(home.root, id), { files: { 'main.mjs': id }, manifest: { id, provides: { strategies: [`${id.replace('-', '_')}_s`] } } }));
    // The first bundle twice: both copies race for the same version directory.
    const adds = await Promise.all([...dirs, dirs[0]!].map((dir) => gob('plugin', 'add', dir, '--json')));
    for (const added of adds) expect(added.code, added.stdout + added.stderr).toBe(0);
    const listed = await gobJson<{ bundles: { id: string; status: string }[] }>('PluginListCommandResult', 'plugin', 'list');
    expect(listed.bundles.filter((b) => ids.includes(b.id))).toEqual(ids.map((id) => expect.objectContaining({ id, status: 'ok' })));
    const removes = await Promise.all(ids.map((id) => gob('plugin', 'remove', id)));
    for (const removed of removes) expect(removed.code, removed.stderr).toBe(0);
    const after = await gobJson<{ bundles: { id: string }[] }>('PluginListCommandResult', 'plugin', 'list');
    expect(after.bundles.map((b) => b.id).filter((id) => ids.includes(id))).toEqual([]);
  });

  it('removes an installed bundle', async () => {
    await gob('plugin', 'add', 'examples/plugins/keep-last-jq');
    const removed = await gobJson<{ removed: { id: string; version: string }[] }>('PluginRemoveCommandResult', 'plugin', 'remove', 'keep-last-jq@0.1.0');
    expect(removed.removed).toEqual([expect.objectContaining({ id: 'keep-last-jq', version: '0.1.0' })]);
    expect(existsSync(join(installedDir(), 'keep-last-jq'))).toBe(false);
    const list = await gobJson<{ bundles: { id: string }[] }>('PluginListCommandResult', 'plugin', 'list');
    expect(list.bundles.map((b) => b.id)).not.toContain('keep-last-jq');
  });
});
