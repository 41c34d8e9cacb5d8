/**
 * A watch pass checks each session's policy (its ids, its strategy_params against the strategy's
 * schema) before deciding anything; most sessions resolve to the same few policies, so each distinct
 * one is checked once per pass. A pass reads the config afresh, so nothing is kept across passes.
 */
import type { ResolvedConfig } from '../config/resolve-config.js';

type PolicyConfig = Pick<ResolvedConfig, 'values' | 'external' | 'sources'>;

/**
 * `check` run once per distinct policy, its answer (or refusal) shared by every later policy that is
 * the same. The sources are part of the key: a refusal names the table that set the value.
 *
 * The key keeps the order the tables wrote their keys in rather than sorting them: a params check
 * ends at the first error it meets, and with keys it does not know it meets them in the params'
 * own order, so `{ b = 1, a = 2 }` is refused naming b where `{ a = 2, b = 1 }` names a. Sharing one
 * refusal between them would name, for one table, another key than its own check names.
 */
export function policyVerdicts<T>(check: (config: PolicyConfig) => Promise<T>): (config: PolicyConfig) => Promise<T> {
  const verdicts = new Map<string, Promise<T>>();
  return (config) => {
    const key = JSON.stringify({ values: config.values, external: config.external ?? null, sources: config.sources });
    let verdict = verdicts.get(key);
    if (verdict === undefined) {
      verdict = check(config);
      verdicts.set(key, verdict);
    }
    return verdict;
  };
}
