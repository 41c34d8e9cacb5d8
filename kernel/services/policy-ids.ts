/**
 * The strategy and scorer a resolved policy names must exist before anything runs: otherwise a
 * typo would only surface when that strategy ran, and a session below its trigger would report
 * "no plan" for a policy that can never plan.
 */
import { describeSource, type ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';

export function requirePolicyIds(registry: PluginRegistry, config: Pick<ResolvedConfig, 'values' | 'external' | 'sources'>): void {
  // A configured command or plugin proposes instead of a strategy bundle; the id is only its name.
  if (!config.external) requireKnown(registry, config, 'strategy', config.values.strategy);
  if (config.values.scorer) requireKnown(registry, config, 'scorer', config.values.scorer);
}

/**
 * A typo on the command line is a usage error (exit 2); one in a config file is a broken
 * configuration (exit 1, as every other config error), and the message says which table holds it.
 */
function requireKnown(registry: PluginRegistry, config: Pick<ResolvedConfig, 'sources'>, kind: 'strategy' | 'scorer', id: string): void {
  try {
    registry.requireKnown(kind, id);
  } catch (error) {
    const source = config.sources[kind];
    if (!(error instanceof GobstopperError) || !source || source.layer === 'flag' || source.layer === 'default') throw error;
    throw new GobstopperError(error.code, `${error.message} (set by ${describeSource(kind, source)})`, { exit: 1, details: error.details, cause: error });
  }
}
