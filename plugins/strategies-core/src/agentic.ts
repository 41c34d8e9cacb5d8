/**
 * `agentic`: the plan comes from an editor, a strategy the user configured by id in
 * `strategy_params.editor` (served by an installed or built-in bundle; a trusted command proposes
 * as a preset of its own, with no strategy in between). The host runs and validates the editor's
 * proposal; this strategy only forwards it and
 * credits it. Without an editor there is no plan: falling back to a rubric would hide the missing
 * configuration behind a plan the user did not ask for.
 */
import type { HostProposeResult, StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { invalidInput } from '../../../sdk/serve.js';
import { belowTrigger, belowTriggerResult, noPlan, STRATEGY_ID_FORMAT, strategyParams } from '../../../sdk/strategy/plan.js';

export const AGENTIC_PARAMS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    editor: {
      description: 'Id of the strategy that proposes the edits, served by an installed or built-in plugin bundle (not agentic itself, nor a selector such as auto, which may not ask for other strategies in turn).',
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]{1,128}$',
      format: STRATEGY_ID_FORMAT,
      // Refused where the config is checked, not found only once a plan asks the editor.
      not: { enum: ['agentic', 'auto'] },
    },
  },
};

export type ProposeFn = (strategyId: string) => Promise<HostProposeResult>;

export async function proposeAgentic(params: StrategyProposeParams, propose: ProposeFn): Promise<StrategyProposeResult> {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const editor = strategyParams(params).editor;
  if (typeof editor !== 'string' || editor === '') {
    return noPlan('no editor configured; set strategy_params.editor to the id of a strategy an installed or built-in plugin bundle serves (a trusted command is used as a preset of its own: --preset <name>)');
  }
  if (editor === params.strategy_id) throw invalidInput(`agentic editor '${editor}' cannot be the agentic strategy itself`);

  const answer = await propose(editor);
  if (answer.status === 'error') throw invalidInput(`agentic editor '${editor}' failed: ${answer.message ?? answer.reason_code ?? 'no reason given'}`);
  if (answer.status !== 'plan' || !answer.plan || answer.plan.edits.length === 0) {
    // An empty proposal is the editor deferring.
    return noPlan(`editor '${editor}' deferred (${answer.reason_code ?? 'no edits'})`);
  }
  const control = answer.plan.edits.find((e) => e.op === 'provider_compact' || e.op === 'cache_edit');
  if (control) throw invalidInput(`agentic editor '${editor}' proposed a ${control.op} edit; editors may only elide and add a state card`);
  return {
    edits: answer.plan.edits,
    rationale: `editor '${editor}' proposed ${answer.plan.edits.length} edits; projected context ${answer.plan.context_tokens_after} (floor ${params.policy.floor_tokens})`,
    context_tokens_after: answer.plan.context_tokens_after,
  };
}
