/**
 * What is wrong in tables the current command does not layer. A file is checked key by key when it
 * loads, but an unknown strategy in a preset, an untrusted command in a provider table, a floor
 * above a session table's trigger or strategy_params the table's strategy refuses (its schema, the
 * strategy ids it marks) would otherwise only surface when that table is used: `config` and
 * `presets` say so up front. Each table is checked as it is used on its own, over [policy]
 * (a provider table also under every preset and session table would report combinations nobody
 * runs). A session table is the exception: it is always layered over its session's provider table,
 * so a floor that only a [provider.<id>] trigger keeps below the trigger is fine for that provider's
 * sessions, and calling it refused would be wrong (plan runs it).
 */
import type { LoadedConfig } from '../config/load-config.js';
import { presetNames, resolveConfig, type ResolveOptions } from '../config/resolve-config.js';
import { tableName } from '../config/schema-messages.js';
import type { PluginRegistry } from '../plugins/registry/registry.js';
import { requirePolicyIds } from './policy-ids.js';
import { strategyParamsChecker, type StrategyParamsChecker } from './strategy-params-check.js';

function tableKeys(loaded: LoadedConfig, table: 'provider' | 'sessions'): string[] {
  const files = loaded.project ? [loaded.user, loaded.project] : [loaded.user];
  return [...new Set(files.flatMap((f) => Object.keys(f.data[table] ?? {})))].sort();
}

export interface TableUse {
  label: string;
  options: ResolveOptions;
}

/** Every table as used on its own over [policy]: what `config` checks, one use per table name. */
export function tableUses(loaded: LoadedConfig): TableUse[] {
  return [
    { label: '[policy]', options: {} },
    // Named as the file writes them: a preset "deep.work" is [presets."deep.work"], not a nested table.
    ...tableKeys(loaded, 'provider').map((provider) => ({ label: tableName(['provider', provider]), options: { provider } })),
    ...presetNames(loaded).map((preset) => ({ label: tableName(['presets', preset]), options: { preset } })),
    ...tableKeys(loaded, 'sessions').map((session_id) => ({ label: tableName(['sessions', session_id]), options: { session_id } })),
  ];
}

/**
 * One message per broken table use, each naming the table it comes from; empty when all resolve.
 * A caller that already checked the policy it resolved passes its checker, so the strategies that
 * check started are asked again, not started again; a checker passed in is the caller's to close.
 */
export async function configProblems(loaded: LoadedConfig, registry: PluginRegistry, given?: StrategyParamsChecker): Promise<string[]> {
  const providers = tableKeys(loaded, 'provider');
  const uses = tableUses(loaded);
  const problems: string[] = [];
  const seen = new Set<string>();
  const params = given ?? strategyParamsChecker();
  const problemOf = (options: ResolveOptions) => policyProblem(loaded, registry, params, options);
  try {
    for (const use of uses) {
      const message = await problemOf(use.options);
      // A broken [policy] breaks every table over it: said once.
      if (message === null || seen.has(message)) continue;
      // Only the sessions of providers whose table does not rescue it are refused.
      const rescuedBy: string[] = [];
      if (use.options.session_id !== undefined) for (const provider of providers) if ((await problemOf({ ...use.options, provider })) === null) rescuedBy.push(provider);
      seen.add(message);
      problems.push(`${use.label}${rescuedBy.length === 0 ? '' : ` (for a session of any provider but ${rescuedBy.join(', ')})`}: ${message}`);
    }
  } finally {
    if (!given) await params.close();
  }
  return problems;
}

/** What plan would refuse of the policy these tables resolve to, as plan says it; null when nothing. */
async function policyProblem(loaded: LoadedConfig, registry: PluginRegistry, params: StrategyParamsChecker, options: ResolveOptions): Promise<string | null> {
  try {
    const resolved = resolveConfig(loaded, options);
    requirePolicyIds(registry, resolved);
    await params.check(resolved);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
