/**
 * `scored`: asks the configured scorer (through the host) how likely each stale output is worth
 * keeping, then elides the least valuable ones inside the smallest tailward window that can reach
 * the floor, leaving the oldest records byte-identical.
 */
import type { HostScoreResult, StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../../schemas/generated/types.js';
import { digestOverheadTokens } from '../../../sdk/state-card.js';
import { elisionSavings } from '../../../sdk/tokens.js';
import { itemsBefore, staleCandidates, noCandidatesReason } from '../../../sdk/strategy/candidates.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { MinHeap } from '../../../sdk/strategy/min-heap.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, linesOf, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext, DigestAccumulator } from '../../../sdk/strategy/state-card-digest.js';
import { scoreTable, validScore } from '../../../sdk/strategy/score-table.js';

/** Room kept in the window for the state card the plan will add. */
export const STATE_CARD_RESERVE_TOKENS = 4096;
const SCORE_SCALE = 1_000_000;
/** Rank of an unknown score: after every valid one, so it is elided last. */
const UNKNOWN_RANK = SCORE_SCALE + 1;

interface Ranked {
  item: TranscriptItem;
  rank: number;
  savings: number;
}

/** Lowest keep score first; among equals, the larger reclaim first, then the older line. */
const ranksBefore = (a: Ranked, b: Ranked) =>
  a.rank !== b.rank ? a.rank < b.rank : a.savings !== b.savings ? a.savings > b.savings : a.item.line_index < b.item.line_index;

export type ScoreFn = (candidates: number[]) => Promise<HostScoreResult>;

/** One line for the rationale about who scored; scorer text is capped and kept on one line. */
function scorerNote(answer: HostScoreResult): string {
  const summary = answer.summary ? `: ${answer.summary.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 256)}` : '';
  return ` | scorer ${answer.scorer_id}${summary}`;
}

export async function proposeScored(params: StrategyProposeParams, score: ScoreFn): Promise<StrategyProposeResult> {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { floor_tokens: floor, keep_recent_tool_outputs: keep } = params.policy;
  const cutoff = params.policy.keep_score_threshold ?? null;
  if (cutoff !== null && !validScore(cutoff)) return noPlan('keep_score_threshold must be a finite value between 0 and 1');
  const candidates = staleCandidates(params.items, keep);
  if (candidates.length === 0) return noPlan(noCandidatesReason(params.items, keep));

  const answer = await score(linesOf(candidates));
  const table = scoreTable(answer.scores, new Set(linesOf(candidates)));
  const eligible: Ranked[] = [];
  let protectedByCutoff = 0;
  let unknown = 0;
  for (const item of candidates) {
    const s = table.get(item.line_index);
    if (cutoff !== null && !(s !== undefined && s < cutoff)) {
      protectedByCutoff++;
      continue;
    }
    if (s === undefined) unknown++;
    eligible.push({ item, rank: s === undefined ? UNKNOWN_RANK : Math.trunc(s * SCORE_SCALE), savings: elisionSavings(item) });
  }
  if (eligible.length === 0) {
    return noPlan(`all ${candidates.length} stale outputs are protected by keep-score cutoff ${cutoff}${scorerNote(answer)}`);
  }

  const before = params.context_tokens;
  const target = Math.max(0, before - floor);
  const window = target + STATE_CARD_RESERVE_TOKENS;
  // The smallest tailward window whose outputs could reach the target plus the card: ranking only
  // inside it keeps the prefix before it untouched.
  const heap = new MinHeap<Ranked>(ranksBefore);
  let windowTotal = 0;
  for (let i = eligible.length - 1; i >= 0 && windowTotal < window; i--) {
    heap.push(eligible[i]!);
    windowTotal += eligible[i]!.savings;
  }

  const acc = new DigestAccumulator(cardContext(params.items, providerOf(params)));
  const chosen: TranscriptItem[] = [];
  let reclaimed = 0;
  const popOne = () => {
    const next = heap.pop()!;
    chosen.push(next.item);
    acc.add(next.item);
    reclaimed += next.savings;
  };
  while (heap.size > 0 && reclaimed < target) popOne();
  if (chosen.length === 0) return noPlan(`context ${before} tokens is already at or below the floor ${floor}`);
  let digest = acc.build();
  let after = Math.max(0, before - reclaimed) + digestOverheadTokens(digest);
  while (after > floor && heap.size > 0) {
    popOne();
    digest = acc.build();
    after = Math.max(0, before - reclaimed) + digestOverheadTokens(digest);
  }

  chosen.sort((a, b) => a.line_index - b.line_index);
  let rationale = `${exceedsTrigger(params)}; eliding ${chosen.length} scored stale outputs, ${itemsBefore(params.items, chosen[0]!.line_index)} prefix records unchanged`;
  if (cutoff !== null) rationale += `; ${protectedByCutoff} outputs protected by keep-score cutoff ${cutoff}`;
  if (unknown > 0) rationale += `; ${unknown} outputs without a valid score ranked last`;
  return digestPlanResult(params, { chosen, digest, after }, rationale + scorerNote(answer));
}
