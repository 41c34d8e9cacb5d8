import { describe, expect, it } from 'vitest';
import { microCandidates, proposeMicro } from '../../../plugins/strategies-core/src/micro.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

describe('micro', () => {
  it('keeps the newest two outputs of each tool and elides the older ones', () => {
    // bash at 7,16,22,31 keeps 22,31; read at 4,13,28 keeps 13,28; grep, edit, webfetch appear once.
    const result = proposeMicro(proposeParams(codingSession().items, { policy }));
    expect(result.edits[0]).toMatchObject({ op: 'elide', line_indexes: [4, 7, 16] });
    expect(result.edits[1]).toMatchObject({ digest: { concepts: ['bash', 'read'], errors: ['npm test exit code 1: 3 failed'], covers_items: 3 } });
    expect(result.context_tokens_after).toBe(10_610 - 3 * 976 + 72);
    expect(result.rationale).toBe('context 10610 tokens exceeds trigger 8000; micro-stubbing 3 stale tool outputs');
  });

  it('takes the per-tool count from strategy_params and never picks a protected output', () => {
    const items = codingSession().items;
    expect(microCandidates(items, 2, 0).map((i) => i.line_index)).toEqual([4, 7, 10, 13, 16, 19, 22, 25]);
    const result = proposeMicro(proposeParams(items, { policy: { ...policy, floor_tokens: 0, strategy_params: { keep_per_label: 0 } } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [4, 7, 10, 13, 16, 19, 22, 25] });
  });

  it('returns no plan below the trigger', () => {
    expect(proposeMicro(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } })).edits).toEqual([]);
  });
});
