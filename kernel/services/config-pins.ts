/**
 * The bundles config files pin (`plugin = {manifest, trusted_sha256}`), each with the table that
 * pins it and the strategy it runs there: a pin is the proposer for that table's strategy, so that
 * is what it takes over from installed and built-in bundles, and only where the table applies.
 */
import type { PluginRef } from '../../schemas/generated/types.js';
import type { LoadedConfig } from '../config/load-config.js';
import { policyTables } from '../config/policy-tables.js';
import { filesOf, resolveConfig, type ResolveOptions } from '../config/resolve-config.js';
import { tableName } from '../config/schema-messages.js';
import type { ConfigPin } from '../plugins/registry/bundle-ref.js';
import { pinnedStrategy } from './pinned-strategy.js';

export function configPins(loaded: LoadedConfig): ConfigPin[] {
  const pins: ConfigPin[] = [];
  for (const file of filesOf(loaded)) {
    for (const { segments, options, patch } of policyTables(file)) {
      if (patch.plugin) pins.push({ ...patch.plugin, path: file.path, table: tableName(segments), strategy: strategyRun(loaded, options, patch.plugin) });
    }
  }
  return pins;
}

/** The table layered as plan layers it on its own (over [policy]); the strategy its pin proposes for. */
function strategyRun(loaded: LoadedConfig, options: ResolveOptions, plugin: PluginRef): string | null {
  try {
    const resolved = resolveConfig(loaded, options);
    return resolved.external?.kind === 'plugin' && resolved.external.manifest === plugin.manifest ? pinnedStrategy(resolved) : null;
  } catch {
    // The table's own problem is reported by config and by the commands that use it.
    return null;
  }
}
