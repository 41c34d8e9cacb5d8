/** The built-in policy every configuration layer starts from (the original's defaults). */
import type { ResolvedPolicy } from '../../schemas/generated/types.js';

/**
 * The layered policy values before adaptive tuning: the resolved policy's fields (from its schema)
 * without what tuning derives, with `scorer` and `strategy_params` always present.
 */
export type PolicyValues = Omit<ResolvedPolicy, 'effective_trigger_tokens' | 'adaptive_reasons' | 'scorer' | 'strategy_params'> & {
  scorer: string | null;
  strategy_params: Record<string, unknown>;
};

export const DEFAULT_STRATEGY = 'auto';

export function defaultPolicy(): PolicyValues {
  return {
    strategy: DEFAULT_STRATEGY,
    trigger_tokens: 250_000,
    floor_tokens: 40_000,
    min_savings_tokens: 4_096,
    keep_recent_tool_outputs: 8,
    keep_score_threshold: null,
    min_interval_secs: 300,
    apply_hold_secs: 1_800,
    block_tokens: 0,
    keep_recent_turns: 3,
    result_max_bytes: 500,
    quota_pressure: 'normal',
    adaptive: false,
    scorer: null,
    strategy_params: {},
  };
}

/** Seven days: sessions older than this are not discovered unless asked for. */
export const DEFAULT_DISCOVERY_MAX_AGE_SECS = 7 * 24 * 3600;

/** The discovery window `[discovery] max_age_secs` sets: 0 means every session (null). */
export function discoveryWindow(maxAgeSecs: number): number | null {
  return maxAgeSecs === 0 ? null : maxAgeSecs;
}
