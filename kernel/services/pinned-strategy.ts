/** What a config's `plugin` key pins: the strategy it takes over, and its bundle started for it. */
import type { PluginRef, StrategyInfo } from '../../schemas/generated/types.js';
import type { ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import type { RunningBundle } from '../plugins/host/running-bundle.js';
import type { Runtime } from './runtime.js';

/**
 * The strategy a layered policy runs from its pinned bundle, or null: the pin of the last table
 * that sets a proposer runs the policy's strategy, whichever table named it. It takes over that id
 * only, and only for policies layered over that table; every other id is the registry's.
 */
export function pinnedStrategy(config: Pick<ResolvedConfig, 'values' | 'external'>): string | null {
  return config.external?.kind === 'plugin' ? config.values.strategy : null;
}

/**
 * A pinned bundle that does not serve the policy's strategy: found in its manifest before anything
 * starts (a config error, exit 1) or, for a manifest that listed it, missing from its handshake.
 */
export function pinDoesNotServe(ref: { id: string }, strategyId: string, exit: 1 | 2): GobstopperError {
  return new GobstopperError('unknown_strategy', `the configured plugin ${ref.id} does not serve strategy ${strategyId}`, { exit });
}

/** The pinned bundle started (or reused) for the strategy the policy names. */
export async function startPinnedStrategy(runtime: Runtime, plugin: PluginRef, strategyId: string): Promise<{ running: RunningBundle; info: StrategyInfo }> {
  const ref = runtime.host.registry.configuredRef(plugin);
  const running = await runtime.host.start(ref);
  const info = running.handshake.strategies?.find((s) => s.id === strategyId);
  if (!info) throw pinDoesNotServe(ref, strategyId, 2);
  return { running, info };
}
