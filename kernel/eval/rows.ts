/**
 * Eval rows: one strategy's outcome on one session turned into the numbers people compare, and the
 * choice of the best valid rewrite. Pure: the caller has already run the strategy, rendered the
 * candidate on a private copy and verified it.
 */
import { createHash } from 'node:crypto';
import type { CompactionPlan, EvalCommandResult, EvalRow, Finding, TokenBasis, Transcript, TranscriptItem } from '../../schemas/generated/types.js';
import { extractProbes, scoreProbes, tailStartLine, type ProbeSet } from './probes.js';
import { cachePreservationScore, editOps, elidedLineCount, isControlOp, prefixTokens, rewritesFile } from './plan-metrics.js';
import { verifyDelta } from './verify-delta.js';

export const MAX_ROW_FINDINGS = 32;
const MAX_ERROR_CHARS = 512;

/** A rendered candidate: the bytes of the private copy after the plan, and what verify said of it. */
export interface RenderedCandidate {
  bytes: Buffer;
  findings: readonly Finding[];
}

export type StrategyOutcome =
  | { status: 'plan'; plan: CompactionPlan; candidate: RenderedCandidate | null; duration_ms?: number }
  | { status: 'no_plan'; reason_code: string; rationale?: string | null; duration_ms?: number }
  | { status: 'error'; message: string; code?: string | null; plan?: CompactionPlan | null; duration_ms?: number };

/** What every row of one eval shares: the frozen source and the one probe set. */
export interface EvalBaseline {
  items: readonly TranscriptItem[];
  /** The host's context count (reported usage, else the item estimate). */
  context_tokens: number;
  token_basis: TokenBasis;
  probes: ProbeSet;
  tail_start_line: number | null;
  source_findings: readonly Finding[];
}

export interface EvalBaselineInput {
  source: Buffer;
  transcript: Transcript;
  context_tokens: number;
  token_basis: TokenBasis;
  keep_recent_tool_outputs: number;
  source_findings: readonly Finding[];
}

/** The probes are sampled on first need (the first rendered row), not before any strategy runs. */
export function evalBaseline(input: EvalBaselineInput): EvalBaseline {
  let probes: ProbeSet | undefined;
  return {
    items: input.transcript.items,
    context_tokens: input.context_tokens,
    token_basis: input.token_basis,
    get probes() {
      return (probes ??= extractProbes(input.source, input.transcript.items));
    },
    tail_start_line: tailStartLine(input.transcript.items, input.keep_recent_tool_outputs),
    source_findings: input.source_findings,
  };
}

/** Error text for rows: one line, bounded. Callers pass messages that carry codes and paths, not content. */
export function rowError(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim() || 'unknown error';
  return line.length > MAX_ERROR_CHARS ? line.slice(0, MAX_ERROR_CHARS - 1) + '…' : line;
}

const ERROR_CODE = /^[a-z0-9_]{1,64}$/;

/**
 * The stable code of what a strategy's run threw (gobstopper's errors and plugin failures carry one;
 * Node's errno codes are lowercased), so scripts can tell a timeout from a damaged bundle without
 * parsing the message. Null for anything else.
 */
export function errorCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  const lower = code.toLowerCase();
  return ERROR_CODE.test(lower) ? lower : null;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

function emptyRow(strategy: string, before: number): EvalRow {
  return {
    strategy,
    status: 'no_plan',
    reason_code: null,
    rationale: null,
    edit_ops: [],
    elided_records: 0,
    execution_state: 'not_run',
    context_tokens_before: before,
    context_tokens_after: before,
    est_reclaimed: 0,
    reduction_pct: 0,
    probe_score: null,
    tail_intact: null,
    prefix_tokens: 0,
    prefix_ratio: 0,
    score: null,
    verify_errors: 0,
    verify_warnings: 0,
    new_verify_errors: 0,
    preexisting_verify_errors: 0,
    findings: [],
    result_sha256: null,
    duration_ms: 0,
    error: null,
    error_code: null,
    best: false,
  };
}

/** Strategies that propose the same rewrite share one rendered candidate; it is hashed once. */
const candidateHashes = new WeakMap<Buffer, string>();

function candidateSha256(bytes: Buffer): string {
  let sha = candidateHashes.get(bytes);
  if (sha === undefined) {
    sha = createHash('sha256').update(bytes).digest('hex');
    candidateHashes.set(bytes, sha);
  }
  return sha;
}

export function buildEvalRow(baseline: EvalBaseline, strategy: string, outcome: StrategyOutcome): EvalRow {
  const row = emptyRow(strategy, baseline.context_tokens);
  row.duration_ms = Math.max(0, Math.round(outcome.duration_ms ?? 0));
  if (outcome.status === 'no_plan') {
    row.reason_code = outcome.reason_code;
    // The code alone says nothing of why: a strategy of another provider, no stale outputs, no
    // editor configured. `plan` prints the strategy's words; eval keeps them too. The rationale
    // field stays the plan's, so it still tells a row with a plan from one without.
    const said = outcome.rationale?.replace(/\s+/g, ' ').trim();
    if (said) row.no_plan_rationale = said.length > 4096 ? `${said.slice(0, 4095)}…` : said;
    // A no-plan row took no apply time on a copy; its duration is the proposal's only.
    return row;
  }
  if (outcome.status === 'error') {
    row.status = 'error';
    row.execution_state = 'failed';
    row.error = rowError(outcome.message);
    row.error_code = outcome.code ?? null;
    if (outcome.plan) fillPlan(row, baseline, outcome.plan);
    return row;
  }
  const { plan, candidate } = outcome;
  row.status = 'plan';
  fillPlan(row, baseline, plan);
  if (rewritesFile(plan) && !candidate) {
    row.status = 'error';
    row.execution_state = 'failed';
    row.error = 'the rewrite plan was not rendered';
    return row;
  }
  if (candidate) {
    row.execution_state = 'rendered';
    row.result_sha256 = candidateSha256(candidate.bytes);
    const score = scoreProbes(baseline.probes, candidate.bytes, baseline.tail_start_line);
    row.probe_score = score;
    row.tail_intact = score.tail_intact;
    const delta = verifyDelta(baseline.source_findings, candidate.findings);
    row.verify_errors = delta.errors;
    row.verify_warnings = delta.warnings;
    row.new_verify_errors = delta.newErrors;
    row.preexisting_verify_errors = delta.preexistingErrors;
    row.findings = delta.marked.slice(0, MAX_ROW_FINDINGS).map(({ finding, preexisting }) => ({
      severity: finding.severity,
      code: finding.code,
      line_index: finding.line_index ?? null,
      preexisting,
    }));
  } else {
    // Provider controls (and API-layer cache edits) change nothing a file copy could show.
    row.execution_state = 'provider_only';
  }
  return row;
}

function fillPlan(row: EvalRow, baseline: EvalBaseline, plan: CompactionPlan): void {
  const before = plan.context_tokens_before;
  const after = plan.context_tokens_after;
  row.rationale = plan.rationale.length > 4096 ? plan.rationale.slice(0, 4096) : plan.rationale;
  if (plan.strategy !== row.strategy) row.credited_strategy = plan.strategy;
  row.edit_ops = editOps(plan);
  row.elided_records = elidedLineCount(plan);
  row.context_tokens_before = before;
  row.context_tokens_after = after;
  row.est_reclaimed = Math.max(0, before - after);
  row.reduction_pct = before > 0 ? round2(Math.min(100, (row.est_reclaimed / before) * 100)) : 0;
  row.prefix_tokens = prefixTokens(plan, baseline.items);
  row.prefix_ratio = row.prefix_tokens / Math.max(1, before);
  row.score = cachePreservationScore(row.est_reclaimed, row.prefix_tokens, before);
}

/** Whether the row's numbers come from a plan (an error row keeps the plan it failed to render); only a plan sets a rationale. */
export const planned = (row: EvalRow): boolean => row.rationale !== null;

/**
 * A row the best-row choice may pick: a plan, no error, no new verify error, the protected tail kept,
 * a pure file rewrite. A rewrite that loses probes of the recent tail broke the policy's one promise
 * about it; reclaiming more that way is not a better compaction, however high it scores.
 */
export function isRankable(row: EvalRow): boolean {
  if (row.status !== 'plan' || row.error !== null || row.execution_state !== 'rendered') return false;
  if (row.new_verify_errors > 0 || row.tail_intact === false) return false;
  return !row.edit_ops.some(isControlOp);
}

/**
 * Marks the best row by cache-preservation score among rankable rows. Strictly greater wins, so a
 * tie goes to the earlier row, except that a selector's row (auto picking middle's plan) yields to
 * the row of the strategy it credits: the credit belongs to the strategy that made the plan. The
 * starting mark is below zero so a zero-score rewrite still wins. Returns the best row's index, or -1.
 */
export function markBestRow(rows: EvalRow[]): number {
  let best = -1;
  let bestScore = -1;
  rows.forEach((row, i) => {
    row.best = false;
    if (!isRankable(row)) return;
    const score = row.score ?? 0;
    const credited = best >= 0 && score === bestScore && rows[best]!.credited_strategy === row.strategy;
    if (score > bestScore || credited) {
      best = i;
      bestScore = score;
    }
  });
  if (best >= 0) rows[best]!.best = true;
  return best;
}

export interface EvalResultInput {
  provider: string;
  session_id: string;
  source_sha256: string;
  effective_trigger_tokens: number;
  floor_tokens: number;
  keep_recent_tool_outputs: number;
}

/**
 * With no probe in the protected tail, every scored row's tail_intact is true with nothing checked:
 * the table shows no verdict, and this says why beside the JSON's vacuous true.
 */
function tailWarnings(baseline: EvalBaseline, rows: readonly EvalRow[]): string[] {
  if (!rows.some((r) => r.probe_score)) return [];
  const start = baseline.tail_start_line;
  if (start !== null && baseline.probes.probes.some((p) => p.line_index >= start)) return [];
  const where = start === null ? '' : ` (line ${start + 1} on)`;
  return [`no probe was sampled in the protected tail${where}, so the tail check is vacuous: tail_intact is true with nothing in the tail to lose`];
}

/** The `eval --json` result: rows in the order given, the best one marked. */
export function buildEvalResult(input: EvalResultInput, baseline: EvalBaseline, rows: EvalRow[]): EvalCommandResult {
  const best = markBestRow(rows);
  return {
    provider: input.provider,
    session_id: input.session_id,
    source_sha256: input.source_sha256,
    token_basis: baseline.token_basis,
    context_tokens: baseline.context_tokens,
    effective_trigger_tokens: input.effective_trigger_tokens,
    floor_tokens: input.floor_tokens,
    keep_recent_tool_outputs: input.keep_recent_tool_outputs,
    tail_start_line: baseline.tail_start_line,
    probes_total: baseline.probes.probes.length,
    rows,
    best_strategy: best >= 0 ? rows[best]!.strategy : null,
    warnings: tailWarnings(baseline, rows),
  };
}
