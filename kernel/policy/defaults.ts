/** The built-in policy every configuration layer starts from (the original's defaults). */
import type { QuotaPressure } from '../../schemas/generated/types.js';

export interface PolicyValues {
  strategy: string;
  trigger_tokens: number;
  floor_tokens: number;
  min_savings_tokens: number;
  keep_recent_tool_outputs: number;
  keep_score_threshold: number | null;
  min_interval_secs: number;
  apply_hold_secs: number;
  block_tokens: number;
  keep_recent_turns: number;
  result_max_bytes: number;
  quota_pressure: QuotaPressure;
  adaptive: boolean;
  scorer: string | null;
  strategy_params: Record<string, unknown>;
}

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
