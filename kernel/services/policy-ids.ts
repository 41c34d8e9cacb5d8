/**
 * The strategy and scorer a resolved policy names must exist before anything runs: otherwise a
 * typo would only surface when that strategy ran, and a session below its trigger would report
 * "no plan" for a policy that can never plan.
 */
import { resolve } from 'node:path';
import { describeSource, type ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import { readManifest } from '../plugins/admission/manifest.js';
import { pinMismatch, PluginRegistry } from '../plugins/registry/registry.js';
import { pinDoesNotServe } from './pinned-strategy.js';

export function requirePolicyIds(registry: PluginRegistry, config: Pick<ResolvedConfig, 'values' | 'external' | 'sources'>): void {
  // A configured command or plugin proposes instead of a strategy bundle; the id is only its name.
  if (!config.external) requireKnown(registry, config, 'strategy', config.values.strategy);
  if (config.external?.kind === 'plugin') requirePinnedManifest(registry, config, config.external);
  if (config.values.scorer) requireKnown(registry, config, 'scorer', config.values.scorer);
}

/**
 * A pinned plugin's manifest is read (not hashed, nothing started) so a wrong path or a bundle that
 * does not serve the policy's strategy is refused before the trigger decides whether it would run.
 */
function requirePinnedManifest(registry: PluginRegistry, config: Pick<ResolvedConfig, 'values' | 'sources'>, plugin: { manifest: string; trusted_sha256: string }): void {
  const where = describeSource('plugin', config.sources.plugin);
  const fromConfig = (error: GobstopperError) => new GobstopperError(error.code, where ? `${error.message} (set by ${where})` : error.message, { exit: 1, details: error.details, cause: error });
  let ref;
  try {
    ref = registry.configuredRef(plugin);
  } catch (error) {
    throw error instanceof GobstopperError ? fromConfig(error) : error;
  }
  if (!ref.provides.strategies.includes(config.values.strategy)) {
    throw fromConfig(pinDoesNotServe(ref, config.values.strategy, 1));
  }
  // A pin that is not the manifest's hash can never run: said now, not once a session reaches the trigger.
  const { manifestSha256 } = readManifest(resolve(plugin.manifest), ref.root, registry.version);
  if (manifestSha256 !== plugin.trusted_sha256) throw fromConfig(pinMismatch(ref, plugin.trusted_sha256, manifestSha256));
}

/**
 * The policy's scorer, when no bundle serves it: refused in plan's words (the known ids, the table
 * that set it). `eval` runs every strategy whatever the policy's scorer, so the one row that asks
 * for scores meets it there, and says it as plan would have.
 */
export function requirePolicyScorer(registry: PluginRegistry, config: Pick<ResolvedConfig, 'sources'>, scorerId: string): void {
  requireKnown(registry, config, 'scorer', scorerId);
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
