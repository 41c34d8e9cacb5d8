/**
 * What a config file still says about bundles just removed: a strategy or scorer id one of them
 * served, or a pin into its installed copy. Removal is not refused for it (the config may be about
 * to change too), but the next plan of such a table fails or runs another bundle, so it is said.
 */
import { resolve, sep } from 'node:path';
import type { PolicyPatch } from '../../schemas/generated/types.js';
import type { LoadedConfig } from '../config/load-config.js';
import { tableName } from '../config/schema-messages.js';
import { isGobstopperError } from '../errors.js';
import { bundleLabel, providedIds, type BundleRef } from '../plugins/registry/bundle-ref.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';

/** One warning per config key that names a removed bundle; `registry` shows what is left after removal. */
export function staleConfigReferences(loaded: LoadedConfig, removed: BundleRef[], registry: PluginRegistry): string[] {
  if (removed.length === 0) return [];
  const warnings: string[] = [];
  for (const file of loaded.project ? [loaded.user, loaded.project] : [loaded.user]) {
    for (const { segments, patch } of tablesOf(file.data)) {
      const where = `in ${tableName(segments)} of ${file.path}`;
      // A table's own pin proposes for its strategy: that id is not looked up among installed bundles.
      if (patch.strategy !== undefined && patch.plugin === undefined) {
        const warning = idWarning(registry, removed, 'strategy', patch.strategy, where);
        if (warning) warnings.push(warning);
      }
      if (patch.scorer !== undefined) {
        const warning = idWarning(registry, removed, 'scorer', patch.scorer, where);
        if (warning) warnings.push(warning);
      }
      const pinnedInto = patch.plugin && removed.find((ref) => isInside(patch.plugin!.manifest, ref.root));
      if (pinnedInto) {
        warnings.push(`plugin ${where} pins ${patch.plugin!.manifest}, the installed copy of the removed ${bundleLabel(pinnedInto)}; plan refuses that table until it pins a bundle that exists`);
      }
    }
  }
  return warnings;
}

function tablesOf(data: LoadedConfig['user']['data']): Array<{ segments: string[]; patch: PolicyPatch }> {
  return [
    ...(data.policy ? [{ segments: ['policy'], patch: data.policy }] : []),
    ...Object.entries((data.provider ?? {}) as Record<string, PolicyPatch>).map(([id, patch]) => ({ segments: ['provider', id], patch })),
    ...Object.entries(data.presets ?? {}).map(([name, patch]) => ({ segments: ['presets', name], patch })),
    ...Object.entries(data.sessions ?? {}).map(([id, patch]) => ({ segments: ['sessions', id], patch })),
  ];
}

/**
 * Said when a removed bundle served the id and no other version of it still does: either nothing
 * serves it now (plan refuses the table) or another bundle does (plan runs that one instead).
 */
function idWarning(registry: PluginRegistry, removed: BundleRef[], kind: 'strategy' | 'scorer', id: string, where: string): string | null {
  const was = removed.find((ref) => providedIds(ref.provides, kind).includes(id));
  if (!was) return null;
  const named = `${kind} = ${JSON.stringify(id)} ${where} was served by the removed ${bundleLabel(was)}`;
  let now: BundleRef;
  try {
    now = registry.resolve(kind, id);
  } catch (error) {
    if (!isGobstopperError(error)) throw error;
    if (error.code !== 'plugin_not_found') return `${named}; ${error.message}`;
    return `${named}; nothing serves it now, so plan refuses that table until it names another ${kind}`;
  }
  return now.id === was.id ? null : `${named}; ${bundleLabel(now)} serves it now`;
}

function isInside(manifest: string, root: string): boolean {
  return resolve(manifest).startsWith(resolve(root) + sep);
}
