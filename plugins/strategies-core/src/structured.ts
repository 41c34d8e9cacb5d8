/**
 * `structured`: masks every stale output before the newest 24 records in one pass (no floor walk)
 * and appends a state card derived from their metadata. It is not a semantic summary: that needs
 * record content, which only a plugin granted read_content may ask for.
 */
import type { StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../../schemas/generated/types.js';
import { elisionSavings, isElidable } from '../../../sdk/tokens.js';
import { protectedLines, reclaims } from '../../../sdk/strategy/candidates.js';
import { digestPlanResult } from '../../../sdk/strategy/digest-plan.js';
import { belowTrigger, belowTriggerResult, exceedsTrigger, noPlan, providerOf } from '../../../sdk/strategy/plan.js';
import { cardContext, DigestAccumulator } from '../../../sdk/strategy/state-card-digest.js';
import { digestOverheadTokens } from '../../../sdk/state-card.js';

export const KEEP_TAIL_ITEMS = 24;

export function proposeStructured(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const items = params.items;
  const tailStart = Math.max(0, items.length - KEEP_TAIL_ITEMS);
  const kept = items.length - tailStart;
  if (tailStart === 0) return noPlan(`the transcript has no records before the newest ${KEEP_TAIL_ITEMS}`);

  const guarded = protectedLines(items, params.policy.keep_recent_tool_outputs);
  const acc = new DigestAccumulator(cardContext(items, providerOf(params)));
  const chosen: TranscriptItem[] = [];
  let projected = params.context_tokens;
  for (let i = 0; i < tailStart; i++) {
    const item = items[i]!;
    if (!isElidable(item) || guarded.has(item.line_index) || !reclaims(item)) continue;
    chosen.push(item);
    acc.add(item);
    projected = Math.max(0, projected - elisionSavings(item));
  }
  if (chosen.length === 0) return noPlan(`no stale tool outputs in the ${tailStart} records before the newest ${kept}`);
  const digest = acc.build();
  return digestPlanResult(
    params,
    { chosen, digest, after: projected + digestOverheadTokens(digest) },
    `${exceedsTrigger(params)}; masking ${chosen.length} stale outputs over ${tailStart} items, ${kept} tail items kept; metadata-derived state card, a semantic summary requires a content-authorized plugin`,
  );
}
