/**
 * Reading a scorer's answer. A score is usable only when it is a finite number in [0, 1] given once
 * for a line we asked about; anything else (missing, null, NaN, out of range, answered twice) is
 * unknown, and unknown records are never elided ahead of scored ones.
 */
import type { Score } from '../../schemas/generated/types.js';

export function validScore(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

/** Line index -> usable score, for the lines in `asked` only. */
export function scoreTable(scores: readonly Score[], asked: ReadonlySet<number>): Map<number, number> {
  const table = new Map<number, number>();
  const conflicting = new Set<number>();
  const seen = new Set<number>();
  for (const { line_index: line, keep_probability: p } of scores) {
    if (!asked.has(line)) continue;
    if (seen.has(line)) conflicting.add(line);
    seen.add(line);
    if (validScore(p)) table.set(line, p);
  }
  for (const line of conflicting) table.delete(line);
  return table;
}
