/**
 * Runs the built-in strategy definitions in-process the way the host would: host/score goes to the
 * heuristic scorer, host/propose runs the named strategy and admits its plan with the kernel's own
 * admission (validation, projection, savings gate). Tests use it to check plans against the real rules.
 */
import { CancellationToken } from 'vscode-jsonrpc/node';
import { admitProposal } from '../../../kernel/policy/admit-proposal.js';
import { GobstopperError } from '../../../kernel/errors.js';
import { definition as controlBundle } from '../../../plugins/strategies-control/src/definition.js';
import { definition as coreBundle } from '../../../plugins/strategies-core/src/definition.js';
import { scoreHeuristic } from '../../../plugins/scorer-heuristic/src/heuristic.js';
import type { HostContext, StrategyDefinition } from '../../../sdk/serve.js';
import type { HostProposeResult, StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';

export const BUNDLES = [coreBundle, controlBundle];

export const STRATEGIES: Map<string, StrategyDefinition> = new Map(BUNDLES.flatMap((b) => Object.entries(b.strategies ?? {})));

export async function runStrategy(id: string, params: StrategyProposeParams): Promise<StrategyProposeResult> {
  const strategy = STRATEGIES.get(id);
  if (!strategy) throw new Error(`unknown strategy ${id}`);
  const ctx: HostContext = {
    token: CancellationToken.None,
    score: async (candidates) => ({ scorer_id: 'heuristic', scores: scoreHeuristic(params.items, candidates) }),
    propose: (other) => hostPropose(other, params),
    readItems: () => Promise.reject(new Error('no read_content in tests')),
    log: () => undefined,
    progress: () => undefined,
  };
  return strategy.propose({ ...params, strategy_id: id }, ctx);
}

export async function hostPropose(id: string, params: StrategyProposeParams): Promise<HostProposeResult> {
  if (!STRATEGIES.has(id)) return { status: 'error', reason_code: 'unknown_strategy', message: `unknown strategy '${id}'` };
  const result = await runStrategy(id, params);
  try {
    const admitted = admitProposal({
      transcript: { items: params.items, session: params.session },
      policy: params.policy,
      context_tokens_before: params.context_tokens,
      proposal: { edits: result.edits, rationale: result.rationale, strategy: result.strategy ?? id, source: 'strategy' },
    });
    if (admitted.status !== 'plan') return { status: 'no_plan', reason_code: admitted.reason_code };
    return { status: 'plan', plan: admitted.plan, prefix_tokens: admitted.prefix_tokens };
  } catch (error) {
    if (error instanceof GobstopperError) return { status: 'error', reason_code: error.code, message: error.message };
    throw error;
  }
}
