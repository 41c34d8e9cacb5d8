/** Per-strategy aggregates over bench rows: how often a strategy plans, how much it reclaims, what it keeps. */
import type { BenchAggregate, BenchRow, ReductionQuartiles } from '../../schemas/generated/types.js';

/** Quantile by linear interpolation between order statistics (the common "type 7" definition). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new Error('quantile of an empty list');
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return tidy(sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo));
}

/**
 * Interpolating between two-decimal reductions leaves binary noise (29.435000000000002) that a
 * reader of the JSON or CSV would take for precision; six decimals keep every real digit.
 */
const tidy = (x: number) => Math.round(x * 1e6) / 1e6;

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  return quantile([...values].sort((a, b) => a - b), 0.5);
}

export function quartiles(values: readonly number[]): ReductionQuartiles | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return { min: s[0]!, q1: quantile(s, 0.25), median: quantile(s, 0.5), q3: quantile(s, 0.75), max: s[s.length - 1]! };
}

/** One aggregate per strategy, in the order strategies first appear. Whole-session failure rows (no strategy) are counted by the caller. */
export function aggregateBench(rows: readonly BenchRow[]): BenchAggregate[] {
  const byStrategy = new Map<string, BenchRow[]>();
  for (const row of rows) {
    if (row.strategy === null) continue;
    const list = byStrategy.get(row.strategy) ?? [];
    list.push(row);
    byStrategy.set(row.strategy, list);
  }
  return [...byStrategy].map(([strategy, list]) => {
    const planned = list.filter((r) => r.status === 'plan');
    const noPlan: Record<string, number> = {};
    for (const r of list) {
      if (r.status === 'no_plan') {
        const reason = r.reason_code ?? 'unknown';
        noPlan[reason] = (noPlan[reason] ?? 0) + 1;
      }
    }
    const recalls = list.filter((r) => r.recall !== null && r.recall_available).map((r) => r.recall!);
    return {
      strategy,
      // A session gives each strategy one row. Rows are counted, not ids: the same session file
      // copied into another project folder keeps its id and is measured as a session of its own.
      sessions: list.length,
      sessions_with_plan: planned.length,
      sessions_with_control: planned.filter((r) => r.execution_state === 'provider_only').length,
      sessions_failed: list.filter((r) => r.failure !== null).length,
      sessions_best: list.filter((r) => r.best).length,
      reduction_pct: quartiles(planned.filter((r) => r.reduction_pct !== null).map((r) => r.reduction_pct!)),
      median_recall: median(recalls),
      tail_intact_sessions: list.filter((r) => r.tail_intact === true).length,
      no_plan_by_reason: noPlan,
    };
  });
}

/** Sessions with a whole-session failure row (one each, counted as rows for the reason above). */
export function failedSessionCount(rows: readonly BenchRow[]): number {
  return rows.filter((r) => r.strategy === null && r.failure !== null).length;
}
