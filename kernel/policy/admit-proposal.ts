/**
 * What the host does with any proposal, whoever made it: refuse an empty one as "no plan", validate
 * every edit (a bad edit is an error), project the result itself, and keep only plans that save
 * enough to be worth a compaction cycle. host/propose (how `auto` compares strategies) uses this too.
 */
import type { Edit, PlanCommandNoPlan, PlanCommandPlan, ProposalSource, ResolvedPolicy, Transcript } from '../../schemas/generated/types.js';
import { admitEdits } from '../validate/edit-rules.js';
import { planRejected } from '../validate/plan-errors.js';
import { assertNoGrowth, prefixTokens, projectContextAfter } from '../validate/projection.js';
import { adaptiveRationaleSuffix } from './adaptive.js';
import { noPlan, withStrategyRationale } from './no-plan.js';

export interface Proposal {
  edits: readonly Edit[];
  /** The proposer's reasoning; ignored for userspace proposals, whose savings the host projects. */
  rationale: string;
  /** The id the plan is credited to. */
  strategy: string;
  source: ProposalSource;
  /** A selector's: the closest projection among the candidates it asked for, when the savings gate refused them all. */
  gated_context_tokens_after?: number | null;
  /** The plugin bundle that served the proposing strategy; none for a legacy command. */
  plugin_id?: string | undefined;
}

export interface AdmissionInput {
  transcript: Pick<Transcript, 'items' | 'session'>;
  policy: ResolvedPolicy;
  context_tokens_before: number;
  proposal: Proposal;
  active?: boolean;
}

export const USERSPACE_RATIONALE = 'validated userspace proposal; savings are projected';
export const MAX_RATIONALE_CHARS = 4096;
const MAX_PLAN_STRATEGY_CHARS = 128;

export function admitProposal(input: AdmissionInput): PlanCommandPlan | PlanCommandNoPlan {
  const { transcript, policy, proposal } = input;
  const before = input.context_tokens_before;
  const userspace = proposal.source !== 'strategy';
  if (proposal.edits.length === 0) {
    if (userspace) return noPlan('empty_external_edits', policy, before);
    // A selector left empty-handed by the gate is answered as its closest candidate would be.
    const gated = proposal.gated_context_tokens_after;
    const outcome = gated != null ? noPlan('minimum_savings_not_met', policy, before, gated) : noPlan('strategy_returned_no_plan', policy, before);
    return withStrategyRationale(outcome, proposal.rationale);
  }

  const admitted = admitEdits(proposal.edits, {
    items: transcript.items,
    keep_recent_tool_outputs: policy.keep_recent_tool_outputs,
    provider: transcript.session.provider,
  });
  const controlAt = userspace ? proposal.edits.findIndex((e) => e.op === 'provider_compact' || e.op === 'cache_edit') : -1;
  if (controlAt !== -1) {
    const op = proposal.edits[controlAt]!.op;
    throw planRejected('external_control_edit', `edit ${controlAt} is a ${op}`, { edit_index: controlAt });
  }

  const after = projectContextAfter({ items: transcript.items, edits: proposal.edits, context_tokens_before: before, floor_tokens: policy.floor_tokens, admitted });
  const rewritesTranscript = !proposal.edits.some((e) => e.op === 'provider_compact');
  if (userspace && after >= before) return noPlan('external_nonreducing_plan', policy, before, after);
  // A provider's own compaction lands at a floor only the provider knows; the savings gate judges it.
  if (rewritesTranscript) assertNoGrowth(before, after);
  const savings = Math.max(0, before - after);
  if (savings < policy.min_savings_tokens) return noPlan('minimum_savings_not_met', policy, before, after);

  const rationale = userspace ? USERSPACE_RATIONALE : proposal.rationale;
  // A selector's rationale quotes the chosen plan's, which already ends with the same suffix.
  const adaptive = adaptiveRationaleSuffix(policy.adaptive_reasons ?? []);
  const suffix = adaptive !== '' && rationale.endsWith(adaptive) ? '' : adaptive;
  const strategy = (userspace ? `preset:${proposal.strategy}` : proposal.strategy).slice(0, MAX_PLAN_STRATEGY_CHARS);
  return {
    status: 'plan',
    plan: {
      strategy,
      rationale: clip(rationale, MAX_RATIONALE_CHARS - suffix.length) + suffix,
      edits: [...proposal.edits],
      context_tokens_before: before,
      context_tokens_after: after,
    },
    prefix_tokens: prefixTokens(transcript.items, proposal.edits, before, admitted),
    est_savings_tokens: savings,
    effective_trigger_tokens: policy.effective_trigger_tokens,
    target_context_tokens: policy.floor_tokens,
    min_savings_tokens: policy.min_savings_tokens,
    proposal_source: proposal.source,
    policy,
    session: transcript.session,
    ...(input.active === undefined ? {} : { active: input.active }),
  };
}

function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, Math.max(0, max - 1)).join('') + '…';
}
