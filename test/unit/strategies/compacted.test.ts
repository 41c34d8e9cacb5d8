import { describe, expect, it } from 'vitest';
import { proposeCompacted } from '../../../plugins/strategies-core/src/compacted.js';
import { digestOverheadTokens } from '../../../sdk/state-card.js';
import type { InjectDigestEdit } from '../../../schemas/generated/types.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { CODING_GOAL, codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

describe('compacted', () => {
  it('elides oldest first and appends a state card of what went', () => {
    const result = proposeCompacted(proposeParams(codingSession().items, { policy }));
    expect(result.edits[0]).toEqual({ op: 'elide', line_indexes: [4, 7, 10, 13, 16], stub_template: '[output elided by gobstopper: {bytes} bytes]' });
    const digest = (result.edits[1] as InjectDigestEdit).digest;
    expect(digest).toEqual({
      goal: CODING_GOAL,
      summary: CODING_GOAL,
      concepts: ['bash', 'grep', 'read'],
      files_touched: ['src/auth/login.ts 120 lines', 'redirect: 4 matches', 'src/auth/session.ts 80 lines', 'git status clean'],
      decisions: [],
      errors: ['npm test exit code 1: 3 failed'],
      open_tasks: [],
      current_work: 'running the linter before commit',
      context: 'provider: claude_code',
      covers_items: 5,
    });
    expect(digestOverheadTokens(digest)).toBe(85);
    expect(result.context_tokens_after).toBe(5730 + 85);
    expect(result.rationale).toBe('context 10610 tokens exceeds trigger 8000; appending a state card for 5 elided items');
  });

  it('takes more outputs when the card itself would push the context over the floor', () => {
    // Eliding 4..16 reaches 5,730 <= 5,780, but the 85-token card lands at 5,815.
    const result = proposeCompacted(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 5780 } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [4, 7, 10, 13, 16, 19] });
    const digest = (result.edits[1] as InjectDigestEdit).digest;
    expect(digest.open_tasks).toEqual(['TODO: handle expired tokens']);
    expect(digest.concepts).toEqual(['bash', 'edit', 'grep', 'read']);
    expect(digest.covers_items).toBe(6);
    expect(result.context_tokens_after).toBe(4754 + 93);
  });

  it('returns no plan below the trigger', () => {
    expect(proposeCompacted(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 11_000 } })).edits).toEqual([]);
  });
});
