/**
 * `cache_edits`: Claude's API layer can drop tool results by `tool_use_id` without touching the
 * transcript. This strategy picks the stale results the scorer values least and lists their ids;
 * the file is never rewritten, so the edit must stand alone (no card).
 */
import type { HostScoreResult, StrategyProposeParams, StrategyProposeResult } from '../../../schemas/generated/types.js';
import { elisionSavings } from '../../../sdk/tokens.js';
import { hasValidToolUseIds, staleCandidates } from '../../../sdk/strategy/candidates.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, linesOf, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { scoreTable } from '../../../sdk/strategy/score-table.js';

export const CACHE_EDIT_PROVIDER = 'claude_code';
export const MAX_CACHE_EDIT_IDS = 100_000;

export type ScoreFn = (candidates: number[]) => Promise<HostScoreResult>;

export function supportsCacheEdits(params: StrategyProposeParams): boolean {
  return params.session.provider === CACHE_EDIT_PROVIDER && params.provider?.supports_cache_edit !== false;
}

export async function proposeCacheEdits(params: StrategyProposeParams, score: ScoreFn): Promise<StrategyProposeResult> {
  if (belowTrigger(params)) return belowTriggerResult(params);
  if (!supportsCacheEdits(params)) return noPlan(`cache edits are a Claude Code API-layer control; provider ${providerOf(params)} has none`);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const candidates = staleCandidates(params.items, keep).filter(hasValidToolUseIds);
  if (candidates.length === 0) return noPlan(`no stale tool outputs with tool_use ids outside the ${keep} protected recent ones`);

  const answer = await score(linesOf(candidates));
  const keepScore = scoreTable(answer.scores, new Set(linesOf(candidates)));

  // Least worth keeping first; records without a usable score go last; larger reclaim breaks ties.
  const ranked = candidates
    .map((item) => ({ item, score: keepScore.get(item.line_index) ?? Number.POSITIVE_INFINITY, savings: elisionSavings(item) }))
    .sort((a, b) => a.score - b.score || b.savings - a.savings || a.item.line_index - b.item.line_index);

  const ids: string[] = [];
  const taken = new Set<string>();
  let dropped = 0;
  let projected = params.context_tokens;
  for (const { item, savings } of ranked) {
    if (projected <= floor || ids.length >= MAX_CACHE_EDIT_IDS) break;
    const fresh = [...new Set(item.tool_use_ids ?? [])].filter((id) => !taken.has(id));
    if (fresh.length === 0) continue;
    if (fresh.length > MAX_CACHE_EDIT_IDS - ids.length) break;
    for (const id of fresh) {
      taken.add(id);
      ids.push(id);
    }
    dropped++;
    projected = Math.max(0, projected - savings);
  }
  if (dropped === 0) return noPlan(`context ${params.context_tokens} tokens is already at or below the floor ${floor}`);
  return {
    edits: [{ op: 'cache_edit', tool_use_ids: ids }],
    rationale: `${exceedsTrigger(params)}; emitting ${dropped} scored cache_edits to drop stale tool outputs | scorer ${answer.scorer_id}`,
    context_tokens_after: projected,
  };
}
