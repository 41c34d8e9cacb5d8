/**
 * The early strategy_params check (policy-params.ts) for commands that otherwise start no plugin:
 * config, presets, explain and policy-check. The plugin host is loaded only when there are
 * parameters to check, so the common case pays no module loading; orchestrators call policy-check
 * on every prompt.
 */
import type { ResolvedConfig } from '../config/resolve-config.js';
import type { Runtime } from './runtime.js';

type PolicyConfig = Pick<ResolvedConfig, 'values' | 'external' | 'sources'>;

/**
 * Whether the policy has parameters to check. Empty ones are left to the strategy's run, so a plan
 * with none configured starts nothing early; a command is given none.
 */
export function hasStrategyParams(config: PolicyConfig): boolean {
  return Object.keys(config.values.strategy_params).length > 0 && config.external?.kind !== 'legacy_command';
}

/** Starts the strategy to check its parameters, when there are any. */
export async function checkStrategyParamsEarly(config: PolicyConfig): Promise<void> {
  const checker = strategyParamsChecker();
  try {
    await checker.check(config);
  } finally {
    await checker.close();
  }
}

export interface StrategyParamsChecker {
  check(config: PolicyConfig): Promise<void>;
  close(): Promise<void>;
}

/**
 * The same check for many policies (config and presets check every table in the file): one
 * runtime, started at the first policy that has parameters, so each bundle starts once.
 */
export function strategyParamsChecker(): StrategyParamsChecker {
  let runtime: Runtime | null = null;
  return {
    async check(config) {
      if (!hasStrategyParams(config)) return;
      const [{ Runtime }, { requireStrategyParams }] = await Promise.all([import('./runtime.js'), import('./policy-params.js')]);
      runtime ??= new Runtime({});
      await requireStrategyParams(runtime, config);
    },
    async close() {
      await runtime?.close();
    },
  };
}
