import type { RebuiltContext, RehearsalPrediction } from '../../../schemas/generated/types.js';

/**
 * The context a candidate should rebuild, expressed in the client's own measure: what the client
 * rebuilt from the baseline (the fork's source) moved by the difference the provider predicts
 * between baseline and candidate. Providers estimate each record from the part the client sends,
 * but per record: the client's grouping (one message per response) and small normalisations
 * (dropped blank blocks) leave a few per cent between estimate and request; a difference of the
 * same estimate cancels that out, so a rewrite is judged by what it changed, not by how records are
 * estimated. Counts move by the same differences, so whatever the client normalizes in the source
 * (a dropped whitespace block, a trailing call) is expected in the candidate too. Items are compared
 * as units (one content block or input item each: an elided record stays one, an appended card adds
 * one); messages are left to the caller, because an appended user turn may merge into the last one.
 */
export function predictionFromBaseline(baselineRebuilt: RebuiltContext, baselinePredicted: RehearsalPrediction, candidate: RehearsalPrediction): RehearsalPrediction {
  const moved = (rebuilt: number, before: number, after: number) => Math.max(0, rebuilt + (after - before));
  return {
    items: candidate.items,
    est_tokens: moved(baselineRebuilt.est_tokens, baselinePredicted.est_tokens, candidate.est_tokens),
    by_kind: candidate.by_kind,
    tool_calls: moved(baselineRebuilt.tool_calls, baselinePredicted.tool_calls, candidate.tool_calls),
    tool_results: moved(baselineRebuilt.tool_results, baselinePredicted.tool_results, candidate.tool_results),
    messages: candidate.messages,
    units: candidate.units ?? moved(baselineRebuilt.units, baselinePredicted.items, candidate.items),
  };
}
