import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import semver from 'semver';
import type { PluginRef } from '../../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../../errors.js';
import { admitBundle, type AdmittedBundle } from '../admission/admit.js';
import { readManifest } from '../admission/manifest.js';
import { AdmissionError, MANIFEST_FILE } from '../admission/rules.js';
import { meantNote } from '../../text/edit-distance.js';
import { gobstopperVersion } from '../package-root.js';
import { bundleLabel, providedIds, providesOf, type BundleRef, type ProvidedKind } from './bundle-ref.js';
import { builtinPluginsDir, gobstopperDataDir, installedPluginsDir, trustFilePath } from './locations.js';
import { TrustStore } from './trust-store.js';
import { shellWord } from '../../text/shell-word.js';

export interface RegistryOptions {
  env?: NodeJS.ProcessEnv;
  /** Overrides dist/plugins of the package (tests, alternative layouts). */
  builtinDir?: string;
  /** Overrides $XDG_DATA_HOME/gobstopper. */
  dataDir?: string;
  /** The version engines ranges are checked against; defaults to the running gobstopper. */
  gobstopperVersion?: string;
}

export interface BrokenBuiltin {
  root: string;
  error: AdmissionError;
}

export interface Shadowing {
  kind: ProvidedKind;
  provided_id: string;
  builtin: BundleRef;
  by: BundleRef;
}

/**
 * Every bundle gobstopper can use, and which one serves a provider, strategy or scorer id.
 * Installed bundles are known through their pins (so a damaged manifest cannot silently hand an
 * id back to a built-in); built-ins through their manifests. Nothing here runs plugin code.
 * A config pin (`plugin = {manifest, trusted_sha256}`) serves no id here: it is the proposer of
 * the strategy its table runs, where that table applies, which the layered policy says
 * (resolveConfig, pinnedStrategy), so plan and `plugin list` ask that, not the registry.
 */
export class PluginRegistry {
  readonly dataDir: string;
  readonly builtinDir: string;
  readonly installedDir: string;
  readonly trust: TrustStore;
  readonly version: string;
  private builtinCache: { refs: BundleRef[]; broken: BrokenBuiltin[] } | undefined;

  constructor(options: RegistryOptions = {}) {
    this.dataDir = options.dataDir ?? gobstopperDataDir(options.env ?? process.env);
    this.builtinDir = options.builtinDir ?? builtinPluginsDir();
    this.installedDir = installedPluginsDir(this.dataDir);
    this.trust = new TrustStore(trustFilePath(this.dataDir));
    this.version = options.gobstopperVersion ?? gobstopperVersion();
  }

  /** Built-in bundles (manifest read and schema-checked, files not yet hashed). */
  builtins(): { refs: BundleRef[]; broken: BrokenBuiltin[] } {
    if (this.builtinCache) return this.builtinCache;
    const refs: BundleRef[] = [];
    const broken: BrokenBuiltin[] = [];
    const names = existsSync(this.builtinDir) ? readdirSync(this.builtinDir).sort() : [];
    for (const name of names) {
      const root = join(this.builtinDir, name);
      if (!existsSync(join(root, MANIFEST_FILE))) continue;
      try {
        const { manifest } = readManifest(join(root, MANIFEST_FILE), root, this.version);
        refs.push({ source: 'builtin', root, id: manifest.id, version: manifest.version, provides: providesOf(manifest), capabilities: manifest.capabilities ?? [], pinnedSha256: null });
      } catch (error) {
        if (!(error instanceof AdmissionError)) throw error;
        broken.push({ root, error });
      }
    }
    return (this.builtinCache = { refs, broken });
  }

  /** Installed bundles, from their pins. */
  installed(): BundleRef[] {
    return this.trust.read().map((pin) => ({
      source: 'installed' as const,
      root: join(this.installedDir, pin.id, pin.version),
      id: pin.id,
      version: pin.version,
      provides: pin.provides,
      capabilities: pin.capabilities,
      pinnedSha256: pin.manifest_sha256,
    }));
  }

  /** The bundle one config pin names, its manifest read (not yet hashed); throws an AdmissionError when it cannot be read. */
  configuredRef(ref: PluginRef): BundleRef {
    requirePinnedManifestFile(ref.manifest);
    const root = resolve(ref.manifest, '..');
    const { manifest } = readManifest(resolve(ref.manifest), root, this.version);
    return { source: 'config', root, id: manifest.id, version: manifest.version, provides: providesOf(manifest), capabilities: manifest.capabilities ?? [], pinnedSha256: ref.trusted_sha256 };
  }

  /** The bundle serving `kind` `providedId`: installed bundles, then built-ins. */
  resolve(kind: ProvidedKind, providedId: string): BundleRef {
    const serving = (refs: BundleRef[]) => refs.filter((r) => providedIds(r.provides, kind).includes(providedId));
    const fromInstalled = pickOne(serving(this.installed()), kind, providedId);
    if (fromInstalled) return fromInstalled;
    const { refs, broken } = this.builtins();
    const fromBuiltin = pickOne(serving(refs), kind, providedId);
    if (fromBuiltin) return fromBuiltin;
    if (broken.length > 0) throw broken[0]!.error;
    throw new GobstopperError('plugin_not_found', `no plugin bundle provides ${kind} "${providedId}"; see \`gobstopper plugin list\``, {
      exit: 2,
      details: { kind, id: providedId },
    });
  }

  /** Every `kind` id some bundle declares, sorted; nothing is started. */
  declared(kind: ProvidedKind): string[] {
    const ids = new Set<string>();
    for (const ref of [...this.installed(), ...this.builtins().refs]) for (const id of providedIds(ref.provides, kind)) ids.add(id);
    return [...ids].sort();
  }

  /**
   * Refuses an id no bundle serves, as a usage error naming the known ones: a typo in a flag or a
   * config table is reported before any work, not when (or whether) that strategy or scorer runs.
   */
  requireKnown(kind: 'strategy' | 'scorer', providedId: string): void {
    try {
      this.resolve(kind, providedId);
    } catch (error) {
      if (!(error instanceof GobstopperError) || error.code !== 'plugin_not_found') throw error;
      // A scorer named where a strategy goes (or the other way round) is a common slip: say which it is.
      const other = kind === 'strategy' ? 'scorer' : 'strategy';
      const isOther = this.declared(other).includes(providedId);
      const otherHint = !isOther ? '' : kind === 'strategy' ? ` ('${providedId}' is a scorer: set scorer = "${providedId}" and use the scored strategy)` : ` ('${providedId}' is a strategy, not a scorer)`;
      const known = this.declared(kind);
      const meant = isOther ? '' : meantNote(providedId, known);
      throw usageError(`unknown_${kind}`, `unknown ${kind} '${providedId}'${meant}; known: ${known.join(', ') || 'none'}${otherHint}`, { kind, id: providedId });
    }
  }

  /**
   * A bundle by its own id (`id` or `id@version`): one of the config's `pins` first, as what plan
   * runs for its table, then installed, then built-in. A pin whose manifest cannot be read names no
   * id; `plugin list` says why.
   */
  findBundle(spec: string, pins: PluginRef[] = []): BundleRef {
    const at = spec.lastIndexOf('@');
    const id = at > 0 ? spec.slice(0, at) : spec;
    const version = at > 0 ? spec.slice(at + 1) : undefined;
    const match = (r: BundleRef) => r.id === id && (version === undefined || r.version === version);
    const pinned = pins.flatMap((pin) => readablePin(() => this.configuredRef(pin)));
    const configured = pinned.filter(match);
    if (configured.length > 0) return configured[0]!;
    const installed = newestFirst(this.installed().filter(match));
    if (installed.length > 0) return installed[0]!;
    const builtin = this.builtins().refs.filter(match);
    if (builtin.length > 0) return builtin[0]!;
    const hint = bundleHint(id, version, [...pinned, ...this.installed(), ...this.builtins().refs]);
    throw new GobstopperError('plugin_not_found', `no plugin bundle with id ${spec} is built in, installed or pinned in the config${hint}; see \`gobstopper plugin list\``, {
      exit: 2,
      details: { id: spec },
    });
  }

  /** Built-in ids that an installed bundle takes over. */
  shadowing(): Shadowing[] {
    const installed = newestFirst(this.installed());
    const result: Shadowing[] = [];
    for (const builtin of this.builtins().refs) {
      for (const kind of ['provider', 'strategy', 'scorer'] as const) {
        for (const providedId of providedIds(builtin.provides, kind)) {
          // The bundle resolve() would run: the newest installed version.
          const by = installed.find((r) => providedIds(r.provides, kind).includes(providedId));
          if (by) result.push({ kind, provided_id: providedId, builtin, by });
        }
      }
    }
    return result;
  }

  /**
   * Admits a bundle for use: every file hashed again (or, within one process, found unchanged by
   * stat since it was), the manifest compared with its pin. Called on every use, so a changed byte
   * anywhere in the bundle stops it with an error naming the file.
   */
  admit(ref: BundleRef): AdmittedBundle {
    const admitted = admitInstalled(ref, this.version);
    if (ref.pinnedSha256 !== null && admitted.manifestSha256 !== ref.pinnedSha256) throw pinMismatch(ref, ref.pinnedSha256, admitted.manifestSha256);
    if (admitted.manifest.id !== ref.id || admitted.manifest.version !== ref.version) {
      throw new GobstopperError('pin_mismatch', `plugin ${bundleLabel(ref)}: the bundle in ${ref.root} now says it is ${bundleLabel(admitted.manifest)}`, {
        details: { bundle: ref.root, file: MANIFEST_FILE },
      });
    }
    return admitted;
  }
}

/**
 * An installed copy is gobstopper's own: a file of it that changed was changed after `plugin add`,
 * and the fix is to install the bundle again, not to pin the change (a new pin would not match the
 * recorded manifest sha256 either).
 */
function admitInstalled(ref: BundleRef, version: string): AdmittedBundle {
  if (ref.source === 'config') return admitPinned(ref, version);
  if (ref.source !== 'installed') return admitBundle(ref.root, { gobstopperVersion: version });
  try {
    return admitBundle(ref.root, { gobstopperVersion: version, changedFileAdvice: '' });
  } catch (error) {
    if (!(error instanceof AdmissionError)) throw error;
    const label = bundleLabel(ref);
    const reinstall = `install it again (gobstopper plugin remove ${label}, then gobstopper plugin add <the bundle>)`;
    // A file that appeared in an installed copy was most likely written there by the plugin itself,
    // and reinstalling alone would only repeat that: say where such files belong.
    if (error.code === 'file_undeclared') {
      throw new AdmissionError(
        error.code,
        `${error.message}; it appeared in the copy plugin add installed, most likely written by the plugin while it ran: a plugin must not write into its bundle (keep caches and scratch files in a temporary directory); then ${reinstall}`,
        error.details,
      );
    }
    throw new AdmissionError(error.code, `${error.message}; this is the copy plugin add installed, changed since: ${reinstall}`, error.details);
  }
}

/**
 * A bundle a config pins by its manifest's hash: pinning a changed file again in `files` changes
 * that hash too, so the advice goes on to the config's trusted_sha256, or the next run would only
 * meet pin_mismatch.
 */
function admitPinned(ref: BundleRef, version: string): AdmittedBundle {
  try {
    return admitBundle(ref.root, { gobstopperVersion: version });
  } catch (error) {
    if (!(error instanceof AdmissionError) || error.code !== 'file_hash_mismatch') throw error;
    throw new AdmissionError(error.code, `${error.message}, then set the config's trusted_sha256 to the manifest_sha256 that gobstopper plugin check ${shellWord(ref.root)} prints`, error.details);
  }
}

function readablePin(read: () => BundleRef): BundleRef[] {
  try {
    return [read()];
  } catch (error) {
    if (error instanceof AdmissionError) return [];
    throw error;
  }
}

/** Among installed (or built-in) bundles serving one id: one plugin id only; its newest version. */
function pickOne(refs: BundleRef[], kind: ProvidedKind, providedId: string): BundleRef | undefined {
  if (refs.length === 0) return undefined;
  const ids = [...new Set(refs.map((r) => r.id))];
  if (ids.length > 1) {
    throw new GobstopperError(
      'plugin_ambiguous',
      `${kind} "${providedId}" is provided by more than one ${refs[0]!.source} bundle (${refs.map(bundleLabel).join(', ')}); remove all but one with \`gobstopper plugin remove\``,
      { details: { kind, id: providedId, bundles: refs.map(bundleLabel) } },
    );
  }
  return newestFirst(refs)[0];
}

function newestFirst(refs: BundleRef[]): BundleRef[] {
  return [...refs].sort((a, b) => semver.rcompare(a.version, b.version));
}

/**
 * A config's `manifest` names the manifest file itself: when that path is wrong, the message is about
 * that path, not about the directory above it lacking a bundle.
 */
function requirePinnedManifestFile(manifestPath: string): void {
  let stat;
  try {
    stat = statSync(manifestPath);
  } catch {
    throw new AdmissionError('not_a_bundle', `the configured plugin manifest ${manifestPath} does not exist`, { bundle: dirname(manifestPath), file: basename(manifestPath) });
  }
  if (stat.isDirectory()) {
    throw new AdmissionError('not_a_bundle', `the configured plugin manifest ${manifestPath} is a directory; 'manifest' names the bundle's ${MANIFEST_FILE} itself`, { bundle: manifestPath });
  }
  if (basename(manifestPath) !== MANIFEST_FILE) {
    throw new AdmissionError('not_a_bundle', `the configured plugin manifest ${manifestPath} is not a ${MANIFEST_FILE}; 'manifest' names that file of a bundle`, { bundle: dirname(manifestPath), file: basename(manifestPath) });
  }
}

/**
 * A bundle whose manifest no longer hashes to its pin: it changed since it was pinned. What mends it
 * depends on whose pin it is: an installed copy is installed again, a config pin is checked and set anew.
 */
export function pinMismatch(ref: Pick<BundleRef, 'id' | 'version' | 'root' | 'source'>, pinnedSha256: string, manifestSha256: string): GobstopperError {
  const mend =
    ref.source === 'config'
      ? `; if the change is yours, check the bundle (gobstopper plugin check ${shellWord(ref.root)}) and set trusted_sha256 to ${manifestSha256}`
      : ref.source === 'installed'
        ? `; install it again (gobstopper plugin remove ${bundleLabel(ref)}, then gobstopper plugin add <the bundle>)`
        : '';
  return new GobstopperError('pin_mismatch', `plugin ${bundleLabel(ref)}: ${MANIFEST_FILE} in ${ref.root} changed since it was pinned (pinned ${pinnedSha256}, now ${manifestSha256})${mend}`, {
    details: { bundle: ref.root, file: MANIFEST_FILE, pinned_sha256: pinnedSha256, manifest_sha256: manifestSha256 },
  });
}

/**
 * What a bundle id that names none was probably meant as: the versions there are of that id (a
 * version asked for that is not there), else the nearest id, as a mistyped strategy gets one.
 */
export function bundleHint(id: string, version: string | undefined, refs: readonly BundleRef[]): string {
  const versions = [...new Set(refs.filter((r) => r.id === id).map((r) => r.version))].sort();
  if (version !== undefined && versions.length > 0) return ` (${id} has ${versions.length === 1 ? 'version' : 'versions'} ${versions.join(', ')})`;
  return meantNote(id, new Set(refs.map((r) => r.id)));
}
