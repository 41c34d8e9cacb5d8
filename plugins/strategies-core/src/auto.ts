/**
 * `auto`: a selector. Live sessions are never rewritten, so they go to the provider's own
 * compaction; idle sessions get the best validated file plan among the candidates, ranked by
 * savings discounted by how much of the cached prefix each keeps.
 */
import type { HostProposeResult, StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { hasValidToolUseIds } from '../../../sdk/strategy/candidates.js';
import { belowTrigger, belowTriggerResult, noPlan, STRATEGY_ID_FORMAT, strategyParams } from '../../../sdk/strategy/plan.js';
import { cachePreservationScore, scoreText } from '../../../sdk/strategy/cache-score.js';
import { prefixTokensOf } from '../../../sdk/strategy/prefix.js';

/** File strategies compared for an idle session, in tie-break order. `cliff` is a fixed rule, not a candidate. */
export const AUTO_CANDIDATES = ['cache_aware', 'scored', 'elide', 'compacted', 'dedupe', 'micro', 'middle', 'structured'] as const;
export const MAX_RATIONALE_CHARS = 4096;

export const AUTO_PARAMS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    candidates: {
      description: 'File strategies to compare for idle sessions, in tie-break order.',
      type: 'array',
      minItems: 1,
      maxItems: 32,
      uniqueItems: true,
      items: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$', format: STRATEGY_ID_FORMAT },
      default: [...AUTO_CANDIDATES],
    },
  },
};

export type ProposeFn = (strategyId: string) => Promise<HostProposeResult>;

const clip = (text: string) => (text.length <= MAX_RATIONALE_CHARS ? text : `${text.slice(0, MAX_RATIONALE_CHARS - 3)}...`);
const outcome = (id: string, r: HostProposeResult) => `${id}=${r.status}${r.reason_code ? `(${r.reason_code})` : ''}`;

/**
 * What the candidates that proposed nothing said of why, the same words once with the candidates
 * that said them: eight codes alone leave the reader to run each strategy to learn the reason.
 */
function candidatesSaid(ids: readonly string[], answers: ReadonlyMap<string, HostProposeResult>): string {
  const said = new Map<string, string[]>();
  for (const id of ids) {
    const r = answers.get(id)!;
    const words = r.status === 'no_plan' ? r.message?.replace(/\s+/g, ' ').trim() : undefined;
    if (words) said.set(words, [...(said.get(words) ?? []), id]);
  }
  return [...said].map(([words, who]) => `; ${who.join(', ')}: ${words}`).join('');
}

function candidateIds(params: StrategyProposeParams): string[] {
  const configured = strategyParams(params).candidates;
  const ids = Array.isArray(configured) && configured.every((c) => typeof c === 'string') ? (configured as string[]) : [...AUTO_CANDIDATES];
  // A selector among its own candidates would ask the host to run it recursively.
  return ids.filter((id) => id !== params.strategy_id);
}

function isClaudeWithToolIds(params: StrategyProposeParams): boolean {
  return params.session.provider === 'claude_code' && params.provider?.supports_cache_edit !== false && params.items.some(hasValidToolUseIds);
}

async function proposeLive(params: StrategyProposeParams, propose: ProposeFn): Promise<StrategyProposeResult> {
  const delegates = isClaudeWithToolIds(params) ? ['cache_edits', 'sawtooth'] : ['sawtooth'];
  const tried: string[] = [];
  for (const id of delegates) {
    const r = await propose(id);
    if (r.status === 'plan' && r.plan && r.plan.edits.length > 0) {
      return {
        edits: r.plan.edits,
        rationale: clip(`auto (live session): delegated to ${id}; ${r.plan.rationale}`),
        strategy: id,
        context_tokens_after: r.plan.context_tokens_after,
      };
    }
    tried.push(outcome(id, r));
  }
  return noPlan(`auto (live session): no provider-side compaction available; ${tried.join(', ')}`);
}

/** Whether a candidate's plans need the scorer (its StrategyInfo.uses_scorer, where auto can see it). */
export type UsesScorer = (strategyId: string) => boolean;

/**
 * Candidates whose plans need the scorer are asked last: the host offers the scorer the items when
 * auto first asks for a plan, and by then the scorer has read them. Asking order only; ties are
 * still broken by the configured order.
 */
function askingOrder(ids: readonly string[], usesScorer: UsesScorer): string[] {
  return [...ids.filter((id) => !usesScorer(id)), ...ids.filter(usesScorer)];
}

async function proposeIdle(params: StrategyProposeParams, propose: ProposeFn, usesScorer: UsesScorer): Promise<StrategyProposeResult> {
  const before = params.context_tokens;
  const ids = candidateIds(params);
  const answers = new Map<string, HostProposeResult>();
  // One at a time: a plugin->host request belongs to the call in flight, and the candidates run in
  // this same process (the host routes their own host/score requests to the newest call).
  for (const id of askingOrder(ids, usesScorer)) answers.set(id, await propose(id));
  const tried: string[] = [];
  let best: { id: string; score: number; result: HostProposeResult & { plan: NonNullable<HostProposeResult['plan']> } } | null = null;
  for (const id of ids) {
    const r = answers.get(id)!;
    if (r.status !== 'plan' || !r.plan || r.plan.edits.length === 0) {
      tried.push(outcome(id, r));
      continue;
    }
    const saved = Math.max(0, r.plan.context_tokens_before - r.plan.context_tokens_after);
    const prefix = r.prefix_tokens ?? prefixTokensOf(params.items, r.plan.edits, r.plan.context_tokens_before);
    const score = cachePreservationScore(saved, prefix, before);
    tried.push(`${id}=${scoreText(score)}`);
    // Strictly greater: on a tie the earlier candidate keeps the lead.
    if (best === null || score > best.score) best = { id, score, result: { ...r, plan: r.plan } };
  }
  if (!best) return noPlan(clip(`no candidate produced a plan; ${tried.join(', ')}${candidatesSaid(ids, answers)}`));
  const plan = best.result.plan;
  return {
    edits: plan.edits,
    rationale: clip(`auto: selected ${best.id} (score ${scoreText(best.score)}); scores ${tried.join(', ')}; ${plan.rationale}`),
    strategy: best.id,
    context_tokens_after: plan.context_tokens_after,
  };
}

export async function proposeAuto(params: StrategyProposeParams, propose: ProposeFn, usesScorer: UsesScorer = () => false): Promise<StrategyProposeResult> {
  if (belowTrigger(params)) return belowTriggerResult(params);
  return params.active || params.items.length === 0 ? proposeLive(params, propose) : proposeIdle(params, propose, usesScorer);
}
