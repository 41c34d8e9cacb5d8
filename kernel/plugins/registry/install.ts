import { randomBytes } from 'node:crypto';
import { chmodSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PluginPin } from '../../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../../errors.js';
import { removeOnExit } from '../../exit-cleanup.js';
import { admitBundle, type AdmittedBundle } from '../admission/admit.js';
import { AdmissionError, MANIFEST_FILE } from '../admission/rules.js';
import { bundleLabel, providedIds, providesOf, type BundleRef, type ProvidedKind } from './bundle-ref.js';
import { aboutArchive, openBundleSource, type BundleSourceKind, type OpenedBundleSource } from './bundle-source.js';
import { withPluginsLock } from './plugins-lock.js';
import { bundleHint, type PluginRegistry } from './registry.js';

const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;

export interface InstallOutcome {
  bundle: AdmittedBundle;
  sourceKind: BundleSourceKind;
  /** True when exactly this bundle (same manifest sha256) was already installed and pinned. */
  alreadyInstalled: boolean;
  /** Built-in ids this bundle now serves instead of the built-in. */
  shadows: { kind: ProvidedKind; provided_id: string; builtin: string }[];
}

/**
 * `plugin add`: admit the bundle where it is, copy exactly its declared files into
 * `<data>/plugins/<id>/<version>/`, admit the copy, then pin its manifest sha256. Never replaces
 * an installed bundle of the same id@version with different content.
 */
export async function installBundle(registry: PluginRegistry, spec: string, cwd = process.cwd()): Promise<InstallOutcome> {
  const source = await openBundleSource(spec, cwd);
  try {
    const admitted = admitSource(source, registry);
    refuseBuiltinId(registry, admitted);
    return await withPluginsLock(registry.dataDir, () => placeAndPin(registry, admitted, source.kind));
  } finally {
    source.cleanup();
  }
}

function placeAndPin(registry: PluginRegistry, admitted: AdmittedBundle, sourceKind: BundleSourceKind): InstallOutcome {
  const { id, version } = admitted.manifest;
  refuseClaimedIds(registry, admitted);
  const target = join(registry.installedDir, id, version);
  const pin = registry.trust.find(id, version);
  if (pin && pin.manifest_sha256 !== admitted.manifestSha256) throw conflict(id, version, pin.manifest_sha256);
  let alreadyInstalled = false;
  let copied = false;
  if (existsSync(target)) {
    const existing = admitExisting(target, id, version, registry.version);
    if (existing.manifestSha256 !== admitted.manifestSha256) throw conflict(id, version, existing.manifestSha256);
    alreadyInstalled = pin !== undefined;
  } else {
    copyIntoPlace(admitted, target, registry.version);
    copied = true;
  }
  let installed: AdmittedBundle;
  try {
    installed = admitBundle(target, { gobstopperVersion: registry.version });
    if (installed.manifestSha256 !== admitted.manifestSha256) throw conflict(id, version, installed.manifestSha256);
    if (!alreadyInstalled) registry.trust.put(pinOf(installed));
  } catch (error) {
    // A copy without its pin is never used and only confuses `plugin list`: an add that failed
    // leaves nothing of itself behind.
    if (copied) rmSync(target, { recursive: true, force: true });
    throw error;
  }
  return { bundle: installed, sourceKind, alreadyInstalled, shadows: shadowsOf(registry, installed) };
}

/**
 * The copy already in the version directory. When it fails admission it is that copy, not the bundle
 * being added, that changed: the way out is to remove it, never to re-pin its files.
 */
function admitExisting(target: string, id: string, version: string, gobstopperVersion: string): AdmittedBundle {
  try {
    return admitBundle(target, { gobstopperVersion, changedFileAdvice: '' });
  } catch (error) {
    if (!(error instanceof AdmissionError)) throw error;
    throw new AdmissionError(error.code, `${error.message}; the copy of ${id}@${version} installed there is damaged: remove it with \`gobstopper plugin remove ${id}@${version}\`, then add the bundle again`, error.details);
  }
}

function admitSource(source: OpenedBundleSource, registry: PluginRegistry): AdmittedBundle {
  try {
    return admitBundle(source.dir, { gobstopperVersion: registry.version });
  } catch (error) {
    throw aboutArchive(source, error);
  }
}

/**
 * Errors, `plugin list`, `inspect`, `check` and `remove` name a bundle by its id@version: one that
 * took a built-in's id would pass for the built-in in each, and hide it from the commands that
 * take an id. Replacing a built-in's strategies takes only providing their ids.
 */
function refuseBuiltinId(registry: PluginRegistry, bundle: AdmittedBundle): void {
  const { id } = bundle.manifest;
  if (!registry.builtins().refs.some((ref) => ref.id === id)) return;
  throw new GobstopperError(
    'plugin_id_builtin',
    `bundle id ${id} is taken by a built-in bundle; give yours an id of its own in ${MANIFEST_FILE} (whatever its id, it replaces the built-in for each strategy, provider or scorer id it provides)`,
    { details: { id } },
  );
}

/**
 * Another installed bundle already serving one of this bundle's ids would leave that id with two
 * owners and no way to choose: refused here, instead of failing every later command that meets it.
 * Other versions of the same bundle may serve the same ids (the newest wins). What is installed
 * refuses it, not the command line, so it exits 1 as an id@version installed with other content does.
 */
function refuseClaimedIds(registry: PluginRegistry, bundle: AdmittedBundle): void {
  const provides = providesOf(bundle.manifest);
  // Read the pins once: each call of installed() reads and checks the trust file again.
  const others = registry.installed().filter((ref) => ref.id !== bundle.manifest.id);
  for (const kind of ['provider', 'strategy', 'scorer'] as const) {
    for (const providedId of providedIds(provides, kind)) {
      const owner = others.find((ref) => providedIds(ref.provides, kind).includes(providedId));
      if (owner) {
        throw new GobstopperError('plugin_id_conflict', `${kind} "${providedId}" is already provided by the installed bundle ${owner.id}@${owner.version}; remove it first with \`gobstopper plugin remove ${owner.id}\``, {
          details: { kind, id: providedId, installed: `${owner.id}@${owner.version}` },
        });
      }
    }
  }
}

/**
 * Why `plugin add` would refuse an admitted bundle as things are installed now (a built-in's id, an
 * id another installed bundle serves, its id@version installed with other content), or null:
 * `plugin check` says it before anyone tries.
 */
export function addRefusal(registry: PluginRegistry, bundle: AdmittedBundle): GobstopperError | null {
  try {
    refuseBuiltinId(registry, bundle);
    refuseClaimedIds(registry, bundle);
    // An edited bundle checked again before its version was bumped: the case add meets most.
    const { id, version } = bundle.manifest;
    const pin = registry.trust.find(id, version);
    if (pin && pin.manifest_sha256 !== bundle.manifestSha256) throw conflict(id, version, pin.manifest_sha256);
    return null;
  } catch (error) {
    if (error instanceof GobstopperError) return error;
    throw error;
  }
}

function conflict(id: string, version: string, existingSha: string): GobstopperError {
  return new GobstopperError(
    'plugin_version_exists',
    `${id}@${version} is already installed with different content (manifest ${existingSha.slice(0, 12)}…); remove it first with \`gobstopper plugin remove ${id}@${version}\``,
    { details: { id, version, manifest_sha256: existingSha } },
  );
}

function pinOf(bundle: AdmittedBundle): PluginPin {
  return {
    id: bundle.manifest.id,
    version: bundle.manifest.version,
    manifest_sha256: bundle.manifestSha256,
    provides: providesOf(bundle.manifest),
    capabilities: bundle.manifest.capabilities ?? [],
    pinned_at: new Date().toISOString(),
  };
}

const STAGING_PREFIX = '.incoming-';

/**
 * Staging directories an add killed midway left beside the version directories: never used, hidden
 * from `plugin list`, and keeping `plugins/<id>/` after its last version is removed. Under the
 * plugins lock no other add is copying, so every one found is dead.
 */
function removeDeadStaging(idDir: string): void {
  for (const name of readdirSync(idDir)) if (name.startsWith(STAGING_PREFIX)) rmSync(join(idDir, name), { recursive: true, force: true });
}

/** Copies into a staging directory beside the target, admits it there, then renames it into place. */
function copyIntoPlace(bundle: AdmittedBundle, target: string, version: string): void {
  const parent = dirname(target);
  // Private like the rest of gobstopper's data directory, which this may be the first to create.
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  removeDeadStaging(parent);
  const staging = join(parent, `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`);
  const forget = removeOnExit(staging);
  mkdirSync(staging, { mode: 0o755 });
  try {
    for (const file of [...bundle.files.map((f) => f.path), MANIFEST_FILE]) {
      const destination = join(staging, file);
      mkdirSync(dirname(destination), { recursive: true, mode: 0o755 });
      copyFileSync(join(bundle.root, file), destination, constants.COPYFILE_EXCL);
      const executable = (lstatSync(join(bundle.root, file)).mode & 0o111) !== 0;
      chmodSync(destination, executable ? 0o755 : 0o644);
    }
    const copied = admitBundle(staging, { gobstopperVersion: version });
    if (copied.manifestSha256 !== bundle.manifestSha256) throw new GobstopperError('install_failed', `the copy of ${bundleLabel(bundle.manifest)} differs from its source`);
    renameSync(staging, target);
    forget();
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    forget();
    throw error;
  }
}

function shadowsOf(registry: PluginRegistry, bundle: AdmittedBundle): InstallOutcome['shadows'] {
  const provides = providesOf(bundle.manifest);
  const result: InstallOutcome['shadows'] = [];
  for (const builtin of registry.builtins().refs) {
    for (const kind of ['provider', 'strategy', 'scorer'] as const) {
      for (const providedId of providedIds(builtin.provides, kind)) {
        if (providedIds(provides, kind).includes(providedId)) result.push({ kind, provided_id: providedId, builtin: bundleLabel(builtin) });
      }
    }
  }
  return result;
}

export interface RemoveOutcome {
  removed: { id: string; version: string; path: string }[];
  /** The pins dropped, with what each version provided; a directory without a pin has none. */
  pins: BundleRef[];
}

/** `plugin remove <id>[@version]`: drops the pin first (so the bundle is unusable), then its files. */
export async function removeBundle(registry: PluginRegistry, spec: string): Promise<RemoveOutcome> {
  const at = spec.lastIndexOf('@');
  const id = at > 0 ? spec.slice(0, at) : spec;
  const version = at > 0 ? spec.slice(at + 1) : undefined;
  // `.` and `..` pass the pattern but name the plugins directory or the data directory above it.
  const valid = (part: string) => IDENTIFIER.test(part) && !part.startsWith('.');
  if (!valid(id) || (version !== undefined && !valid(version))) {
    throw usageError('bad_plugin_spec', `"${spec.slice(0, 200)}" is not a plugin id or id@version`);
  }
  if (versionsToRemove(registry, id, version).size === 0) {
    const builtin = registry.builtins().refs.find((r) => r.id === id);
    if (builtin) {
      throw usageError('plugin_builtin', `${id} is built in and cannot be removed; install a bundle that provides the same ids to replace it`);
    }
    throw usageError('plugin_not_installed', `no installed plugin ${spec}${bundleHint(id, version, registry.installed())}; see \`gobstopper plugin list\``);
  }
  return withPluginsLock(registry.dataDir, () => {
    // Again under the lock: what another add or remove changed meanwhile counts.
    const targets = versionsToRemove(registry, id, version);
    const pins = registry.installed().filter((ref) => ref.id === id && (version === undefined || ref.version === version));
    registry.trust.remove(id, version);
    const idDir = join(registry.installedDir, id);
    const removed = [...targets].sort().map((v) => {
      const path = join(idDir, v);
      rmSync(path, { recursive: true, force: true });
      return { id, version: v, path };
    });
    try {
      removeDeadStaging(idDir);
      if (readdirSync(idDir).length === 0) rmdirSync(idDir);
    } catch {
      // Another version keeps the directory, or it is gone already; nothing to tidy.
    }
    return { removed, pins };
  });
}

/** The versions of `id` (or just `version`) pinned or present on disk. */
function versionsToRemove(registry: PluginRegistry, id: string, version: string | undefined): Set<string> {
  const idDir = join(registry.installedDir, id);
  const versionsOnDisk = existsSync(idDir) ? readdirSync(idDir).filter((v) => !v.startsWith('.')) : [];
  const targets = new Set(versionsOnDisk.filter((v) => version === undefined || v === version));
  for (const p of registry.trust.read()) if (p.id === id && (version === undefined || p.version === version)) targets.add(p.version);
  return targets;
}

export type { BundleRef };
