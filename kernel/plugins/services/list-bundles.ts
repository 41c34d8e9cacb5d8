import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PluginListCommandResult, PluginListEntry } from '../../../schemas/generated/types.js';
import { isGobstopperError } from '../../errors.js';
import { bundleLabel, providedIds, type BundleRef } from '../registry/bundle-ref.js';
import type { PluginRegistry } from '../registry/registry.js';

/** `plugin list`: every built-in and installed bundle, each admitted now, and what shadows what. */
export function listBundles(registry: PluginRegistry): PluginListCommandResult {
  const bundles: PluginListEntry[] = [];
  const shadowing = registry.shadowing();
  const { refs, broken } = registry.builtins();
  for (const ref of refs) {
    const shadowed = shadowing.filter((s) => s.builtin.root === ref.root).map((s) => ({ kind: s.kind, provided_id: s.provided_id, by: bundleLabel(s.by) }));
    bundles.push({ ...entry(registry, ref), shadowed, superseded_by: null });
  }
  for (const { root, error } of broken) {
    bundles.push({
      id: root.split('/').pop() ?? root,
      version: '',
      source: 'builtin',
      path: root,
      status: 'damaged',
      provides: { providers: [], strategies: [], scorers: [] },
      capabilities: [],
      manifest_sha256: null,
      error: { code: error.code, message: error.message },
      shadowed: [],
      superseded_by: null,
    });
  }
  const installed = registry.installed();
  for (const ref of installed) bundles.push({ ...entry(registry, ref), shadowed: [], superseded_by: supersededBy(registry, ref) });
  bundles.push(...unpinnedDirectories(registry, installed));
  return { builtin_dir: registry.builtinDir, installed_dir: registry.installedDir, bundles };
}

/**
 * The bundle that runs instead of `ref` for every id `ref` provides, when no id resolves to `ref`
 * itself (a newer version of it serving the same ids, or a config pin); null when `ref` serves one.
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

function entry(registry: PluginRegistry, ref: BundleRef): Omit<PluginListEntry, 'shadowed' | 'superseded_by'> {
  const base = { id: ref.id, version: ref.version, source: ref.source as 'builtin' | 'installed', path: ref.root, provides: ref.provides, capabilities: ref.capabilities };
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
      });
    }
  }
  return result;
}
