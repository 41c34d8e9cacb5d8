/**
 * What a config file still says about bundles just removed: a strategy or scorer id one of them
 * served, or a pin into its installed copy. Removal is not refused for it (the config may be about
 * to change too), but the next plan of such a table fails or runs another bundle, so it is said.
 */
import { resolve, sep } from 'node:path';
import type { LoadedConfig } from '../config/load-config.js';
import { layeringsOf, policyTables, type PolicyTable } from '../config/policy-tables.js';
import { filesOf, resolveConfig } from '../config/resolve-config.js';
import { tableName } from '../config/schema-messages.js';
import { isGobstopperError } from '../errors.js';
import { bundleLabel, providedIds, type BundleRef } from '../plugins/registry/bundle-ref.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';

/** One warning per config key that names a removed bundle; `registry` shows what is left after removal. */
export function staleConfigReferences(loaded: LoadedConfig, removed: BundleRef[], registry: PluginRegistry): string[] {
  if (removed.length === 0) return [];
  const warnings: string[] = [];
  for (const file of filesOf(loaded)) {
    for (const table of policyTables(file)) {
      const { segments, patch } = table;
      const where = `in ${tableName(segments)} of ${file.path}`;
      for (const kind of ['strategy', 'scorer'] as const) {
        const id = patch[kind];
        if (id === undefined || !looksUp(loaded, table, kind, id)) continue;
        const warning = idWarning(registry, removed, kind, id, where);
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

/**
 * Whether a plan using `table` looks `id` up among installed and built-in bundles, as plan layers
 * the table: not when a later file's table of the same name sets another id, and not for a
 * strategy some layer's pin (or command) proposes for instead, whichever table pins it. A table
 * that does not resolve is refused by plan for its own reason, which config names.
 */
function looksUp(loaded: LoadedConfig, table: PolicyTable, kind: 'strategy' | 'scorer', id: string): boolean {
  return layeringsOf(loaded, table).some((options) => {
    let resolved;
    try {
      resolved = resolveConfig(loaded, options);
    } catch {
      return false;
    }
    return resolved.values[kind] === id && (kind === 'scorer' || resolved.external === null);
  });
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
