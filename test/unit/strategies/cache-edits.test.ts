import { describe, expect, it } from 'vitest';
import { proposeCacheEdits } from '../../../plugins/strategies-control/src/cache-edits.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { CODEX_INFO, proposeParams, tableScorer } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 8000, keep_recent_tool_outputs: 2 };

const scores = [
  { line_index: 4, keep_probability: 0.5 },
  { line_index: 7, keep_probability: 0.1 },
  { line_index: 10, keep_probability: 0.2 },
  { line_index: 16, keep_probability: 0.3 },
  { line_index: 19, keep_probability: 0.9 },
  { line_index: 22, keep_probability: 0.05 },
  { line_index: 25, keep_probability: 0.6 },
];

describe('cache_edits', () => {
  it('lists the tool_use ids of the lowest-scored stale results until the floor, and nothing else', async () => {
    const result = await proposeCacheEdits(proposeParams(codingSession().items, { policy }), tableScorer(scores).score);
    expect(result.edits).toEqual([{ op: 'cache_edit', tool_use_ids: ['toolu_07', 'toolu_02', 'toolu_03'] }]);
    expect(result.context_tokens_after).toBe(10_610 - 3 * 976);
    expect(result.rationale).toBe('context 10610 tokens exceeds trigger 8000; emitting 3 scored cache_edits to drop stale tool outputs | scorer fake');
  });

  it('is Claude-only', async () => {
    const scorer = tableScorer(scores);
    const result = await proposeCacheEdits(proposeParams(codingSession().items, { policy, provider: CODEX_INFO }), scorer.score);
    expect(result).toEqual({ edits: [], rationale: 'cache edits are a Claude Code API-layer control; provider codex has none' });
    expect(scorer.asked).toEqual([]);
  });

  it('skips records with ids the host would refuse and ids already listed', async () => {
    const b = new TranscriptBuilder();
    b.system({ tokens: 9000 });
    b.step(null, { label: 'Bash', bytes: 4000, toolUseIds: ['bad id'] }); // 3
    b.step(null, { label: 'Bash', bytes: 4000, toolUseIds: ['toolu_a'] }); // 6
    b.step(null, { label: 'Bash', bytes: 4000, toolUseIds: ['toolu_a'] }); // 9: nothing new to drop
    b.step(null, { label: 'Bash', bytes: 4000, toolUseIds: ['toolu_b', 'toolu_c'] }); // 12
    b.step(null, { label: 'Bash', bytes: 4000, toolUseIds: ['toolu_z'] }); // 15: protected
    const scorer = tableScorer([]);
    const result = await proposeCacheEdits(proposeParams(b.items, { policy: { trigger_tokens: 1000, floor_tokens: 0, keep_recent_tool_outputs: 1 } }), scorer.score);
    expect(scorer.asked).toEqual([[6, 9, 12]]);
    expect(result.edits).toEqual([{ op: 'cache_edit', tool_use_ids: ['toolu_a', 'toolu_b', 'toolu_c'] }]);
  });

  it('returns no plan below the trigger', async () => {
    const result = await proposeCacheEdits(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } }), tableScorer(scores).score);
    expect(result.edits).toEqual([]);
  });
});
