/**
 * The strategy and scorer a resolved policy names must exist before anything runs: otherwise a
 * typo would only surface when that strategy ran, and a session below its trigger would report
 * "no plan" for a policy that can never plan.
 */
import type { ResolvedConfig } from '../config/resolve-config.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';

export function requirePolicyIds(registry: PluginRegistry, config: Pick<ResolvedConfig, 'values' | 'external'>): void {
  // A configured command or plugin proposes instead of a strategy bundle; the id is only its name.
  if (!config.external) registry.requireKnown('strategy', config.values.strategy);
  if (config.values.scorer) registry.requireKnown('scorer', config.values.scorer);
}
