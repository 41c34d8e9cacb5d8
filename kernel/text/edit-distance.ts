/** How far apart two names are, for suggesting the one a user meant to type. */

/** Levenshtein distance with adjacent transpositions counted as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** Near enough to suggest: a typo of about one character in three. */
export function nearEnough(distance: number, name: string): boolean {
  return distance <= Math.max(1, Math.floor(name.length / 3));
}

/**
 * Of `names`, the nearest to `typed` when it is near enough to suggest (the first on a tie), else
 * null. Case is no distance: ELIDE, typed with caps lock on, means elide.
 */
export function nearestName(typed: string, names: Iterable<string>): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    const distance = editDistance(typed.toLowerCase(), name.toLowerCase());
    if (nearEnough(distance, name) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

/** " (did you mean elide?)" for the name of `names` nearest to `typed`, or nothing when none is near enough. */
export function meantNote(typed: string, names: Iterable<string>): string {
  const meant = nearestName(typed, names);
  return meant === null ? '' : ` (did you mean ${meant}?)`;
}
