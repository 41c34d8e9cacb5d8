import { describe, expect, it } from 'vitest';
import { candidateFeatures } from '../../../plugins/scorer-heuristic/src/features.js';
import { keepProbability, scoreHeuristic } from '../../../plugins/scorer-heuristic/src/heuristic.js';
import { buildScoringContext } from '../../../plugins/scorer-heuristic/src/scoring-context.js';
import { tokenSet } from '../../../plugins/scorer-heuristic/src/tokenize.js';
import { toolImportance } from '../../../plugins/scorer-heuristic/src/tool-importance.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { mixedSession } from '../../fixtures/transcripts/sessions.js';

/**
 * 0 user "make the cache eviction lru"; 1 Read(src/cache.ts) result; 2 failing npm test result;
 * 3 the same read again; 4 assistant "switching eviction to lru". Candidates: 1, 2, 3.
 */
function cacheSession() {
  const b = new TranscriptBuilder();
  b.user('make the cache eviction lru', 10);
  b.toolResult({ label: 'Read(src/cache.ts)', bytes: 4000, summary: 'src/cache.ts eviction fifo' });
  b.toolResult({ label: 'Bash(npm test)', bytes: 4000, summary: 'npm test failed: eviction' });
  b.toolResult({ label: 'Read(src/cache.ts)', bytes: 4000, summary: 'src/cache.ts eviction fifo' });
  b.assistant('switching eviction to lru');
  return b.items;
}

describe('heuristic scorer', () => {
  it('tokenizes on everything but letters, digits, / . and _, lowercased, as a set', () => {
    expect([...tokenSet('Read(src/A.ts) foo_bar, x-y Ünï 42 42')]).toEqual(['read', 'src/a.ts', 'foo_bar', 'x', 'y', 'ünï', '42']);
    expect(tokenSet(`${'a'.repeat(129)} ok ${'b'.repeat(128)}`)).toEqual(new Set(['ok', 'b'.repeat(128)]));
  });

  it('rates tool types by the fixed table', () => {
    expect(['read_file', 'grep', 'edit', 'glob'].map(toolImportance)).toEqual([1, 1, 1, 1]);
    expect(['bash', 'ls', 'cat', 'uniq'].map(toolImportance)).toEqual([0, 0, 0, 0]);
    expect(['read', 'webfetch'].map(toolImportance)).toEqual([0.5, 0.5]);
  });

  it('computes every feature of a superseded near-duplicate read', () => {
    const items = cacheSession();
    const ctx = buildScoringContext(items, [1, 2, 3]);
    const f = candidateFeatures(ctx, 0, 1);
    expect(f.recency).toBe(0);
    expect(f.tool_importance).toBe(0.5);
    expect(f.error_marker).toBe(false);
    // read, src/cache.ts, fifo appear in 2 of 5 records, eviction in all 5.
    expect(f.idf_score).toBeCloseTo((3 * Math.log(5 / 2)) / (4 * Math.log(5)), 12);
    // Later records mention read 1×, src/cache.ts 1×, eviction 3×, fifo 1×: mean 1.5 of a cap of 12.
    expect(f.future_ref_score).toBeCloseTo(1.5 / 12, 12);
    expect(f.goal_overlap).toBe(0.25);
    expect(f.superseded).toBe(true);
    expect(f.near_duplicate).toBe(true);
    expect(f.parent_of_tail).toBe(true);
    expect(f.position_ratio).toBe(0.25);
    expect(keepProbability(f)).toBeCloseTo(0.06 + 0.015 + 0.03 + 0.025 + 0.12 * f.idf_score + 0.1 - 0.27, 12);
  });

  it('rewards a failing command and the newest copy of a read', () => {
    const items = cacheSession();
    const scores = scoreHeuristic(items, [1, 2, 3]);
    const failing = candidateFeatures(buildScoringContext(items, [1, 2, 3]), 1, 2);
    expect(failing).toMatchObject({ error_marker: true, superseded: false, near_duplicate: false, tool_importance: 0, position_ratio: 0.5 });
    expect(failing.idf_score).toBeCloseTo(0.8, 12);
    expect(failing.future_ref_score).toBeCloseTo(2 / 5 / 12, 12);
    expect(scores.map((s) => s.line_index)).toEqual([1, 2, 3]);
    expect(scores[0]!.keep_probability).toBeCloseTo(0.011239, 5);
    expect(scores[1]!.keep_probability).toBeCloseTo(0.584, 12);
    expect(scores[2]!.keep_probability).toBeCloseTo(0.12 + 0.06 + 0.0025 + 0.03 + 0.075 + 0.12 * ((3 * Math.log(2.5)) / (4 * Math.log(5))) + 0.1, 12);
  });

  it('clamps to [0, 1] and looks back only 8 records for the tail and the goal', () => {
    const b = new TranscriptBuilder();
    b.user('rename the widget');
    b.toolResult({ label: 'Bash(ls)', bytes: 4000, summary: 'ls' });
    b.toolResult({ label: 'Bash(ls)', bytes: 4000, summary: 'ls' });
    for (let i = 0; i < 9; i++) b.assistant(i === 0 ? 'renamed' : 'ok');
    const ctx = buildScoringContext(b.items, [1, 2]);
    // The eight newest summarised user/assistant records are assistants: the user's words fell out.
    expect(ctx.goalTokens).toEqual(new Set(['ok']));
    const f = candidateFeatures(ctx, 0, 1);
    expect(f).toMatchObject({ parent_of_tail: false, superseded: true, near_duplicate: true, goal_overlap: 0 });
    expect(keepProbability(f)).toBe(0);
    expect(keepProbability({ ...f, recency: 1, tool_importance: 1, error_marker: true, future_ref_score: 1, goal_overlap: 1, position_ratio: 1, idf_score: 1, parent_of_tail: true, superseded: false, near_duplicate: false })).toBe(1);
  });

  it('caps future references at 12 per token', () => {
    const b = new TranscriptBuilder();
    b.toolResult({ label: 'Grep', bytes: 4000, summary: 'needle' });
    for (let i = 0; i < 20; i++) b.assistant('needle again');
    const f = candidateFeatures(buildScoringContext(b.items, [0]), 0, 0);
    // grep: never again; needle: 20 later mentions, capped at 12.
    expect(f.future_ref_score).toBeCloseTo(12 / 2 / 12, 12);
  });

  it('scores a transcript it has seen before exactly like a fresh copy, whatever the candidates', () => {
    const items = mixedSession(7).items;
    const lines = items.map((i) => i.line_index);
    const some = lines.filter((_, k) => k % 3 === 0);
    const rest = lines.filter((_, k) => k % 3 !== 0);
    // The same array again reuses what depends on the transcript alone; a copy builds it afresh.
    expect(scoreHeuristic(items, some)).toEqual(scoreHeuristic([...items], some));
    expect(scoreHeuristic(items, rest)).toEqual(scoreHeuristic([...items], rest));
    expect(scoreHeuristic(items, lines)).toEqual(scoreHeuristic([...items], lines));
  });

  it('computes rarity, later references, goal overlap and near-duplicates as plain token sets say', () => {
    const items = mixedSession(11, 200).items;
    const lines = items.map((i) => i.line_index);
    const ctx = buildScoringContext(items, lines);
    // The definitions, spelled out with a Set per record.
    const sets = items.map((i) => tokenSet(`${i.label} ${i.summary ?? ''}`));
    const latest = new Map(items.map((i, k) => [i.label, sets[k]!]));
    const docs = (t: string) => sets.filter((set) => set.has(t)).length;
    const later = (t: string, k: number) => sets.slice(k + 1).filter((set) => set.has(t)).length;
    let nearDuplicates = 0;
    items.forEach((item, k) => {
      const f = candidateFeatures(ctx, k, k);
      const tokens = [...sets[k]!];
      if (tokens.length === 0) return expect(f).toMatchObject({ idf_score: 0, future_ref_score: 0, goal_overlap: 0, near_duplicate: false });
      const idf = tokens.reduce((sum, t) => sum + Math.log(items.length / docs(t)), 0) / (tokens.length * Math.log(items.length));
      expect(f.idf_score).toBeCloseTo(Math.min(1, idf), 12);
      expect(f.future_ref_score).toBeCloseTo(tokens.reduce((sum, t) => sum + Math.min(later(t, k), 12), 0) / tokens.length / 12, 12);
      expect(f.goal_overlap).toBe(tokens.filter((t) => ctx.goalTokens.has(t)).length / tokens.length);
      const other = latest.get(item.label)!;
      const common = tokens.filter((t) => other.has(t)).length;
      const newest = lines.filter((line, j) => items[j]!.label === item.label).at(-1) === item.line_index;
      expect(f.near_duplicate, `line ${item.line_index}`).toBe(!newest && common / (tokens.length + other.size - common) >= 0.85);
      if (f.near_duplicate) nearDuplicates += 1;
    });
    // The session has some, or the comparison above would not have been tried.
    expect(nearDuplicates).toBeGreaterThan(0);
  });

  it('calls an older output a near-duplicate of its label\'s newest when their tokens overlap by 85% or more, identical or not', () => {
    const words = Array.from({ length: 12 }, (_, i) => `w${i}`).join(' ');
    const b = new TranscriptBuilder();
    b.toolResult({ label: 'Read(src/a.ts)', bytes: 4000, summary: words });
    b.toolResult({ label: 'Read(src/b.ts)', bytes: 4000, summary: 'w0 w1 w2 w3 w4 w5' });
    b.toolResult({ label: 'Read(src/b.ts)', bytes: 4000, summary: 'w0 w1 w2 w3 w4 w5 w6 w7 w8 w9' });
    b.toolResult({ label: 'Read(src/a.ts)', bytes: 4000, summary: `${words} extra` });
    const ctx = buildScoringContext(b.items, [0, 1, 2, 3]);
    // 14 shared of 15 tokens (read, src/a.ts and w0..w11, against one more): 0.93.
    expect(candidateFeatures(ctx, 0, 0).near_duplicate).toBe(true);
    // 8 shared of 12 (read, src/b.ts, w0..w5 against four more): 0.67.
    expect(candidateFeatures(ctx, 1, 1).near_duplicate).toBe(false);
    // The newest of each label is what the others are compared with, never a duplicate itself.
    expect([2, 3].map((k) => candidateFeatures(ctx, k, k).near_duplicate)).toEqual([false, false]);
  });

  it('answers null for a line that names no record', () => {
    expect(scoreHeuristic(cacheSession(), [99])).toEqual([{ line_index: 99, keep_probability: null }]);
  });
});
