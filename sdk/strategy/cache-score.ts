/**
 * The score rewrites are ranked by, in `auto` (which plan to take) and in `eval` (which row is
 * best): one function, so the two never disagree about the same plan.
 */

/** Preserved prefix matters more than raw savings: a broken cache is paid for on every later turn. */
export const PREFIX_EXPONENT = 3;

/** saved × (prefix / context)^3, with the context at least 1: the reclaim discounted by the cached prefix that survives. */
export function cachePreservationScore(saved: number, prefixTokens: number, before: number): number {
  return saved * (prefixTokens / Math.max(1, before)) ** PREFIX_EXPONENT;
}

/**
 * A score with enough digits to rank by: the prefix ratio is cubed, so a plan that keeps little of
 * the prefix scores well below 1, where whole numbers would print every candidate as 0.
 */
export function scoreText(score: number): string {
  return score >= 100 || score === 0 ? score.toFixed(0) : String(Number(score.toPrecision(3)));
}
