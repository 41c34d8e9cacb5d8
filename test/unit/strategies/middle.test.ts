import { describe, expect, it } from 'vitest';
import { proposeMiddle } from '../../../plugins/strategies-core/src/middle.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

describe('middle', () => {
  it('keeps the oldest and newest outputs and elides the middle ones, oldest first', () => {
    const result = proposeMiddle(proposeParams(codingSession().items, { policy }));
    expect(result.edits[0]).toMatchObject({ op: 'elide', line_indexes: [10, 13, 16, 19, 22] });
    expect(result.edits[1]).toMatchObject({ op: 'inject_digest', digest: { concepts: ['bash', 'edit', 'grep', 'read'], covers_items: 5 } });
    expect(result.context_tokens_after).toBe(5730 + 82);
    expect(result.rationale).toBe('context 10610 tokens exceeds trigger 8000; keeping 2 head + 2 tail, eliding 5 middle outputs');
  });

  it('with no floor still leaves both ends', () => {
    const result = proposeMiddle(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 0, keep_recent_tool_outputs: 3 } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [13, 16, 19, 22] });
  });

  it('has no middle when the ends cover everything', () => {
    const result = proposeMiddle(proposeParams(codingSession().items, { policy: { ...policy, keep_recent_tool_outputs: 5 } }));
    expect(result).toEqual({ edits: [], rationale: 'no tool outputs between the 5 oldest and 5 newest kept ones' });
  });

  it('returns no plan below the trigger', () => {
    expect(proposeMiddle(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } })).edits).toEqual([]);
  });
});
