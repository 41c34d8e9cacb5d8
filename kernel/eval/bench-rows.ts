/**
 * Bench rows: the eval rows of one session flattened to the CSV's shape, plus failure rows for
 * sessions or strategies that could not be measured. A failure row leaves empty every number it did not measure.
 */
import type { BenchFailure, BenchRow, EvalCommandResult } from '../../schemas/generated/types.js';
import { errorCode, planned, rowError } from './rows.js';

export function benchRowsFromEval(result: EvalCommandResult, path: string): BenchRow[] {
  return result.rows.map((row) => {
    const rendered = row.probe_score !== null;
    const failed = row.status === 'error';
    // A provider control rewrites nothing: how much it would reclaim is the provider's to say, so
    // its row carries no after, reduction or score for the aggregates to count. A failed strategy
    // has projections only if it got as far as a plan, and its copy was never verified: the eval
    // row's placeholders (after = before, zeros) must not read as measurements.
    const measured = row.execution_state !== 'provider_only' && !(failed && !planned(row));
    const verified = !failed;
    return {
      provider: result.provider,
      session: result.session_id,
      path,
      strategy: row.strategy,
      status: row.status,
      reason_code: row.reason_code,
      context_before: row.context_tokens_before,
      context_after: measured ? row.context_tokens_after : null,
      est_reclaimed: measured ? row.est_reclaimed : null,
      reduction_pct: measured ? row.reduction_pct : null,
      prefix_tokens: measured ? row.prefix_tokens : null,
      prefix_ratio: measured ? row.prefix_ratio : null,
      score: measured ? row.score : null,
      verify_errors: verified ? row.verify_errors : null,
      verify_warnings: verified ? row.verify_warnings : null,
      new_verify_errors: verified ? row.new_verify_errors : null,
      probes_total: row.probe_score?.probes_total ?? null,
      probes_recalled: row.probe_score?.probes_recalled ?? null,
      recall: row.probe_score?.recall ?? null,
      // With no probe in the protected tail there is nothing to find intact (eval shows "-" too).
      tail_intact: (row.probe_score?.tail_probes_total ?? 0) > 0 ? row.tail_intact : null,
      duration_ms: row.duration_ms,
      execution_state: row.execution_state,
      token_basis: result.token_basis,
      source_sha256: result.source_sha256,
      result_sha256: row.result_sha256,
      retention_complete: rendered ? row.probe_score!.probes_recalled === row.probe_score!.probes_total : null,
      // A session with no probes has a recall of 1 by definition, which measures nothing.
      recall_available: rendered && (row.probe_score?.probes_total ?? 0) > 0,
      retention_basis: 'literal_presence',
      best: row.best,
      failure: failed ? 'strategy_evaluation_failed' : null,
      error: row.error,
      error_code: row.error_code ?? null,
      // Which plan the row measured when it is not the strategy's own (a selector's pick, a pinned
      // plugin's preset:<id>), so bench says what eval says.
      credited_strategy: row.credited_strategy ?? null,
      // Eval's words for why nothing was proposed, as it kept them: the code alone does not say.
      no_plan_rationale: row.no_plan_rationale ?? null,
    };
  });
}

/** A row for a session (strategy null) or a strategy that produced no measurement at all. */
export function benchFailureRow(provider: string, session: string, path: string, failure: BenchFailure, message: string, strategy: string | null = null, code: string | null = null): BenchRow {
  return {
    provider,
    session,
    path,
    strategy,
    status: strategy === null ? null : 'error',
    reason_code: null,
    context_before: null,
    context_after: null,
    est_reclaimed: null,
    reduction_pct: null,
    prefix_tokens: null,
    prefix_ratio: null,
    score: null,
    verify_errors: null,
    verify_warnings: null,
    new_verify_errors: null,
    probes_total: null,
    probes_recalled: null,
    recall: null,
    tail_intact: null,
    duration_ms: null,
    execution_state: null,
    token_basis: null,
    source_sha256: null,
    result_sha256: null,
    retention_complete: null,
    recall_available: false,
    retention_basis: 'literal_presence',
    best: false,
    failure,
    error: rowError(message),
    error_code: code === null ? null : errorCode({ code }),
    credited_strategy: null,
    no_plan_rationale: null,
  };
}
