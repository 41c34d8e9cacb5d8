import { describe, expect, it } from 'vitest';
import {
  CARD_ERROR_MARKERS,
  hasCardErrorMarker,
  hasOpenTaskMarker,
  hasScorerErrorMarker,
  OPEN_TASK_MARKERS,
  SCORER_ERROR_MARKERS,
} from '../../../sdk/strategy/markers.js';

/** The definition: some marker is a substring of the lowercased text. */
const contains = (markers: readonly string[]) => (text: string) => {
  const lower = text.toLowerCase();
  return markers.some((m) => lower.includes(m));
};

describe('marker vocabularies', () => {
  it('match exactly where some marker is a case-insensitive substring', () => {
    const checks = [
      [hasCardErrorMarker, contains(CARD_ERROR_MARKERS)],
      [hasOpenTaskMarker, contains(OPEN_TASK_MARKERS)],
      [hasScorerErrorMarker, contains(SCORER_ERROR_MARKERS)],
    ] as const;
    // Pieces of markers, whole markers in odd cases, and characters whose lowercase is ASCII (the
    // Kelvin sign) or longer than themselves (İ).
    const pieces = ['err', 'or', 'ERROR', 'Fail', 'ed', 'exit', ' code', 'stderr', ':', 'TODO', 'follow', '-up', ' up', 'no such', ' file', 'per', 'mission denied', '\u212aill', 'ed', 'İ', 'panİc', 'x', ' ', '.', 'ENOENT', 'non', '-zero', 'time', 'd out'];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let matched = 0;
    for (let round = 0; round < 4000; round++) {
      let text = '';
      for (let k = random(6); k >= 0; k--) text += pieces[random(pieces.length)];
      for (const [fast, reference] of checks) {
        expect(fast(text), JSON.stringify(text)).toBe(reference(text));
        if (reference(text)) matched++;
      }
    }
    expect(matched).toBeGreaterThan(1000);
  });
});
