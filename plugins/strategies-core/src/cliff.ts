/**
 * `cliff`: a pure drop rule after the CliffCompaction idea. The head and the newest
 * `keep_recent_turns` assistant steps stay verbatim; in between, tool results larger than
 * `result_max_bytes` are dropped. No floor seeking and no card, so compacting a compacted copy at
 * the same cut changes nothing more.
 */
import type { ItemKind, StrategyProposeParams, StrategyProposeResult, TranscriptItem } from '../../../schemas/generated/types.js';
import { elisionSavings, isElidable } from '../../../sdk/tokens.js';
import { protectedLines, reclaims } from '../../../sdk/strategy/candidates.js';
import { belowTrigger, belowTriggerResult, elideEdit, exceedsTrigger, noPlan } from '../../../sdk/strategy/plan.js';

export const CLIFF_STUB = '[tool result dropped by gobstopper cliff: {bytes} bytes]';

const STEP_KINDS: ReadonlySet<ItemKind> = new Set(['assistant', 'tool_call', 'reasoning']);

/** Positions where an assistant step begins; records with no live tokens neither start nor end one. */
export function stepStarts(items: readonly TranscriptItem[]): number[] {
  const starts: number[] = [];
  let inStep = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.est_tokens === 0) continue;
    const isStep = STEP_KINDS.has(item.kind);
    if (isStep && !inStep) starts.push(i);
    inStep = isStep;
  }
  return starts;
}

export function proposeCliff(params: StrategyProposeParams): StrategyProposeResult {
  if (belowTrigger(params)) return belowTriggerResult(params);
  const { keep_recent_turns: keepTurns, result_max_bytes: maxBytes, keep_recent_tool_outputs: keep } = params.policy;
  const items = params.items;
  const starts = stepStarts(items);
  const steps = starts.length;
  if (steps - keepTurns <= 0) return noPlan(`${steps} assistant step${steps === 1 ? '' : 's'}, none older than the newest ${keepTurns}`);
  const rangeStart = starts[0]!;
  const rangeEnd = keepTurns === 0 ? items.length : starts[steps - keepTurns]!;
  if (rangeStart >= rangeEnd) return noPlan('no records between the head and the kept steps');

  const guarded = protectedLines(items, keep);
  const chosen: number[] = [];
  let keptSmall = 0;
  // Over the limit but split into so many parts that their stubs would cost what they hold.
  let keptForStubs = 0;
  let projected = params.context_tokens;
  for (let i = rangeStart; i < rangeEnd; i++) {
    const item = items[i]!;
    if (!isElidable(item) || guarded.has(item.line_index)) continue;
    if ((item.elidable_bytes ?? 0) <= maxBytes) keptSmall++;
    else if (!reclaims(item)) keptForStubs++;
    else {
      chosen.push(item.line_index);
      projected = Math.max(0, projected - elisionSavings(item));
    }
  }
  const older = `before the newest ${keepTurns} assistant steps`;
  if (chosen.length === 0 && keptForStubs === 0) return noPlan(`no tool results over ${maxBytes} bytes ${older}`);
  if (chosen.length === 0) return noPlan(`the ${keptForStubs} tool results over ${maxBytes} bytes ${older} hold so many parts that their stubs would cost as much as they do`);
  const stubNote = keptForStubs === 0 ? '' : ` and ${keptForStubs} larger ones whose stubs would cost as much as they hold`;
  return {
    edits: [elideEdit(chosen, CLIFF_STUB)],
    rationale: `${exceedsTrigger(params)}; head and newest ${Math.min(keepTurns, steps)} of ${steps} assistant steps kept verbatim; dropping ${chosen.length} older tool results over ${maxBytes} bytes, keeping ${keptSmall} smaller ones${stubNote}`,
    context_tokens_after: projected,
  };
}
