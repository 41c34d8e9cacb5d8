/**
 * Scores bound checks against the live slots of a candidate, in four tiers per check: the exact text
 * somewhere (retained), in a slot of the same origin (same_origin), still at its own record and
 * pointer (source_bound), and one slot covering at least 75% of its content words (lexical).
 */
import type { RetentionKindScore, RetentionScore } from '../../schemas/generated/types.js';
import type { BoundCheck } from './study-manifest.js';
import { RETENTION_KINDS } from './study-manifest.js';
import { LEXICAL_COVER, contentTokens } from './study-text.js';
import type { TextSlot } from './study-slots.js';

// Checks are validated text without control characters, so a NUL joiner can never be part of a
// match: searching one joined string per origin finds exactly the slots that contain the text.
const JOINER = '\u0000';

export function scoreRetention(checks: readonly BoundCheck[], slots: readonly TextSlot[]): RetentionScore {
  const byOrigin = new Map<string, string[]>();
  const byPlace = new Map<string, TextSlot[]>();
  for (const s of slots) {
    (byOrigin.get(s.origin) ?? byOrigin.set(s.origin, []).get(s.origin)!).push(s.text);
    const key = `${s.record}${JOINER}${s.pointer}`;
    (byPlace.get(key) ?? byPlace.set(key, []).get(key)!).push(s);
  }
  const joined = new Map<string, string>([...byOrigin].map(([origin, texts]) => [origin, texts.join(JOINER)]));

  // Inverted index: token -> slots holding it, so the lexical tier costs the checks' tokens, not checks x slots.
  const slotsWithToken = new Map<string, number[]>();
  slots.forEach((s, i) => {
    for (const t of contentTokens(s.text)) (slotsWithToken.get(t) ?? slotsWithToken.set(t, []).get(t)!).push(i);
  });

  const kinds = new Map<string, RetentionKindScore>(
    RETENTION_KINDS.map((kind) => [kind, { kind, total: 0, retained: 0, same_origin_retained: 0, source_bound_retained: 0, lexical_retained: 0 }]),
  );
  const score: RetentionScore = {
    total: checks.length,
    retained: 0,
    same_origin_retained: 0,
    source_bound_retained: 0,
    lexical_retained: 0,
    elidable_total: 0,
    elidable_retained: 0,
    missing_ids: [],
    by_kind: [],
  };
  for (const check of checks) {
    const sameOrigin = joined.get(check.origin)?.includes(check.text) ?? false;
    const retained = sameOrigin || [...joined.values()].some((text) => text.includes(check.text));
    const sourceBound = (byPlace.get(`${check.record}${JOINER}${check.pointer}`) ?? []).some((s) => s.origin === check.origin && s.text.includes(check.text));
    let lexical = false;
    if (check.tokens.size > 0) {
      const hits = new Map<number, number>();
      const needed = check.tokens.size * LEXICAL_COVER;
      for (const t of check.tokens) {
        for (const i of slotsWithToken.get(t) ?? []) {
          const n = (hits.get(i) ?? 0) + 1;
          hits.set(i, n);
          if (n >= needed) lexical = true;
        }
        if (lexical) break;
      }
    }
    const k = kinds.get(check.kind)!;
    k.total += 1;
    if (retained) (score.retained += 1), (k.retained += 1);
    if (sameOrigin) (score.same_origin_retained += 1), (k.same_origin_retained += 1);
    if (sourceBound) (score.source_bound_retained += 1), (k.source_bound_retained += 1);
    if (lexical) (score.lexical_retained += 1), (k.lexical_retained += 1);
    if (check.elidable) {
      score.elidable_total += 1;
      if (sourceBound) score.elidable_retained += 1;
    }
    if (!sourceBound) score.missing_ids.push(check.id);
  }
  score.by_kind = [...kinds.values()].filter((k) => k.total > 0);
  return score;
}
