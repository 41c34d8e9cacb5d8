import { describe, expect, it } from 'vitest';
import { analyzeMessagesRequest, compareContext, describeMismatch, predictionFromItems, TOKEN_SLACK } from '../../../kernel/rehearse/index.js';
import { validateContextComparison, validateRehearsalPrediction } from '../../../schemas/generated/validators.js';
import type { RebuiltContext, RehearsalPrediction, TranscriptItem } from '../../../schemas/generated/types.js';
import { claudeResumeBody, PROBE } from './request-builders.js';

const item = (line: number, kind: TranscriptItem['kind'], est: number, ids?: string[]): TranscriptItem => ({
  line_index: line,
  kind,
  est_tokens: est,
  label: kind,
  ...(ids ? { tool_use_ids: ids } : {}),
});

describe('prediction from a normalized transcript', () => {
  it('counts only live items, by kind, and distinct tool ids', () => {
    const prediction = predictionFromItems([
      item(0, 'user', 10),
      item(1, 'tool_call', 20, ['a']),
      item(2, 'tool_call', 0, ['dead']),
      item(3, 'tool_result', 30, ['a']),
      item(4, 'tool_call', 5, ['b']),
      item(5, 'tool_call', 5, ['b']),
      item(6, 'meta', 0),
    ]);
    expect(prediction).toEqual({
      items: 5,
      est_tokens: 70,
      by_kind: { user: { units: 1, est_tokens: 10 }, tool_call: { units: 3, est_tokens: 30 }, tool_result: { units: 1, est_tokens: 30 } },
      tool_calls: 2,
      tool_results: 1,
      messages: null,
      units: null,
    });
    expect(validateRehearsalPrediction(prediction)).toBe(true);
    expect(predictionFromItems([], { messages: 3 }).messages).toBe(3);
  });

  it("counts the calls and results a live compaction puts back, and not a dead one's", () => {
    const prediction = predictionFromItems([
      { ...item(0, 'system', 0), replayed: { tool_calls: 9, tool_results: 9 } },
      { ...item(1, 'tool_result', 40), replayed: { tool_calls: 2, tool_results: 1 } },
      item(2, 'tool_result', 10, ['c']),
    ]);
    expect(prediction).toMatchObject({ tool_calls: 2, tool_results: 2 });
  });
});

function rebuilt(): RebuiltContext {
  return analyzeMessagesRequest(claudeResumeBody(), PROBE);
}

function matching(ctx: RebuiltContext, overrides: Partial<RehearsalPrediction> = {}): RehearsalPrediction {
  return { items: ctx.units, est_tokens: ctx.est_tokens, by_kind: {}, tool_calls: ctx.tool_calls, tool_results: ctx.tool_results, messages: ctx.messages, units: ctx.units, ...overrides };
}

describe('comparing the rebuilt context with the prediction', () => {
  it('is equal when counts match and tokens are within 10%', () => {
    const ctx = rebuilt();
    const comparison = compareContext(ctx, matching(ctx, { est_tokens: Math.round(ctx.est_tokens * 1.05) }));
    expect(comparison.equal).toBe(true);
    expect(comparison.verdict).toBe('equal');
    expect(comparison.checks.map((c) => [c.name, c.outcome])).toEqual([
      ['tool_calls', 'equal'],
      ['tool_results', 'equal'],
      ['tool_pairing', 'equal'],
      ['messages', 'equal'],
      ['units', 'equal'],
      ['tokens', 'equal'],
    ]);
    expect(validateContextComparison(comparison)).toBe(true);
  });

  it('calls a rebuilt context with fewer tokens than predicted "shorter", a failure', () => {
    const ctx = { ...rebuilt(), est_tokens: 5000 };
    const comparison = compareContext(ctx, matching(ctx, { est_tokens: Math.ceil(ctx.est_tokens / 0.85) }));
    expect(comparison.equal).toBe(false);
    expect(comparison.verdict).toBe('shorter');
    expect(comparison.token_ratio).toBeLessThan(0.9);
    expect(describeMismatch(comparison)).toMatch(/^tokens shorter \(rebuilt [\d,]+, predicted [\d,]+\)$/);
  });

  it('holds the 10% bound exactly at both edges', () => {
    const ctx = { ...rebuilt(), est_tokens: 9000 };
    expect(compareContext(ctx, matching(ctx, { est_tokens: 10_000 })).equal).toBe(true);
    expect(compareContext({ ...ctx, est_tokens: 8999 }, matching(ctx, { est_tokens: 10_000 })).verdict).toBe('shorter');
    expect(compareContext({ ...ctx, est_tokens: 11_000 }, matching(ctx, { est_tokens: 10_000 })).equal).toBe(true);
    expect(compareContext({ ...ctx, est_tokens: 11_001 }, matching(ctx, { est_tokens: 10_000 })).verdict).toBe('longer');
  });

  it('allows a small context the framing of one stored record, and no more', () => {
    const ctx = { ...rebuilt(), est_tokens: 500 };
    expect(TOKEN_SLACK).toBe(128);
    expect(compareContext(ctx, matching(ctx, { est_tokens: 628 })).equal).toBe(true);
    expect(compareContext(ctx, matching(ctx, { est_tokens: 629 })).verdict).toBe('shorter');
  });

  it('fails on a missing tool call even when tokens agree, and shorter wins over other outcomes', () => {
    const ctx = rebuilt();
    const comparison = compareContext(ctx, matching(ctx, { tool_calls: 3, tool_results: 3, messages: ctx.messages - 1 }));
    expect(comparison.verdict).toBe('shorter');
    expect(comparison.checks.find((c) => c.name === 'messages')?.outcome).toBe('longer');
    expect(comparison.checks.find((c) => c.name === 'tool_calls')?.outcome).toBe('shorter');
  });

  it('reports broken pairing when the client carries an orphan result or an unexpected open call', () => {
    const ctx = { ...rebuilt(), orphan_tool_results: 1 };
    const comparison = compareContext(ctx, matching(ctx));
    expect(comparison.verdict).toBe('broken');
    const open = { ...rebuilt(), tool_results: 1, unanswered_tool_calls: 1 };
    // A call the transcript itself leaves open is expected to stay open.
    expect(compareContext(open, matching(open)).checks.find((c) => c.name === 'tool_pairing')?.outcome).toBe('equal');
  });

  it('skips the message and unit checks when the prediction does not state them', () => {
    const ctx = rebuilt();
    const comparison = compareContext(ctx, matching(ctx, { messages: null, units: null }));
    expect(comparison.equal).toBe(true);
    expect(comparison.checks.find((c) => c.name === 'messages')).toMatchObject({ outcome: 'skipped', predicted: null });
    expect(comparison.checks.find((c) => c.name === 'units')).toMatchObject({ outcome: 'skipped', predicted: null });
  });

  it('fails on one missing content block even when messages and tokens agree', () => {
    const ctx = rebuilt();
    const comparison = compareContext(ctx, matching(ctx, { units: ctx.units + 1 }));
    expect(comparison.verdict).toBe('shorter');
    expect(describeMismatch(comparison)).toBe(`units shorter (rebuilt ${ctx.units}, predicted ${ctx.units + 1})`);
  });

  it('writes counts past a thousand with separators, as the rest of the report does', () => {
    const ctx = { ...rebuilt(), est_tokens: 21_427 };
    const comparison = compareContext(ctx, matching(ctx, { est_tokens: 30_000 }));
    expect(describeMismatch(comparison)).toBe('tokens shorter (rebuilt 21,427, predicted 30,000)');
  });

  it('handles an empty prediction', () => {
    const ctx = rebuilt();
    const comparison = compareContext(ctx, { items: 0, est_tokens: 0, by_kind: {}, tool_calls: 0, tool_results: 0, messages: null, units: null });
    expect(comparison.token_ratio).toBeNull();
    expect(comparison.verdict).toBe('longer');
  });
});
