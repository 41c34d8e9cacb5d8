/**
 * What is wrong in tables the current command does not layer. A file is checked key by key when it
 * loads, but an unknown strategy in a preset, an untrusted command in a provider table or a floor
 * above a session table's trigger would otherwise only surface when that table is used: `config`
 * and `presets` say so up front. Each table is checked as it is used on its own, over [policy]
 * (a provider table also under every preset and session table would report combinations nobody
 * runs).
 */
import type { LoadedConfig } from '../config/load-config.js';
import { presetNames, resolveConfig, type ResolveOptions } from '../config/resolve-config.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';
import { requirePolicyIds } from './policy-ids.js';

function tableKeys(loaded: LoadedConfig, table: 'provider' | 'sessions'): string[] {
  const files = loaded.project ? [loaded.user, loaded.project] : [loaded.user];
  return [...new Set(files.flatMap((f) => Object.keys(f.data[table] ?? {})))].sort();
}

/** One message per broken table use, each naming the table it comes from; empty when all resolve. */
export function configProblems(loaded: LoadedConfig, registry: PluginRegistry): string[] {
  const uses: Array<{ label: string; options: ResolveOptions }> = [
    { label: '[policy]', options: {} },
    ...tableKeys(loaded, 'provider').map((provider) => ({ label: `[provider.${provider}]`, options: { provider } })),
    ...presetNames(loaded).map((preset) => ({ label: `[presets.${preset}]`, options: { preset } })),
    ...tableKeys(loaded, 'sessions').map((session_id) => ({ label: `[sessions."${session_id}"]`, options: { session_id } })),
  ];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const use of uses) {
    try {
      requirePolicyIds(registry, resolveConfig(loaded, use.options));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // A broken [policy] breaks every table over it: said once.
      if (seen.has(message)) continue;
      seen.add(message);
      problems.push(`${use.label}: ${message}`);
    }
  }
  return problems;
}
