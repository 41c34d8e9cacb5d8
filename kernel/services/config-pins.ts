/**
 * The bundles config files pin (`plugin = {manifest, trusted_sha256}`), each with the table that
 * pins it and the strategy it runs there: a pin is the proposer for that table's strategy, so that
 * is what it takes over from installed and built-in bundles, and only where the table applies.
 */
import type { PluginRef, PolicyPatch } from '../../schemas/generated/types.js';
import type { LoadedConfig, LoadedConfigFile } from '../config/load-config.js';
import { resolveConfig, type ResolveOptions } from '../config/resolve-config.js';
import { tableName } from '../config/schema-messages.js';
import type { ConfigPin } from '../plugins/registry/bundle-ref.js';
import { pinnedStrategy } from './pinned-strategy.js';

export function configPins(loaded: LoadedConfig): ConfigPin[] {
  const pins: ConfigPin[] = [];
  for (const file of loaded.project ? [loaded.user, loaded.project] : [loaded.user]) {
    for (const { segments, options, plugin } of pinningTables(file)) {
      pins.push({ ...plugin, path: file.path, table: tableName(segments), strategy: strategyRun(loaded, options, plugin) });
    }
  }
  return pins;
}

function pinningTables(file: LoadedConfigFile): Array<{ segments: string[]; options: ResolveOptions; plugin: PluginRef }> {
  const { data } = file;
  const tables: Array<{ segments: string[]; options: ResolveOptions; plugin: PluginRef | undefined }> = [
    { segments: ['policy'], options: {}, plugin: data.policy?.plugin },
    ...Object.entries((data.provider ?? {}) as Record<string, PolicyPatch>).map(([provider, t]) => ({ segments: ['provider', provider], options: { provider }, plugin: t.plugin })),
    ...Object.entries(data.presets ?? {}).map(([preset, t]) => ({ segments: ['presets', preset], options: { preset }, plugin: t.plugin })),
    ...Object.entries(data.sessions ?? {}).map(([session_id, t]) => ({ segments: ['sessions', session_id], options: { session_id }, plugin: t.plugin })),
  ];
  return tables.filter((t): t is { segments: string[]; options: ResolveOptions; plugin: PluginRef } => t.plugin !== undefined);
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
