/**
 * The keys each table of a config file takes, so that a misspelt key is answered with the one
 * probably meant: "unknown key 'triger_tokens' in [policy] (did you mean 'trigger_tokens'?)".
 */
import type { DiscoveryConfig, PluginRef, PolicyPatch, RolloutTable } from '../../schemas/generated/types.js';
import { nearestName } from '../text/edit-distance.js';

/** Every key of T, as the generated type has them: a key the schema gains or loses fails the type check here. */
function keysOf<T>(keys: Record<keyof Required<T>, true>): string[] {
  return Object.keys(keys);
}

const POLICY_KEYS = keysOf<PolicyPatch>({
  strategy: true,
  trigger_tokens: true,
  floor_tokens: true,
  min_savings_tokens: true,
  keep_recent_tool_outputs: true,
  keep_score_threshold: true,
  adaptive: true,
  quota_pressure: true,
  min_interval_secs: true,
  apply_hold_secs: true,
  block_tokens: true,
  keep_recent_turns: true,
  result_max_bytes: true,
  command: true,
  trusted_legacy_command: true,
  plugin: true,
  scorer: true,
  strategy_params: true,
  auto_apply_store: true,
  auto_apply_inplace: true,
  auto_compact_closed: true,
  acp_timeout_secs: true,
});
const PLUGIN_KEYS = keysOf<PluginRef>({ manifest: true, trusted_sha256: true });
const DISCOVERY_KEYS = keysOf<DiscoveryConfig>({ max_age_secs: true });
const ROLLOUT_KEYS = keysOf<RolloutTable>({ claude_code: true, codex: true, devin: true });

/** Tables keyed by a name the user chose, whose every entry is a policy table. */
const NAMED_POLICY_TABLES = new Set(['provider', 'presets', 'sessions']);

function isPolicyTable(segments: readonly string[]): boolean {
  return (segments.length === 1 && segments[0] === 'policy') || (segments.length === 2 && NAMED_POLICY_TABLES.has(segments[0]!));
}

/** The keys the table at `segments` takes, or null where the table is not one of those above. */
function keysOfTable(segments: readonly string[]): string[] | null {
  if (isPolicyTable(segments)) return POLICY_KEYS;
  if (segments[segments.length - 1] === 'plugin' && isPolicyTable(segments.slice(0, -1))) return PLUGIN_KEYS;
  if (segments.length === 1 && segments[0] === 'discovery') return DISCOVERY_KEYS;
  if (segments.length === 1 && segments[0] === 'rollout') return ROLLOUT_KEYS;
  return null;
}

/**
 * The key of that table an unknown one probably meant: a near spelling, the same words joined by
 * '-' instead of '_', or a flag's name for its key (`trigger` for trigger_tokens) when only one key
 * starts with it.
 */
export function nearestTableKey(segments: readonly string[], unknown: string): string | null {
  const keys = keysOfTable(segments);
  if (keys === null) return null;
  const typed = unknown.toLowerCase().replace(/-/g, '_');
  const extended = keys.filter((k) => k.startsWith(`${typed}_`));
  if (extended.length === 1) return extended[0]!;
  return nearestName(typed, keys);
}
