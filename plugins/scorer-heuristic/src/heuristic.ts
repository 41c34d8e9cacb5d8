/** The deterministic heuristic scorer: a fixed weighted sum of the features, clamped to [0, 1]. Higher keeps. */
import type { Score, TranscriptItem } from '../../../schemas/generated/types.js';
import { candidateFeatures, type Features } from './features.js';
import { buildScoringContext } from './scoring-context.js';

export const WEIGHTS = {
  recency: 0.18,
  tool_importance: 0.12,
  error_marker: 0.25,
  future_ref_score: 0.12,
  goal_overlap: 0.12,
  position_ratio: 0.1,
  idf_score: 0.12,
  parent_of_tail: 0.1,
  superseded: -0.15,
  near_duplicate: -0.12,
} as const;

const flag = (b: boolean) => (b ? 1 : 0);

export function keepProbability(f: Features): number {
  const sum =
    WEIGHTS.recency * f.recency +
    WEIGHTS.tool_importance * f.tool_importance +
    WEIGHTS.error_marker * flag(f.error_marker) +
    WEIGHTS.future_ref_score * f.future_ref_score +
    WEIGHTS.goal_overlap * f.goal_overlap +
    WEIGHTS.position_ratio * f.position_ratio +
    WEIGHTS.idf_score * f.idf_score +
    WEIGHTS.parent_of_tail * flag(f.parent_of_tail) +
    WEIGHTS.superseded * flag(f.superseded) +
    WEIGHTS.near_duplicate * flag(f.near_duplicate);
  return Math.min(1, Math.max(0, sum));
}

/** One score per candidate, in candidate order; a line that names no record gets null (unknown). */
export function scoreHeuristic(items: readonly TranscriptItem[], candidates: readonly number[]): Score[] {
  const ctx = buildScoringContext(items, candidates);
  return candidates.map((line, rank) => {
    const position = ctx.positionOfLine.get(line);
    if (position === undefined) return { line_index: line, keep_probability: null };
    return { line_index: line, keep_probability: keepProbability(candidateFeatures(ctx, rank, position)) };
  });
}
