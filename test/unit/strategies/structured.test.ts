import { describe, expect, it } from 'vitest';
import { proposeStructured } from '../../../plugins/strategies-core/src/structured.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { CODING_GOAL, codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

describe('structured', () => {
  it('masks every stale output before the newest 24 records, with no floor walk, and adds a card', () => {
    // 32 records: lines 0..7 are covered, so only the results at 4 and 7 go, although the floor is not reached.
    const result = proposeStructured(proposeParams(codingSession().items, { policy }));
    expect(result.edits).toEqual([
      { op: 'elide', line_indexes: [4, 7], stub_template: '[output elided by gobstopper: {bytes} bytes]' },
      {
        op: 'inject_digest',
        digest: {
          goal: CODING_GOAL,
          summary: CODING_GOAL,
          concepts: ['bash', 'read'],
          files_touched: ['src/auth/login.ts 120 lines'],
          decisions: [],
          errors: ['npm test exit code 1: 3 failed'],
          open_tasks: [],
          current_work: 'running the linter before commit',
          context: 'provider: claude_code',
          covers_items: 2,
        },
      },
    ]);
    expect(result.context_tokens_after).toBe(10_610 - 2 * 976 + 68);
    expect(result.rationale).toContain('masking 2 stale outputs over 8 items, 24 tail items kept');
  });

  it('has nothing to do when the whole transcript fits in the kept tail', () => {
    const b = new TranscriptBuilder();
    b.system({ tokens: 9000 });
    for (let i = 0; i < 7; i++) b.step(null, { label: 'Bash(ls)', bytes: 4000 });
    const result = proposeStructured(proposeParams(b.items, { policy }));
    expect(result).toEqual({ edits: [], rationale: 'the transcript has no records before the newest 24' });
  });

  it('refuses a plan whose card costs more than the elisions reclaim', () => {
    const b = new TranscriptBuilder();
    b.system({ tokens: 9000 });
    b.user('x'.repeat(500));
    b.step(null, { label: 'Bash(ls)', bytes: 120, summary: 'y'.repeat(500) }); // reclaims 6 tokens
    for (let i = 0; i < 24; i++) b.assistant(null);
    const result = proposeStructured(proposeParams(b.items, { policy: { ...policy, keep_recent_tool_outputs: 0 } }));
    expect(result.edits).toEqual([]);
    expect(result.rationale).toMatch(/would reclaim less than the state card costs/);
  });

  it('returns no plan below the trigger', () => {
    expect(proposeStructured(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } })).edits).toEqual([]);
  });
});
