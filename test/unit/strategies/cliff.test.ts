import { describe, expect, it } from 'vitest';
import { CLIFF_STUB, proposeCliff, stepStarts } from '../../../plugins/strategies-core/src/cliff.js';
import { elisionSavings } from '../../../sdk/tokens.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';

/** Eight steps; results at 4, 7, ..., 25 with sizes that straddle the 500-byte cut. */
function cliffSession() {
  const b = new TranscriptBuilder();
  b.system();
  b.user('port the parser');
  for (const bytes of [4000, 400, 501, 500, 4000, 4000, 4000, 4000]) b.step(null, { label: 'Bash(make)', bytes });
  return b;
}

const policy = { trigger_tokens: 1000, floor_tokens: 0, keep_recent_tool_outputs: 2, keep_recent_turns: 3, result_max_bytes: 500 };

describe('cliff', () => {
  it('finds step starts, ignoring records with no live tokens', () => {
    const b = new TranscriptBuilder();
    b.user('go');
    b.assistant();
    b.reasoning();
    b.toolCall('Bash');
    b.toolResult({ label: 'Bash', bytes: 10 });
    b.meta();
    b.assistant();
    b.meta();
    b.assistant();
    b.toolResult({ label: 'Bash', bytes: 10 });
    b.assistant();
    expect(stepStarts(b.items)).toEqual([1, 6, 10]);
  });

  it('keeps the head and the newest steps, dropping only older results over result_max_bytes', () => {
    const b = cliffSession();
    const result = proposeCliff(proposeParams(b.items, { policy }));
    // Steps start at 2, 5, ..., 23; the newest three start at 17, so 4, 10 and 16 go (501 > 500, 500 stays).
    expect(result.edits).toEqual([{ op: 'elide', line_indexes: [4, 10, 16], stub_template: CLIFF_STUB }]);
    const saved = [4, 10, 16].reduce((s, line) => s + elisionSavings(b.items[line]!), 0);
    expect(result.context_tokens_after).toBe(b.contextTokens() - saved);
    expect(result.rationale).toBe(
      `context ${b.contextTokens()} tokens exceeds trigger 1000; head and newest 3 of 8 assistant steps kept verbatim; dropping 3 older tool results over 500 bytes, keeping 2 smaller ones`,
    );
  });

  it('with keep_recent_turns 0 runs to the end but still spares the protected outputs', () => {
    const result = proposeCliff(proposeParams(cliffSession().items, { policy: { ...policy, keep_recent_turns: 0 } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [4, 10, 16, 19] });
  });

  it('is idempotent: a compacted copy at the same cut yields no further plan', () => {
    const b = cliffSession();
    const first = proposeCliff(proposeParams(b.items, { policy }));
    const dropped = new Set((first.edits[0] as { line_indexes: number[] }).line_indexes);
    const stubbed = b.items.map((item) => (dropped.has(item.line_index) ? { ...item, elidable_bytes: 60, est_tokens: 31 } : item));
    const second = proposeCliff(proposeParams(stubbed, { policy }));
    expect(second.edits).toEqual([]);
  });

  it('does not count an output over result_max_bytes whose stubs cost what it holds among the smaller ones it keeps', () => {
    // 600 bytes in 7 parts: 150 tokens, under the 7 stubs' 168, so it stays although it is over 500.
    const b = new TranscriptBuilder();
    b.system();
    b.user('port the parser');
    for (const [bytes, parts] of [[4000, 1], [600, 7], [300, 1], [4000, 1], [4000, 1], [4000, 1]] as const) b.step(null, { label: 'Bash(make)', bytes, parts });
    const cut = { ...policy, keep_recent_tool_outputs: 0, keep_recent_turns: 2 };
    const result = proposeCliff(proposeParams(b.items, { policy: cut }));
    expect(result.edits).toEqual([{ op: 'elide', line_indexes: [4, 13], stub_template: CLIFF_STUB }]);
    expect(result.rationale).toMatch(/dropping 2 older tool results over 500 bytes, keeping 1 smaller ones and 1 larger ones whose stubs would cost as much as they hold$/);

    const onlySplit = new TranscriptBuilder();
    onlySplit.user('port the parser');
    for (const [bytes, parts] of [[600, 7], [4000, 1], [4000, 1]] as const) onlySplit.step(null, { label: 'Bash(make)', bytes, parts });
    expect(proposeCliff(proposeParams(onlySplit.items, { policy: cut })).rationale).toBe(
      'the 1 tool results over 500 bytes before the newest 2 assistant steps hold so many parts that their stubs would cost as much as they do',
    );
  });

  it('returns no plan when there are no steps older than the kept ones, or below the trigger', () => {
    expect(proposeCliff(proposeParams(cliffSession().items, { policy: { ...policy, keep_recent_turns: 8 } })).rationale).toBe(
      '8 assistant steps, none older than the newest 8',
    );
    expect(proposeCliff(proposeParams(cliffSession().items, { policy: { ...policy, trigger_tokens: 1_000_000 } })).edits).toEqual([]);
  });
});
