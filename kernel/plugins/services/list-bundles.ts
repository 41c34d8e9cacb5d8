import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { PluginListCommandResult, PluginListEntry } from '../../../schemas/generated/types.js';
import { isGobstopperError } from '../../errors.js';
import { bundleLabel, pinTable, pinUse, providedIds, type BundleRef, type ConfigPin } from '../registry/bundle-ref.js';
import type { PluginRegistry } from '../registry/registry.js';

/**
 * `plugin list`: every bundle the config pins, built in or installed, each admitted now, and what
 * shadows what. The registry says which installed bundle shadows a built-in; a pin takes over only
 * the strategy its table runs, where that table applies (`pins`, layered as plan layers them).
 */
export function listBundles(registry: PluginRegistry, pins: ConfigPin[]): PluginListCommandResult {
  const configured = pinnedBundles(registry, pins);
  const bundles: PluginListEntry[] = configured.map((c) => c.entry);
  const shadowing = registry.shadowing();
  const { refs, broken } = registry.builtins();
  for (const ref of refs) {
    const byInstalled = shadowing.filter((s) => s.builtin.root === ref.root).map((s) => ({ kind: s.kind, provided_id: s.provided_id, by: bundleLabel(s.by), by_path: s.by.root }));
    bundles.push({ ...entry(registry, ref), shadowed: [...byInstalled, ...shadowedByPins(ref, configured)], superseded_by: null, pinned_in: [] });
  }
  for (const { root, error } of broken) {
    bundles.push(unreadableEntry(root, 'builtin', 'damaged', error, []));
  }
  const installed = registry.installed();
  for (const ref of installed) bundles.push({ ...entry(registry, ref), shadowed: shadowedByPins(ref, configured), superseded_by: supersededBy(registry, ref), pinned_in: [] });
  bundles.push(...unpinnedDirectories(registry, installed));
  return { builtin_dir: registry.builtinDir, installed_dir: registry.installedDir, bundles };
}

/**
 * The bundle that runs instead of `ref` for every id `ref` provides, when no id resolves to `ref`
 * itself (a newer version of it serving the same ids); null when `ref` serves one.
 */
function supersededBy(registry: PluginRegistry, ref: BundleRef): string | null {
  let instead: BundleRef | null = null;
  for (const kind of ['provider', 'strategy', 'scorer'] as const) {
    for (const providedId of providedIds(ref.provides, kind)) {
      let serving: BundleRef;
      try {
        serving = registry.resolve(kind, providedId);
      } catch {
        // An id two bundles claim resolves to neither; the list shows that conflict on its own.
        continue;
      }
      if (serving.root === ref.root) return null;
      instead ??= serving;
    }
  }
  return instead === null ? null : bundleLabel(instead);
}

/** The entry of a bundle whose manifest could not be read or admitted: only where it is and why. */
function unreadableEntry(root: string, source: PluginListEntry['source'], status: PluginListEntry['status'], error: { code: string; message: string }, pinned_in: PluginListEntry['pinned_in']): PluginListEntry {
  return {
    id: basename(root),
    version: '',
    source,
    path: root,
    status,
    provides: { providers: [], strategies: [], scorers: [] },
    capabilities: [],
    manifest_sha256: null,
    error: { code: error.code, message: error.message },
    shadowed: [],
    superseded_by: null,
    pinned_in,
  };
}

interface PinnedBundle {
  entry: PluginListEntry;
  /** null when the pin's manifest cannot be read, so what it provides is unknown. */
  ref: BundleRef | null;
}

/** One entry per pinned bundle (a manifest and hash), however many tables pin it. */
function pinnedBundles(registry: PluginRegistry, pins: ConfigPin[]): PinnedBundle[] {
  const groups = new Map<string, ConfigPin[]>();
  for (const pin of pins) {
    const key = `${resolve(pin.manifest)}\0${pin.trusted_sha256}`;
    groups.set(key, [...(groups.get(key) ?? []), pin]);
  }
  return [...groups.values()].map((group) => {
    const pinned_in = group.map(pinUse);
    let ref: BundleRef;
    try {
      ref = registry.configuredRef(group[0]!);
    } catch (error) {
      if (!isGobstopperError(error)) throw error;
      const root = dirname(resolve(group[0]!.manifest));
      return { ref: null, entry: unreadableEntry(root, 'config', existsSync(group[0]!.manifest) ? 'damaged' : 'missing', error, pinned_in) };
    }
    return { ref, entry: { ...entry(registry, ref), shadowed: [], superseded_by: null, pinned_in } };
  });
}

/** The strategies of `ref` a config pin proposes for instead, each where its table applies. */
function shadowedByPins(ref: BundleRef, configured: PinnedBundle[]): PluginListEntry['shadowed'] {
  const result: PluginListEntry['shadowed'] = [];
  for (const { ref: pinned, entry: pin } of configured) {
    if (pinned === null) continue;
    for (const use of pin.pinned_in) {
      // A pin that does not serve the strategy replaces nothing: plan refuses its table instead.
      if (use.strategy !== null && ref.provides.strategies.includes(use.strategy) && pinned.provides.strategies.includes(use.strategy)) {
        result.push({ kind: 'strategy', provided_id: use.strategy, by: bundleLabel(pinned), by_path: pinned.root, table: `${pinTable(use)} in ${use.path}` });
      }
    }
  }
  return result;
}

function entry(registry: PluginRegistry, ref: BundleRef): Omit<PluginListEntry, 'shadowed' | 'superseded_by' | 'pinned_in'> {
  const base = { id: ref.id, version: ref.version, source: ref.source, path: ref.root, provides: ref.provides, capabilities: ref.capabilities };
  if (ref.source === 'installed' && !existsSync(ref.root)) {
    return { ...base, status: 'missing', manifest_sha256: ref.pinnedSha256, error: { code: 'bundle_missing', message: `the files of ${bundleLabel(ref)} are gone from ${ref.root}` } };
  }
  try {
    const admitted = registry.admit(ref);
    return { ...base, status: 'ok', manifest_sha256: admitted.manifestSha256, error: null };
  } catch (error) {
    if (!isGobstopperError(error)) throw error;
    return { ...base, status: 'damaged', manifest_sha256: ref.pinnedSha256, error: { code: error.code, message: error.message } };
  }
}

/** Version directories in the data directory that no pin covers: never used, shown so they can be cleaned up. */
function unpinnedDirectories(registry: PluginRegistry, installed: BundleRef[]): PluginListEntry[] {
  if (!existsSync(registry.installedDir)) return [];
  const pinned = new Set(installed.map((r) => r.root));
  const result: PluginListEntry[] = [];
  for (const id of readdirSync(registry.installedDir).sort()) {
    const idDir = join(registry.installedDir, id);
    let versions: string[];
    try {
      versions = readdirSync(idDir).filter((v) => !v.startsWith('.')).sort();
    } catch {
      continue;
    }
    for (const version of versions) {
      const root = join(idDir, version);
      if (pinned.has(root)) continue;
      result.push({
        id,
        version,
        source: 'installed',
        path: root,
        status: 'unpinned',
        provides: { providers: [], strategies: [], scorers: [] },
        capabilities: [],
        manifest_sha256: null,
        error: { code: 'bundle_unpinned', message: `${root} has no pin and is not used; add it again with \`gobstopper plugin add\` or remove it` },
        shadowed: [],
        superseded_by: null,
        pinned_in: [],
      });
    }
  }
  return result;
}
