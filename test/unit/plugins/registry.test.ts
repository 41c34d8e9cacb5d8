import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PluginHost } from '../../../kernel/plugins/host/plugin-host.js';
import { openBundleSource } from '../../../kernel/plugins/registry/bundle-source.js';
import { installBundle, removeBundle } from '../../../kernel/plugins/registry/install.js';
import { PluginRegistry } from '../../../kernel/plugins/registry/registry.js';
import { fixturePluginBundle, sha256, tempDir, writeBundle, type TempDir } from '../../fixtures/bundles/build-bundle.js';
import { proposeParams, syntheticItems } from '../../fixtures/bundles/propose-params.js';

/** Every file under dir with its hash: "nothing changed" means this is equal before and after. */
function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      out[path] = sha256(readFileSync(path));
    }
  }
  return out;
}

describe('plugin registry and installation', () => {
  let temp: TempDir;
  let registry: PluginRegistry;
  let builtinDir: string;
  let dataDir: string;

  /** A bundle "elide-like": plugin id, version, provided strategy ids, and the fixture plugin mode. */
  function bundle(name: string, manifest: Record<string, unknown>) {
    return fixturePluginBundle(join(temp.path, 'src', name), 'misbehaving-strategy.mjs', { args: ['ok'], ...manifest });
  }

  beforeEach(() => {
    temp = tempDir('gob-registry-');
    builtinDir = join(temp.path, 'dist-plugins');
    dataDir = join(temp.path, 'data');
    // A built-in that serves strategy fixture_strategy, as dist/plugins/<name>/ would.
    fixturePluginBundle(join(builtinDir, 'strategy-fixture'), 'misbehaving-strategy.mjs', { id: 'fixture', args: ['ok'] });
    registry = new PluginRegistry({ builtinDir, dataDir, gobstopperVersion: '0.1.0' });
  });
  afterEach(() => temp.cleanup());

  it('finds a built-in by what it provides', () => {
    const ref = registry.resolve('strategy', 'fixture_strategy');
    expect(ref).toMatchObject({ source: 'builtin', id: 'fixture', version: '1.0.0', pinnedSha256: null });
  });

  it('says clearly when nothing provides an id', () => {
    expect(() => registry.resolve('scorer', 'nope')).toThrow(/no plugin bundle provides scorer "nope"/);
  });

  it('installs a directory: copies its declared files under plugins/<id>/<version>/ and pins the manifest', async () => {
    const source = bundle('mine', { id: 'mine', version: '2.1.0', provides: { strategies: ['fixture_strategy'] }, capabilities: ['network'] });
    const outcome = await installBundle(registry, source);
    const target = join(dataDir, 'plugins', 'mine', '2.1.0');
    expect(outcome.bundle.root).toBe(target);
    expect(outcome.alreadyInstalled).toBe(false);
    expect(readdirSync(target).sort()).toEqual(['gobstopper-plugin.json', 'misbehaving-strategy.mjs']);
    const pin = registry.trust.find('mine', '2.1.0');
    expect(pin?.manifest_sha256).toBe(sha256(readFileSync(join(source, 'gobstopper-plugin.json'))));
    expect(pin?.capabilities).toEqual(['network']);
    // An installed bundle serving the same id shadows the built-in.
    expect(outcome.shadows).toEqual([{ kind: 'strategy', provided_id: 'fixture_strategy', builtin: 'fixture@1.0.0' }]);
    expect(registry.resolve('strategy', 'fixture_strategy')).toMatchObject({ source: 'installed', id: 'mine' });
    expect(registry.shadowing().map((s) => `${s.provided_id}:${s.by.id}`)).toEqual(['fixture_strategy:mine']);
  });

  it('installing the same bundle again changes nothing; a different one with the same id@version is refused', async () => {
    const source = bundle('mine', { id: 'mine' });
    await installBundle(registry, source);
    const before = snapshot(dataDir);
    expect((await installBundle(registry, source)).alreadyInstalled).toBe(true);
    const other = writeBundle(join(temp.path, 'src', 'other'), { files: { 'main.mjs': 'different' }, manifest: { id: 'mine' } });
    await expect(installBundle(registry, other)).rejects.toMatchObject({ code: 'plugin_version_exists' });
    expect(snapshot(dataDir)).toEqual(before);
  });

  it('a pin that cannot be written (a full disk) leaves no copy of the bundle behind', async () => {
    const source = bundle('mine', { id: 'mine' });
    vi.spyOn(registry.trust, 'put').mockImplementation(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    await expect(installBundle(registry, source)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(existsSync(join(dataDir, 'plugins', 'mine', '1.0.0'))).toBe(false);
    vi.restoreAllMocks();
    // Nothing half-installed: the next add installs it, not "already installed".
    expect((await installBundle(registry, source)).alreadyInstalled).toBe(false);
    expect(registry.trust.find('mine', '1.0.0')).toBeDefined();
  });

  it('adding a bundle again over a damaged installed copy says to remove that copy, not to re-pin its files', async () => {
    const source = bundle('mine', { id: 'mine' });
    await installBundle(registry, source);
    writeFileSync(join(dataDir, 'plugins', 'mine', '1.0.0', 'misbehaving-strategy.mjs'), 'changed');
    const refused = installBundle(registry, source);
    await expect(refused).rejects.toMatchObject({ code: 'file_hash_mismatch', message: expect.stringContaining('remove it with `gobstopper plugin remove mine@1.0.0`, then add the bundle again') });
    await expect(refused).rejects.not.toMatchObject({ message: expect.stringContaining('pin its sha256 again') });
  });

  it('the copy an add killed midway left behind is removed by the next add or remove of that id', async () => {
    const dead = join(dataDir, 'plugins', 'mine', '.incoming-0123456789ab');
    const leave = () => writeBundle(dead, { files: { 'misbehaving-strategy.mjs': 'half' }, manifest: { id: 'mine' } });
    leave();
    await installBundle(registry, bundle('mine', { id: 'mine' }));
    expect(readdirSync(join(dataDir, 'plugins', 'mine'))).toEqual(['1.0.0']);
    leave();
    await removeBundle(registry, 'mine');
    expect(existsSync(join(dataDir, 'plugins', 'mine'))).toBe(false);
  });

  it('keeps two versions of one plugin side by side and uses the newest', async () => {
    await installBundle(registry, bundle('v1', { id: 'mine', version: '1.0.0' }));
    await installBundle(registry, bundle('v2', { id: 'mine', version: '1.10.0' }));
    expect(registry.resolve('strategy', 'fixture_strategy').version).toBe('1.10.0');
  });

  it('refuses to install a second plugin for an id another installed plugin serves, and changes nothing', async () => {
    await installBundle(registry, bundle('a', { id: 'alpha' }));
    const before = snapshot(dataDir);
    await expect(installBundle(registry, bundle('b', { id: 'beta' }))).rejects.toMatchObject({
      code: 'plugin_id_conflict',
      message: expect.stringContaining('strategy "fixture_strategy" is already provided by the installed bundle alpha@1.0.0'),
    });
    expect(snapshot(dataDir)).toEqual(before);
  });

  it('refuses to choose between two installed plugins providing one id (pins written before that check), naming both', async () => {
    await installBundle(registry, bundle('a', { id: 'alpha' }));
    const alpha = registry.trust.find('alpha', '1.0.0')!;
    registry.trust.put({ ...alpha, id: 'beta' });
    expect(() => registry.resolve('strategy', 'fixture_strategy')).toThrow(/alpha@1\.0\.0, beta@1\.0\.0/);
  });

  it('installs a .tgz and an npm package spec', async () => {
    const source = writeBundle(join(temp.path, 'src', 'pkg'), {
      files: { 'main.mjs': 'x', 'package.json': JSON.stringify({ name: 'gob-fixture-bundle', version: '3.0.0' }) + '\n' },
      manifest: { id: 'packed', version: '3.0.0', executable: 'main.mjs' },
    });
    const tgz = join(temp.path, 'packed.tgz');
    execFileSync('tar', ['-czf', tgz, '-C', source, '.']);
    const fromTgz = await installBundle(registry, tgz);
    expect(fromTgz.sourceKind).toBe('tarball');
    expect(fromTgz.bundle.manifest.id).toBe('packed');
    await removeBundle(registry, 'packed');
    const fromNpm = await installBundle(registry, `file:${source}`);
    expect(fromNpm.sourceKind).toBe('npm');
    expect(existsSync(join(dataDir, 'plugins', 'packed', '3.0.0', 'package.json'))).toBe(true);
  });

  it('a .tgz whose members have mode 000 is read and installed, and its unpacked copy is removed', async () => {
    const source = writeBundle(join(temp.path, 'src', 'locked'), { files: { 'sub/main.mjs': 'x' }, manifest: { id: 'locked', executable: 'sub/main.mjs' } });
    const tgz = join(temp.path, 'locked.tgz');
    execFileSync('tar', ['-czf', tgz, '--mode=a-rwx', '-C', source, '.']);
    const opened = await openBundleSource(tgz);
    try {
      // Unreadable to anyone but root, so admission failed with EACCES and the copy stayed in /tmp.
      expect(statSync(opened.dir).mode & 0o700).toBe(0o700);
      expect(statSync(join(opened.dir, 'sub')).mode & 0o700).toBe(0o700);
      expect(statSync(join(opened.dir, 'sub', 'main.mjs')).mode & 0o600).toBe(0o600);
    } finally {
      opened.cleanup();
    }
    expect(existsSync(opened.dir)).toBe(false);
    expect((await installBundle(registry, tgz)).bundle.manifest.id).toBe('locked');
  });

  it("a .tgz tar refuses to unpack is refused with tar's reason", async () => {
    const work = join(temp.path, 'pack', 'inner');
    writeBundle(join(work, 'package'), { files: { 'main.mjs': 'x' }, manifest: { id: 'climber' } });
    writeFileSync(join(temp.path, 'pack', 'escaped.txt'), 'outside');
    const tgz = join(temp.path, 'climber.tgz');
    // -P keeps the ../ in the member name, as a hostile archive would carry it.
    execFileSync('tar', ['-czPf', tgz, 'package', '../escaped.txt'], { cwd: work });
    await expect(installBundle(registry, tgz)).rejects.toMatchObject({
      code: 'not_a_bundle',
      message: `${tgz} is not a plugin bundle: tar could not unpack it (../escaped.txt: Member name contains '..')`,
    });
    const notGzip = join(temp.path, 'plain.tgz');
    writeFileSync(notGzip, 'not an archive');
    await expect(installBundle(registry, notGzip)).rejects.toMatchObject({ message: expect.stringContaining('tar could not unpack it (gzip: stdin: not in gzip format)') });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('installs a .tgz through a link to it, as a release link names one', async () => {
    const source = writeBundle(join(temp.path, 'src', 'linked'), { files: { 'main.mjs': 'x' }, manifest: { id: 'linked' } });
    const tgz = join(temp.path, 'linked-1.0.0.tgz');
    execFileSync('tar', ['-czf', tgz, '-C', source, '.']);
    const latest = join(temp.path, 'latest.tgz');
    symlinkSync(tgz, latest);
    const installed = await installBundle(registry, latest);
    expect(installed).toMatchObject({ sourceKind: 'tarball', bundle: { manifest: { id: 'linked' } } });
  });

  it('refuses a .tgz that unpacks to more than a bundle may hold, before unpacking it', async () => {
    const source = writeBundle(join(temp.path, 'src', 'bomb'), { files: { 'main.mjs': 'x', 'zero.bin': Buffer.alloc(20 * 1024 * 1024) }, manifest: { id: 'bomb' } });
    const tgz = join(temp.path, 'bomb.tgz');
    execFileSync('tar', ['-czf', tgz, '-C', source, '.']);
    expect(statSync(tgz).size).toBeLessThan(1024 * 1024);
    await expect(installBundle(registry, tgz)).rejects.toMatchObject({ code: 'bundle_too_large', message: expect.stringContaining(`${tgz} unpacks to more than a plugin bundle may hold`) });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a non-bundle and leaves the data directory as it was', async () => {
    const plain = join(temp.path, 'plain');
    writeBundle(plain, { files: { 'main.mjs': 'x' } });
    writeFileSync(join(plain, 'gobstopper-plugin.json'), '{"id": "broken"');
    await expect(installBundle(registry, plain)).rejects.toMatchObject({ code: 'manifest_not_json' });
    await expect(installBundle(registry, join(temp.path, 'missing-dir'))).rejects.toMatchObject({ code: 'not_a_bundle' });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('removes one version or all of them, and refuses unknown ids and built-ins', async () => {
    await installBundle(registry, bundle('v1', { id: 'mine', version: '1.0.0' }));
    await installBundle(registry, bundle('v2', { id: 'mine', version: '2.0.0' }));
    expect((await removeBundle(registry, 'mine@1.0.0')).removed.map((r) => r.version)).toEqual(['1.0.0']);
    expect(registry.installed().map((r) => r.version)).toEqual(['2.0.0']);
    expect((await removeBundle(registry, 'mine')).removed.map((r) => r.version)).toEqual(['2.0.0']);
    expect(existsSync(join(dataDir, 'plugins', 'mine'))).toBe(false);
    await expect(removeBundle(registry, 'mine')).rejects.toMatchObject({ code: 'plugin_not_installed', exit: 2 });
    await expect(removeBundle(registry, 'fixture')).rejects.toMatchObject({ code: 'plugin_builtin' });
    await expect(removeBundle(registry, '../etc')).rejects.toMatchObject({ code: 'bad_plugin_spec' });
  });

  it('an id that names no bundle gets the versions there are, or the id probably meant', async () => {
    await installBundle(registry, bundle('v1', { id: 'mine', version: '1.0.0' }));
    await expect(removeBundle(registry, 'mine@2.0.0')).rejects.toMatchObject({ code: 'plugin_not_installed', message: 'no installed plugin mine@2.0.0 (mine has version 1.0.0); see `gobstopper plugin list`' });
    await expect(removeBundle(registry, 'mien')).rejects.toMatchObject({ message: 'no installed plugin mien (did you mean mine?); see `gobstopper plugin list`' });
    expect(() => registry.findBundle('fixtur')).toThrow('no plugin bundle with id fixtur is built in, installed or pinned in the config (did you mean fixture?); see `gobstopper plugin list`');
    expect(() => registry.findBundle('fixture@2.0.0')).toThrow('(fixture has version 1.0.0)');
    // Nothing near: the refusal as it was.
    await expect(removeBundle(registry, 'other')).rejects.toMatchObject({ message: 'no installed plugin other; see `gobstopper plugin list`' });
  });

  it('refuses `.` and `..` as ids and versions instead of deleting the plugins or data directory', async () => {
    await installBundle(registry, bundle('v1', { id: 'mine', version: '1.0.0' }));
    writeFileSync(join(dataDir, 'keep.txt'), 'the vault lives here');
    const before = snapshot(dataDir);
    for (const spec of ['.', '..', 'mine@..', 'mine@.', '.mine']) {
      await expect(removeBundle(registry, spec)).rejects.toMatchObject({ code: 'bad_plugin_spec', exit: 2 });
    }
    expect(snapshot(dataDir)).toEqual(before);
  });

  it('refuses a manifest id of `..`, which would install the bundle outside the plugins directory', async () => {
    await expect(installBundle(registry, bundle('dots', { id: '..' }))).rejects.toMatchObject({ code: 'manifest_invalid', details: { pointer: '/id' } });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a config pin is read and admitted against its trusted_sha256, and found by its id, but serves no id through the registry', () => {
    const source = bundle('pinned', { id: 'pinned' });
    const manifest = join(source, 'gobstopper-plugin.json');
    const sha = sha256(readFileSync(manifest));
    const ref = registry.configuredRef({ manifest, trusted_sha256: sha });
    expect(ref).toMatchObject({ source: 'config', id: 'pinned', provides: { strategies: ['fixture_strategy'] } });
    expect(registry.admit(ref).manifestSha256).toBe(sha);
    expect(registry.findBundle('pinned', [{ manifest, trusted_sha256: sha }])).toEqual(ref);
    // It proposes for the strategy its table runs (resolveConfig says which); the ids it lists stay the built-in's.
    expect(registry.resolve('strategy', 'fixture_strategy')).toMatchObject({ source: 'builtin', id: 'fixture' });
    expect(registry.shadowing()).toEqual([]);
    const wrong = registry.configuredRef({ manifest, trusted_sha256: 'f'.repeat(64) });
    expect(() => registry.admit(wrong)).toThrow(/gobstopper-plugin\.json .* changed since it was pinned/);
  });

  it('a pinned manifest path that names no manifest is reported as that path', () => {
    const pinnedAt = (manifest: string) => () => registry.configuredRef({ manifest, trusted_sha256: 'a'.repeat(64) });
    const missing = join(dataDir, 'nowhere', 'gobstopper-plugin.json');
    expect(pinnedAt(missing)).toThrow(expect.objectContaining({ code: 'not_a_bundle', message: `the configured plugin manifest ${missing} does not exist` }));
    const source = bundle('pinned-dir', { id: 'pinned-dir' });
    expect(pinnedAt(source)).toThrow(
      expect.objectContaining({ message: `the configured plugin manifest ${source} is a directory; 'manifest' names the bundle's gobstopper-plugin.json itself` }),
    );
    // Looked up by id, an unreadable pin names nothing: the installed or built-in bundle is found instead.
    expect(registry.findBundle('fixture', [{ manifest: missing, trusted_sha256: 'a'.repeat(64) }])).toMatchObject({ source: 'builtin' });
  });
});

describe('tampering with an installed bundle', () => {
  let temp: TempDir;
  let registry: PluginRegistry;
  let host: PluginHost | undefined;

  beforeEach(async () => {
    temp = tempDir('gob-tamper-');
    registry = new PluginRegistry({ builtinDir: join(temp.path, 'none'), dataDir: join(temp.path, 'data'), gobstopperVersion: '0.1.0' });
    await installBundle(registry, fixturePluginBundle(join(temp.path, 'src'), 'misbehaving-strategy.mjs', { args: ['ok'] }));
  });
  afterEach(async () => {
    await host?.close();
    temp.cleanup();
  });

  const installedFile = (name: string) => join(temp.path, 'data', 'plugins', 'fixture', '1.0.0', name);
  const flipOneByte = (path: string, at = 10) => {
    const bytes = readFileSync(path);
    bytes[at] = bytes[at]! ^ 0x20;
    writeFileSync(path, bytes);
  };

  it('one changed byte in a code file stops every use, naming the file', async () => {
    host = new PluginHost({ registry });
    await (await host.strategy('fixture_strategy')).propose(proposeParams('fixture_strategy', syntheticItems(2)));
    flipOneByte(installedFile('misbehaving-strategy.mjs'));
    await expect(host.strategy('fixture_strategy')).rejects.toMatchObject({ code: 'file_hash_mismatch', details: expect.objectContaining({ file: 'misbehaving-strategy.mjs' }) });
    await expect(new PluginHost({ registry }).strategy('fixture_strategy')).rejects.toThrow(/misbehaving-strategy\.mjs does not match the sha256/);
  });

  it('one changed byte in the manifest breaks the pin, naming the manifest', async () => {
    flipOneByte(installedFile('gobstopper-plugin.json'), 40);
    host = new PluginHost({ registry });
    await expect(host.strategy('fixture_strategy')).rejects.toThrow(/gobstopper-plugin\.json/);
  });

  it('lists the strategies the winning bundles report in their handshakes', async () => {
    host = new PluginHost({ registry });
    expect(await host.listStrategies()).toEqual([
      { bundle: { id: 'fixture', version: '1.0.0', source: 'installed' }, strategy: { id: 'fixture_strategy', description: 'test fixture', kind: 'file' } },
    ]);
  });

  it('a plugin process that died is replaced by a fresh one on the next use', async () => {
    host = new PluginHost({ registry });
    const first = await host.strategy('fixture_strategy');
    await first.running.channel.kill('plugin_exited', 'was stopped by the test');
    const second = await host.strategy('fixture_strategy');
    expect(second.running.pid).not.toBe(first.running.pid);
    expect((await second.propose(proposeParams('fixture_strategy', syntheticItems(2)))).rationale).toBe('ok');
  });
});
