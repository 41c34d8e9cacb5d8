/**
 * Keys the original tool's configuration has that gobstopper accepts but does not act on (they steer
 * its watch mode and cohort rollout): an existing file still loads, and `config` says what is ignored
 * rather than pretending the settings apply.
 */
import type { LoadedConfig } from './load-config.js';
import { policyTables } from './load-config.js';
import { tableName } from './schema-messages.js';

export const INERT_POLICY_KEYS = ['auto_apply_store', 'auto_apply_inplace', 'auto_compact_closed', 'acp_timeout_secs'] as const;

/** Each inert key or table set in the loaded files, as `key in [table] of path`. */
export function inertSettings(loaded: LoadedConfig): string[] {
  const found: string[] = [];
  for (const file of loaded.project ? [loaded.user, loaded.project] : [loaded.user]) {
    if (!file.loaded) continue;
    for (const { segments, patch } of policyTables(file.data)) {
      for (const key of INERT_POLICY_KEYS) if (patch[key] !== undefined) found.push(`${key} in ${tableName(segments)} of ${file.path}`);
    }
    if (file.data.rollout !== undefined) found.push(`[rollout] of ${file.path}`);
  }
  return found;
}
