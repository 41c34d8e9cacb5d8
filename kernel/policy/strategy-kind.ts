/**
 * A strategy's declared kind is what the tool tells people about it (eval's rows, `plugins`) and
 * what the host relies on when it offers items to file strategies: a plan must be of that kind.
 * A file strategy rewrites a copy; a control strategy only asks the provider or API layer; a
 * selector returns either, being another strategy's plan.
 */
import { GobstopperError } from '../errors.js';
import type * as T from '../../schemas/generated/types.js';

const CONTROL_OPS: ReadonlySet<string> = new Set(['provider_compact', 'cache_edit']);

export function checkEditsFitKind(strategyId: string, pluginId: string, kind: T.StrategyInfo['kind'], edits: readonly T.Edit[]): void {
  if (kind === 'selector') return;
  const misfit = edits.find((e) => CONTROL_OPS.has(e.op) !== (kind === 'control'));
  if (misfit === undefined) return;
  const allowed = kind === 'control' ? 'provider_compact or cache_edit' : 'file edits (elide, inject_digest)';
  throw new GobstopperError('invalid_strategy_kind', `strategy ${strategyId} (plugin ${pluginId}) is declared a ${kind} strategy but proposed a ${misfit.op} edit; a ${kind} strategy proposes ${allowed} only`, {
    details: { strategy: strategyId, plugin_id: pluginId, kind, op: misfit.op },
  });
}
