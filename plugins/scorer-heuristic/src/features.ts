/** The ten features of a candidate, each in [0, 1] or a flag. */
import { toolName } from '../../../sdk/strategy/candidates.js';
import { hasScorerErrorMarker } from '../../../sdk/strategy/markers.js';
import type { ScoringContext } from './scoring-context.js';
import { toolImportance } from './tool-importance.js';

/** A token referenced this often later is as referenced as it gets. */
export const FUTURE_REF_CAP = 12;
export const NEAR_DUPLICATE_JACCARD = 0.85;

export interface Features {
  recency: number;
  tool_importance: number;
  error_marker: boolean;
  idf_score: number;
  future_ref_score: number;
  goal_overlap: number;
  superseded: boolean;
  near_duplicate: boolean;
  parent_of_tail: boolean;
  position_ratio: number;
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Number of entries in the ascending `list` greater than `position`. */
function countAfter(list: readonly number[], position: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! <= position) lo = mid + 1;
    else hi = mid;
  }
  return list.length - lo;
}

/** |a ∩ b| / |a ∪ b|; two empty sets are identical. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let common = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const t of small) if (large.has(t)) common++;
  return common / (a.size + b.size - common);
}

/** Features of the candidate at rank `rank` (its place in candidate order) and item position `position`. */
export function candidateFeatures(ctx: ScoringContext, rank: number, position: number): Features {
  const item = ctx.items[position]!;
  const tokens = ctx.tokens[position]!;
  const size = tokens.size;

  let idfSum = 0;
  let futureSum = 0;
  let goalHits = 0;
  for (const t of tokens) {
    const occ = ctx.occurrences.get(t)!;
    idfSum += Math.log(ctx.nDocs / occ.length);
    futureSum += Math.min(countAfter(occ, position), FUTURE_REF_CAP);
    if (ctx.goalTokens.has(t)) goalHits++;
  }

  const labelInfo = ctx.candidateLabels.get(item.label);
  const newestOfLabel = labelInfo === undefined || labelInfo.newestLine === item.line_index;
  const latest = ctx.labelLatestTokens.get(item.label) ?? new Set<string>();

  return {
    recency: rank / ctx.candidateCount,
    tool_importance: toolImportance(toolName(item.label)),
    error_marker: hasScorerErrorMarker(ctx.texts[position]!),
    idf_score: size === 0 ? 0 : clamp01(idfSum / (size * ctx.maxIdf)),
    future_ref_score: size === 0 ? 0 : clamp01(futureSum / size / FUTURE_REF_CAP),
    goal_overlap: size === 0 ? 0 : goalHits / size,
    superseded: labelInfo !== undefined && labelInfo.count > 1 && !newestOfLabel,
    near_duplicate: size > 0 && !newestOfLabel && jaccard(tokens, latest) >= NEAR_DUPLICATE_JACCARD,
    parent_of_tail: item.uuid != null && ctx.tailParents.has(item.uuid),
    position_ratio: ctx.maxLine === 0 ? 0 : item.line_index / ctx.maxLine,
  };
}
