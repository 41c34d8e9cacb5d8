/**
 * The bundles config files pin (`plugin = {manifest, trusted_sha256}`), each with the table that
 * pins it and the strategy it runs there: a pin is the proposer for that table's strategy, so that
 * is what it takes over from installed and built-in bundles, and only where the table applies.
 */
import type { PluginRef } from '../../schemas/generated/types.js';
import { loadConfigOrProblem, type LoadedConfig } from '../config/load-config.js';
import { layeringsOf, policyTables } from '../config/policy-tables.js';
import { filesOf, resolveConfig, type ResolveOptions } from '../config/resolve-config.js';
import { tableName } from '../config/schema-messages.js';
import type { ConfigPin } from '../plugins/registry/bundle-ref.js';
import { pinnedStrategy } from './pinned-strategy.js';

/**
 * One use per table that pins a bundle, with the strategy plan proposes the pin for there; a preset
 * or session table also once per [provider.<id>] table that, layered below it, makes plan propose
 * the pin for another strategy (for that provider's sessions).
 */
export function configPins(loaded: LoadedConfig): ConfigPin[] {
  const pins: ConfigPin[] = [];
  for (const file of filesOf(loaded)) {
    for (const table of policyTables(file)) {
      const { segments, options, patch } = table;
      if (!patch.plugin) continue;
      const use = { ...patch.plugin, path: file.path, table: tableName(segments) };
      const own = strategyRun(loaded, options, patch.plugin);
      pins.push({ ...use, strategy: own });
      for (const layering of layeringsOf(loaded, table)) {
        const strategy = strategyRun(loaded, layering, patch.plugin);
        if (layering.provider && layering.provider !== options.provider && strategy !== own) pins.push({ ...use, strategy, provider: layering.provider });
      }
    }
  }
  return pins;
}

/** The table layered as plan layers it (`options`); the strategy its pin proposes for, null when it proposes for none. */
function strategyRun(loaded: LoadedConfig, options: ResolveOptions, plugin: PluginRef): string | null {
  try {
    const resolved = resolveConfig(loaded, options);
    return resolved.external?.kind === 'plugin' && resolved.external.manifest === plugin.manifest ? pinnedStrategy(resolved) : null;
  } catch {
    // The table's own problem is reported by config and by the commands that use it.
    return null;
  }
}

/**
 * The config's pins for `plugin check|inspect|list`, which look at bundles and need the config
 * only for what it pins (loadConfigOrProblem): a broken default config is thrown only where it
 * matters, from `pins()` (an id that may name a pin), and `problem` says why for a listing that
 * goes on without its pins.
 */
export async function pinsForPluginCommand(configPath: string | undefined): Promise<{ pins: () => ConfigPin[]; problem: string | null }> {
  const config = await loadConfigOrProblem(configPath);
  if ('problem' in config) {
    return {
      pins: () => {
        throw config.problem;
      },
      problem: config.problem.message,
    };
  }
  const pins = configPins(config.loaded);
  return { pins: () => pins, problem: null };
}
