/**
 * One eval: every requested strategy measured against one frozen source. The caller supplies
 * `runStrategy`, which proposes, admits, renders on a private copy and verifies (through the plugin
 * host); this module times each run, turns anything it throws into that strategy's error row, and
 * builds the result. One failing strategy never fails the eval.
 */
import type { EvalCommandResult, EvalRow, Finding, TokenBasis, Transcript } from '../../schemas/generated/types.js';
import { buildEvalResult, buildEvalRow, errorCode, evalBaseline, type EvalBaseline, type StrategyOutcome } from './rows.js';
import { Slots } from './slots.js';
import { errorMessage } from '../filesystem-message.js';

export interface EvalSessionInput {
  provider: string;
  session_id: string;
  source: Buffer;
  source_sha256: string;
  transcript: Transcript;
  /** Reported usage when the provider has it, else the item estimate. */
  context_tokens: number;
  token_basis: TokenBasis;
  effective_trigger_tokens: number;
  floor_tokens: number;
  keep_recent_tool_outputs: number;
  source_findings: readonly Finding[];
  strategies: readonly string[];
}

export type RunStrategy = (strategyId: string, baseline: EvalBaseline) => Promise<StrategyOutcome>;

export interface EvalSessionOptions {
  /** Strategies in flight at once (the runner keeps shared plugins in order). Default 1. */
  concurrency?: number;
  /** Told about each row as it is built, with how many are built out of how many. */
  onRow?: (row: EvalRow, built: number, total: number) => void;
  /**
   * Strategies to start only after every other one (rows keep the requested order either way).
   * A selector proposes by asking for the others' plans, so started first it holds the proposal
   * turn while the provider waits for its first render.
   */
  startLast?: ReadonlySet<string>;
}

/**
 * Runs every strategy and builds its row as soon as it finishes, so a rendered candidate is held
 * only until its row is built. Rows stay in the requested order whatever order they finish in.
 */
export async function evaluateSession(input: EvalSessionInput, runStrategy: RunStrategy, options: EvalSessionOptions = {}): Promise<EvalCommandResult> {
  const baseline = evalBaseline({
    source: input.source,
    transcript: input.transcript,
    context_tokens: input.context_tokens,
    token_basis: input.token_basis,
    keep_recent_tool_outputs: input.keep_recent_tool_outputs,
    source_findings: input.source_findings,
  });
  const slots = new Slots(options.concurrency ?? 1);
  let built = 0;
  const last = options.startLast ?? new Set<string>();
  const startOrder = [...input.strategies.filter((s) => !last.has(s)), ...input.strategies.filter((s) => last.has(s))];
  const running = new Map<string, Promise<EvalRow>>(
    startOrder.map((strategy) => [
      strategy,
      slots.run(async () => {
        const started = performance.now();
        let outcome: StrategyOutcome;
        try {
          outcome = await runStrategy(strategy, baseline);
        } catch (error) {
          outcome = { status: 'error', message: errorMessage(error), code: errorCode(error) };
        }
        outcome.duration_ms ??= performance.now() - started;
        const row = buildEvalRow(baseline, strategy, outcome);
        options.onRow?.(row, ++built, input.strategies.length);
        return row;
      }),
    ]),
  );
  const rows: EvalRow[] = await Promise.all(input.strategies.map((strategy) => running.get(strategy)!));
  return buildEvalResult(input, baseline, rows);
}
