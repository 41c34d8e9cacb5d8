import { describe, expect, it } from 'vitest';
import { proposeScored, STATE_CARD_RESERVE_TOKENS } from '../../../plugins/strategies-core/src/scored.js';
import { scoreHeuristic } from '../../../plugins/scorer-heuristic/src/heuristic.js';
import type { Score } from '../../../schemas/generated/types.js';
import { proposeParams, tableScorer } from '../../fixtures/transcripts/params.js';
import { CODING_RESULT_LINES, codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 0, keep_recent_tool_outputs: 2 };

describe('scored', () => {
  it('elides only valid scores strictly below the cutoff (the threshold example)', async () => {
    // Candidates 4..25: 0.9, 0.1, NaN, answered twice, -0.1, 0.5, 0.49, and 25 not answered at all.
    const scores: Score[] = [
      { line_index: 4, keep_probability: 0.9 },
      { line_index: 7, keep_probability: 0.1 },
      { line_index: 10, keep_probability: Number.NaN },
      { line_index: 13, keep_probability: 0.2 },
      { line_index: 13, keep_probability: 0.3 },
      { line_index: 16, keep_probability: -0.1 },
      { line_index: 19, keep_probability: 0.5 },
      { line_index: 22, keep_probability: 0.49 },
    ];
    const scorer = tableScorer(scores);
    const result = await proposeScored(proposeParams(codingSession().items, { policy: { ...policy, keep_score_threshold: 0.5 } }), scorer.score);
    expect(scorer.asked).toEqual([[4, 7, 10, 13, 16, 19, 22, 25]]);
    expect(result.edits[0]).toMatchObject({ op: 'elide', line_indexes: [7, 22] });
    expect(result.edits[1]).toMatchObject({ op: 'inject_digest', digest: { covers_items: 2 } });
    expect(result.rationale).toBe(
      'context 10610 tokens exceeds trigger 8000; eliding 2 scored stale outputs, 7 prefix records unchanged; 6 outputs protected by keep-score cutoff 0.5 | scorer fake',
    );
  });

  it('gives no plan with a cutoff of 0 (nothing scores below it) or when every score is unusable', async () => {
    const zero = await proposeScored(
      proposeParams(codingSession().items, { policy: { ...policy, keep_score_threshold: 0 } }),
      tableScorer(CODING_RESULT_LINES.map((line) => ({ line_index: line, keep_probability: 0 }))).score,
    );
    expect(zero.edits).toEqual([]);
    expect(zero.rationale).toBe('all 8 stale outputs are protected by keep-score cutoff 0 | scorer fake');
    const broken = await proposeScored(proposeParams(codingSession().items, { policy: { ...policy, keep_score_threshold: 0.9 } }), tableScorer([]).score);
    expect(broken.edits).toEqual([]);
  });

  it('ranks inside the smallest tailward window that can reach the floor plus the card reserve', async () => {
    // Target 2,610 tokens; the window needs 2,610 + 4,096 so it reaches back to line 7, not to 4.
    const scorer = tableScorer([
      { line_index: 4, keep_probability: 0 },
      { line_index: 7, keep_probability: 0.3 },
      { line_index: 10, keep_probability: 0.2 },
      { line_index: 13, keep_probability: 0.8 },
      { line_index: 16, keep_probability: 0.1 },
      { line_index: 19, keep_probability: 0.9 },
      { line_index: 22, keep_probability: 0.4 },
    ]);
    expect(STATE_CARD_RESERVE_TOKENS).toBe(4096);
    const result = await proposeScored(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 8000 } }), scorer.score);
    expect(result.edits[0]).toMatchObject({ line_indexes: [7, 10, 16] });
    expect(result.context_tokens_after).toBe(10_610 - 3 * 976 + 70);
    expect(result.rationale).toBe(
      'context 10610 tokens exceeds trigger 8000; eliding 3 scored stale outputs, 7 prefix records unchanged; 1 outputs without a valid score ranked last | scorer fake',
    );
  });

  it('never elides an unscored output ahead of a scored one', async () => {
    // Only 19 and 22 are answered (high); the rest are unknown. The window holds 25..13.
    const scorer = tableScorer([
      { line_index: 19, keep_probability: 0.99 },
      { line_index: 22, keep_probability: 0.95 },
    ]);
    const result = await proposeScored(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 9000 } }), scorer.score);
    expect(result.edits[0]).toMatchObject({ line_indexes: [19, 22] });
  });

  it('breaks equal scores by larger reclaim, then older line', async () => {
    const scorer = tableScorer(CODING_RESULT_LINES.map((line) => ({ line_index: line, keep_probability: 0.5 })));
    const result = await proposeScored(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 9000 } }), scorer.score);
    // Window 25..10 (4,096 + 1,610 tokens); two elisions reach the target: the two oldest in it.
    expect(result.edits[0]).toMatchObject({ line_indexes: [10, 13] });
  });

  it('works end to end with the heuristic scorer', async () => {
    const items = codingSession().items;
    const result = await proposeScored(proposeParams(items, { policy: { ...policy, floor_tokens: 6000 } }), async (candidates) => ({
      scorer_id: 'heuristic',
      scores: scoreHeuristic(items, candidates),
    }));
    expect(result.edits[0]).toMatchObject({ op: 'elide' });
    expect(result.context_tokens_after).toBeLessThanOrEqual(6000);
  });

  it('returns no plan below the trigger without asking the scorer', async () => {
    const scorer = tableScorer([]);
    const result = await proposeScored(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } }), scorer.score);
    expect(result.edits).toEqual([]);
    expect(scorer.asked).toEqual([]);
  });
});
