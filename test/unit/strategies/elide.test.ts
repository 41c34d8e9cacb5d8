import { describe, expect, it } from 'vitest';
import { proposeElide } from '../../../plugins/strategies-core/src/elide.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

describe('elide', () => {
  it('masks the oldest stale outputs until the projection reaches the floor', () => {
    const result = proposeElide(proposeParams(codingSession().items, { policy }));
    expect(result.edits).toEqual([{ op: 'elide', line_indexes: [4, 7, 10, 13, 16], stub_template: '[output elided by gobstopper: {bytes} bytes]' }]);
    // 10,610 - 5 × 976 reclaimable tokens.
    expect(result.context_tokens_after).toBe(5730);
    expect(result.rationale).toBe('context 10610 tokens exceeds trigger 8000; eliding 5 of 8 stale tool outputs');
  });

  it('names the trigger that fired when quota pressure moved it', () => {
    const result = proposeElide(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 12_000, effective_trigger_tokens: 8400, quota_pressure: 'high' } }));
    expect(result.rationale).toMatch(/^context 10610 tokens exceeds the effective trigger 8400 \(trigger 12000 under high quota pressure\); /);
  });

  it('never touches the protected recent outputs, even with no floor', () => {
    const result = proposeElide(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 0 } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [4, 7, 10, 13, 16, 19, 22, 25] });
  });

  it('returns no plan below the effective trigger and fires exactly at it', () => {
    const items = codingSession().items;
    const below = proposeElide(proposeParams(items, { policy: { ...policy, trigger_tokens: 20_000 } }));
    expect(below).toEqual({ edits: [], rationale: 'context 10610 tokens is below the effective trigger 20000' });
    const quota = proposeElide(proposeParams(items, { policy: { ...policy, trigger_tokens: 10_000, effective_trigger_tokens: 10_611 } }));
    expect(quota.edits).toEqual([]);
    const at = proposeElide(proposeParams(items, { policy: { ...policy, trigger_tokens: 10_610 } }));
    expect(at.edits).toHaveLength(1);
  });

  it('uses the host context count, not the item sum', () => {
    // Reported usage says 7,000: only one elision is needed to reach 6,000.
    const result = proposeElide(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 5000 }, contextTokens: 7000 }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [4, 7] });
    expect(result.context_tokens_after).toBe(7000 - 2 * 976);
  });

  it('says why when nothing is stale or the floor is already met', () => {
    const b = new TranscriptBuilder();
    b.system({ tokens: 9000 });
    b.step(null, { label: 'Bash(ls)', bytes: 4000 });
    const none = proposeElide(proposeParams(b.items, { policy }));
    expect(none).toEqual({ edits: [], rationale: 'no stale tool outputs outside the 2 protected recent ones' });
    const met = proposeElide(proposeParams(codingSession().items, { policy: { ...policy, floor_tokens: 11_000, trigger_tokens: 10_000 } }));
    expect(met.rationale).toBe('context 10610 tokens is already at or below the floor 11000');
    // Stale outputs that are all too small to pay for their stubs are named as such.
    const small = new TranscriptBuilder();
    small.system({ tokens: 9000 });
    for (let i = 0; i < 5; i++) small.step(null, { label: 'Bash(true)', bytes: 80 });
    expect(proposeElide(proposeParams(small.items, { policy })).rationale).toBe('3 stale tool outputs outside the 2 protected recent ones, none large enough to reclaim tokens once its stub is paid for');
    // Outputs in context the provider offers no payload of (a redacted or tiny output) are counted apart.
    const inert = small.items.map((item) => (item.kind === 'tool_result' ? { ...item, elidable_bytes: null, elidable_parts: 0 } : item));
    expect(proposeElide(proposeParams(inert, { policy })).rationale).toBe(
      'no stale tool outputs outside the 2 protected recent ones; 5 tool outputs in context have no elidable payload (too small, or a shape the provider does not elide)',
    );
  });

  it('skips dead records and outputs too small to pay for their stub', () => {
    const b = new TranscriptBuilder();
    b.system({ tokens: 5000 });
    b.deadResult('Read(a.ts)', 9000); // 1: no live tokens
    b.step(null, { label: 'Bash(true)', bytes: 80 }); // result 4: 80 bytes reclaim nothing
    b.step(null, { label: 'Read(b.ts)', bytes: 4000 }); // 7
    b.step(null, { label: 'Read(c.ts)', bytes: 4000 }); // 10 (protected)
    const result = proposeElide(proposeParams(b.items, { policy: { trigger_tokens: 1000, floor_tokens: 0, keep_recent_tool_outputs: 1 } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [7] });
  });
});
