/**
 * A resolved policy's strategy_params against the params_schema its strategy declares, the strategy
 * ids it marks included, checked when the policy is resolved rather than when the strategy runs:
 * otherwise a session below its trigger reports "no plan" (exit 0) for a configuration that is
 * broken, and a selector's mistyped candidate surfaces only inside a plan. The schema is in the
 * strategy's handshake, so its bundle is started; plan, apply and eval start it anyway.
 */
import { describeSource, type ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import { checkStrategyParams } from '../plugins/host/strategy-params.js';
import { startPinnedStrategy } from './pinned-strategy.js';
import { requirePolicyIds } from './policy-ids.js';
import { hasStrategyParams } from './strategy-params-check.js';
import type { Runtime } from './runtime.js';

type PolicyConfig = Pick<ResolvedConfig, 'values' | 'external' | 'sources'>;

/** What the params themselves got wrong, so the table that set them is named. */
const PARAMS_ERRORS = new Set(['invalid_strategy_params', 'unknown_strategy']);

/**
 * Everything a resolved policy must pass before a session is read under it: the ids it names, then
 * its strategy_params. plan, explain, tune and each session of a watch pass ask the same.
 */
export async function requireResolvedPolicy(runtime: Runtime, config: PolicyConfig): Promise<void> {
  requirePolicyIds(runtime.host.registry, config);
  await requireStrategyParams(runtime, config);
}

export async function requireStrategyParams(runtime: Runtime, config: PolicyConfig): Promise<void> {
  if (!hasStrategyParams(config)) return;
  const { strategy, strategy_params: params } = config.values;
  const external = config.external;
  const info =
    external?.kind === 'plugin'
      ? (await startPinnedStrategy(runtime, { manifest: external.manifest, trusted_sha256: external.trusted_sha256 }, strategy)).info
      : (await runtime.host.strategy(strategy)).info;
  try {
    // The ids a strategy id in the params may name: those host/propose can start.
    await checkStrategyParams(strategy, info.params_schema, params, runtime.host.registry.declared('strategy'));
  } catch (error) {
    const source = describeSource('strategy_params', config.sources.strategy_params);
    if (!(error instanceof GobstopperError) || !PARAMS_ERRORS.has(error.code) || source === null) throw error;
    throw new GobstopperError(error.code, `${error.message} (set by ${source})`, { exit: error.exit, details: error.details, cause: error });
  }
}
