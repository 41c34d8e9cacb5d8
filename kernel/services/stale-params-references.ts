/**
 * Strategy ids inside strategy_params (a selector's candidates, an editor) that bundles just removed
 * served. Which params are ids only the strategy knows, by marking them in its params_schema, so the
 * check `config` runs over every table is run again against what is left installed, and each id it
 * refuses that a removed bundle served is said like the other stale keys. Everything else that check
 * finds is the table's own problem, which `config` reports.
 */
import type { LoadedConfig } from '../config/load-config.js';
import { resolveConfig, type ResolvedConfig } from '../config/resolve-config.js';
import { isGobstopperError } from '../errors.js';
import type { UnknownStrategyId } from '../plugins/host/strategy-params.js';
import { bundleLabel, providedIds, type BundleRef } from '../plugins/registry/bundle-ref.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';
import { tableUses } from './config-problems.js';
import { requirePolicyIds } from './policy-ids.js';
import { strategyParamsChecker } from './strategy-params-check.js';

/** One warning per strategy_params key naming a removed strategy; at most one more when a check could not run. */
export async function staleParamsReferences(loaded: LoadedConfig, removed: BundleRef[], registry: PluginRegistry): Promise<string[]> {
  const ids = new Set(removed.flatMap((ref) => providedIds(ref.provides, 'strategy')));
  if (ids.size === 0) return [];
  const warnings = new Set<string>();
  const unchecked: Array<{ label: string; reason: string }> = [];
  const params = strategyParamsChecker();
  try {
    for (const { label, options } of tableUses(loaded)) {
      let resolved: ResolvedConfig;
      try {
        resolved = resolveConfig(loaded, options);
        requirePolicyIds(registry, resolved);
      } catch {
        // A table naming a removed strategy itself is said by staleConfigReferences; any other is config's to report.
        continue;
      }
      // Params holding no removed id anywhere cannot name one: their strategy is not started for nothing.
      if (!holdsAny(resolved.values.strategy_params, ids)) continue;
      try {
        await params.check(resolved);
      } catch (error) {
        // The bundles are gone by now: nothing here may turn the removal into a failure.
        const verdict = judged(error, resolved, removed);
        if (verdict === 'unchecked') unchecked.push({ label, reason: error instanceof Error ? error.message : String(error) });
        else for (const warning of verdict) warnings.add(warning);
      }
    }
  } finally {
    await params.close().catch(() => undefined);
  }
  const first = unchecked[0];
  if (first) {
    const tables = unchecked.map((u) => u.label).join(', ');
    warnings.add(`the strategy_params of ${tables} could not be checked for strategy ids the removed bundles served: ${first.reason}`);
  }
  return [...warnings];
}

/**
 * What one failed check says about the removal: a warning for each id it refuses that a removed
 * bundle served, none for a problem of the params themselves, 'unchecked' when the strategy could
 * not be asked at all.
 */
function judged(error: unknown, resolved: ResolvedConfig, removed: BundleRef[]): string[] | 'unchecked' {
  if (!isGobstopperError(error)) return 'unchecked';
  if (error.code === 'invalid_strategy_params') return [];
  if (error.code !== 'unknown_strategy') return 'unchecked';
  const unknown = error.details?.unknown;
  if (!Array.isArray(unknown) || !unknown.every(isUnknownStrategyId)) return 'unchecked';
  // Only a table sets parameters; a flag or the default leaves none to check.
  const { table, path } = resolved.sources.strategy_params!;
  return unknown.flatMap(({ id, key, place }) => {
    const was = removed.find((ref) => providedIds(ref.provides, 'strategy').includes(id));
    // An id no bundle served before the removal either is the table's own problem, which config reports.
    if (!was) return [];
    // A weight per strategy holds the id as a member name: `key = id` would read as its value.
    const held = place === 'member_name' ? `the key ${JSON.stringify(id)} of ${key}` : `${key} = ${JSON.stringify(id)}`;
    return [
      `${held} in ${table} of ${path} (a strategy id for ${resolved.values.strategy}) was served by the removed ${bundleLabel(was)}; nothing serves it now, so plan refuses that table until it names another strategy there`,
    ];
  });
}

function isUnknownStrategyId(value: unknown): value is UnknownStrategyId {
  if (value === null || typeof value !== 'object') return false;
  const { id, key, place } = value as Record<string, unknown>;
  return typeof id === 'string' && typeof key === 'string' && (place === 'value' || place === 'member_name');
}

/** Whether an id is anywhere in the params: a string value, or a member name (a weight per strategy). */
function holdsAny(value: unknown, ids: ReadonlySet<string>): boolean {
  if (typeof value === 'string') return ids.has(value);
  if (value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && Object.keys(value).some((name) => ids.has(name))) return true;
  return Object.values(value).some((v) => holdsAny(v, ids));
}
