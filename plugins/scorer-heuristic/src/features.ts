/** The ten features of a candidate, each in [0, 1] or a flag. */
import { toolName } from '../../../sdk/strategy/candidates.js';
import { hasScorerErrorMarker } from '../../../sdk/strategy/markers.js';
import { itemText, type ScoringContext } from './scoring-context.js';
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

/** Number of entries of the ascending run list[from .. to) greater than `position`. */
function countAfter(list: Int32Array, from: number, to: number, position: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! <= position) lo = mid + 1;
    else hi = mid;
  }
  return to - lo;
}

/** |a ∩ b| / |a ∪ b| of the token sets of texts `a` and `b`; two empty sets are identical. */
export function textJaccard(ctx: ScoringContext, a: number, b: number): number {
  const { textStart, textTokens, marks } = ctx;
  const aSize = textStart[a + 1]! - textStart[a]!;
  const bSize = textStart[b + 1]! - textStart[b]!;
  if (aSize === 0 && bSize === 0) return 1;
  if (a === b) return 1;
  // b's tokens are marked with a number no earlier comparison used, then a's are looked up.
  if (marks.stamp === 0xffffffff) {
    marks.seen.fill(0);
    marks.stamp = 0;
  }
  const stamp = ++marks.stamp;
  for (let k = textStart[b]!; k < textStart[b + 1]!; k++) marks.seen[textTokens[k]!] = stamp;
  let common = 0;
  for (let k = textStart[a]!; k < textStart[a + 1]!; k++) if (marks.seen[textTokens[k]!] === stamp) common++;
  return common / (aSize + bSize - common);
}

/** Features of the candidate at rank `rank` (its place in candidate order) and item position `position`. */
export function candidateFeatures(ctx: ScoringContext, rank: number, position: number): Features {
  const item = ctx.items[position]!;
  const text = ctx.textOf[position]!;
  const { textStart, textTokens, occurrenceStart, occurrences, goalToken } = ctx;
  const from = textStart[text]!;
  const to = textStart[text + 1]!;
  const size = to - from;

  let idfSum = 0;
  let futureSum = 0;
  let goalHits = 0;
  // In each text's first-seen token order, as the sums have always been added up.
  for (let k = from; k < to; k++) {
    const t = textTokens[k]!;
    const first = occurrenceStart[t]!;
    const end = occurrenceStart[t + 1]!;
    idfSum += Math.log(ctx.nDocs / (end - first));
    futureSum += Math.min(countAfter(occurrences, first, end, position), FUTURE_REF_CAP);
    goalHits += goalToken[t]!;
  }

  const labelInfo = ctx.candidateLabels.get(item.label);
  const newestOfLabel = labelInfo === undefined || labelInfo.newestLine === item.line_index;
  const latest = ctx.labelLatestText.get(item.label);

  return {
    recency: rank / ctx.candidateCount,
    tool_importance: toolImportance(toolName(item.label)),
    error_marker: hasScorerErrorMarker(itemText(item)),
    idf_score: size === 0 ? 0 : clamp01(idfSum / (size * ctx.maxIdf)),
    future_ref_score: size === 0 ? 0 : clamp01(futureSum / size / FUTURE_REF_CAP),
    goal_overlap: size === 0 ? 0 : goalHits / size,
    superseded: labelInfo !== undefined && labelInfo.count > 1 && !newestOfLabel,
    near_duplicate: size > 0 && !newestOfLabel && latest !== undefined && textJaccard(ctx, text, latest) >= NEAR_DUPLICATE_JACCARD,
    parent_of_tail: item.uuid != null && ctx.tailParents.has(item.uuid),
    position_ratio: ctx.maxLine === 0 ? 0 : item.line_index / ctx.maxLine,
  };
}
