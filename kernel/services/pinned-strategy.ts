/** The bundle a config's `plugin` key pins, started (or reused) for the strategy a policy names. */
import type { PluginRef, StrategyInfo } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import type { RunningBundle } from '../plugins/host/running-bundle.js';
import { PluginRegistry } from '../plugins/registry/registry.js';
import type { Runtime } from './runtime.js';

export async function startPinnedStrategy(runtime: Runtime, plugin: PluginRef, strategyId: string): Promise<{ running: RunningBundle; info: StrategyInfo }> {
  const registry = new PluginRegistry({ env: runtime.env, pinned: [plugin] });
  const ref = registry.configured()[0];
  if (!ref) throw new GobstopperError('plugin_unavailable', `the configured plugin ${plugin.manifest} could not be loaded`);
  const running = await runtime.host.start(ref);
  const info = running.handshake.strategies?.find((s) => s.id === strategyId);
  if (!info) throw new GobstopperError('unknown_strategy', `the configured plugin ${ref.id} does not serve strategy ${strategyId}`, { exit: 2 });
  return { running, info };
}
