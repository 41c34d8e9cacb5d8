import type { ItemKind, RehearsalKindTallies, RehearsalPrediction, TranscriptItem } from '../../../schemas/generated/types.js';

type PredictableItem = Pick<TranscriptItem, 'kind' | 'est_tokens'> & Partial<Pick<TranscriptItem, 'tool_use_ids' | 'replayed'>>;

/**
 * The live context Gobstopper predicts from a normalized transcript: the items with est_tokens > 0.
 * A normalized transcript does not say how the client groups records into API messages (Claude
 * merges one response's records and the results that answer it), so `messages` is left to callers
 * that know it.
 */
export function predictionFromItems(items: readonly PredictableItem[], options: { messages?: number | null; units?: number | null } = {}): RehearsalPrediction {
  const byKind: RehearsalKindTallies = {};
  const calls = new Set<string>();
  const results = new Set<string>();
  let count = 0;
  let tokens = 0;
  // Calls and results a record puts back as items of their own (a compaction's history).
  let replayedCalls = 0;
  let replayedResults = 0;
  for (const item of items) {
    if (item.est_tokens <= 0) continue;
    count += 1;
    tokens += item.est_tokens;
    const tally = (byKind[item.kind as ItemKind] ??= { units: 0, est_tokens: 0 });
    tally.units += 1;
    tally.est_tokens += item.est_tokens;
    for (const id of item.tool_use_ids ?? []) {
      if (item.kind === 'tool_call') calls.add(id);
      else if (item.kind === 'tool_result') results.add(id);
    }
    replayedCalls += item.replayed?.tool_calls ?? 0;
    replayedResults += item.replayed?.tool_results ?? 0;
  }
  return {
    items: count,
    est_tokens: tokens,
    by_kind: byKind,
    tool_calls: calls.size + replayedCalls,
    tool_results: results.size + replayedResults,
    messages: options.messages ?? null,
    units: options.units ?? null,
  };
}
