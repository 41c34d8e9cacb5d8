import { describe, expect, it } from 'vitest';
import type { Edit } from '../../../schemas/generated/types.js';
import { admitEdits } from '../../../kernel/validate/edit-rules.js';
import { prefixTokens, projectContextAfter } from '../../../kernel/validate/projection.js';
import { digestOverheadTokens } from '../../../sdk/state-card.js';
import { item } from '../policy/transcript-builder.js';

// est 1010 / 4000 elidable bytes: savings = min(1010, 1000 - 24) = 976 each.
const items = [
  item(0, 'user', 50),
  item(1, 'tool_call', 20, { tool_use_ids: ['a'] }),
  item(2, 'tool_result', 1010, { elidable_bytes: 4000, tool_use_ids: ['a'] }),
  item(3, 'tool_call', 20, { tool_use_ids: ['b'] }),
  item(4, 'tool_result', 1010, { elidable_bytes: 4000, elidable_parts: 3, tool_use_ids: ['b'] }),
  item(5, 'assistant', 40),
];
const before = 10_000;
const project = (edits: Edit[], floor = 500) => projectContextAfter({ items, edits, context_tokens_before: before, floor_tokens: floor });

describe('host projection', () => {
  it('subtracts each elided payload less its stub, per part', () => {
    // line 4 has three parts: 1000 - 3 × 24 = 928.
    expect(project([{ op: 'elide', line_indexes: [2, 4], stub_template: 's' }])).toBe(before - 976 - 928);
  });

  it('adds the card text plus framing', () => {
    const digest = { covers_items: 2, goal: 'ship the fix', files_touched: ['src/a.ts'] };
    const after = project([{ op: 'elide', line_indexes: [2], stub_template: 's' }, { op: 'inject_digest', digest }]);
    expect(after).toBe(before - 976 + digestOverheadTokens(digest));
    expect(digestOverheadTokens(digest)).toBe(Math.ceil((12 + 8 + 64) / 4));
  });

  it('takes the floor as the landing point of a provider compaction', () => {
    expect(project([{ op: 'provider_compact', control: '/compact' }], 1234)).toBe(1234);
    expect(project([{ op: 'provider_compact', control: '/compact' }], 20_000)).toBe(before);
  });

  it('reclaims the tool results a cache edit names, each once', () => {
    expect(project([{ op: 'cache_edit', tool_use_ids: ['a'] }])).toBe(before - 976);
    expect(project([{ op: 'cache_edit', tool_use_ids: ['a', 'b'] }])).toBe(before - 976 - 928);
  });

  it('never projects below zero before adding a card', () => {
    const after = projectContextAfter({ items, edits: [{ op: 'elide', line_indexes: [2, 4], stub_template: 's' }], context_tokens_before: 100, floor_tokens: 0 });
    expect(after).toBe(0);
  });
});

describe('prefix tokens', () => {
  it('counts the records before the first elided line', () => {
    expect(prefixTokens(items, [{ op: 'elide', line_indexes: [4, 2], stub_template: 's' }], before)).toBe(70);
    expect(prefixTokens(items, [{ op: 'elide', line_indexes: [4], stub_template: 's' }], before)).toBe(50 + 20 + 1010 + 20);
  });

  it('is never more than the context, even when item estimates outweigh a reported one', () => {
    const edits = [{ op: 'elide' as const, line_indexes: [4], stub_template: 's' }];
    expect(prefixTokens(items, edits, 500)).toBe(500);
  });

  it('keeps the whole context for a provider compaction', () => {
    expect(prefixTokens(items, [{ op: 'provider_compact', control: '/compact' }], before)).toBe(before);
  });

  it('counts up to the first tool result a cache edit drops', () => {
    expect(prefixTokens(items, [{ op: 'cache_edit', tool_use_ids: ['b'] }], before)).toBe(50 + 20 + 1010 + 20);
  });
});

describe('projection after admission', () => {
  it('gives the same numbers from what admission found as from the edits alone', () => {
    const plans: Edit[][] = [
      [{ op: 'elide', line_indexes: [2, 4], stub_template: 's' }],
      [{ op: 'elide', line_indexes: [4], stub_template: 's' }, { op: 'elide', line_indexes: [2], stub_template: 't' }],
      [{ op: 'elide', line_indexes: [2], stub_template: 's' }, { op: 'inject_digest', digest: { covers_items: 2, goal: 'ship the fix' } }],
      [{ op: 'inject_digest', digest: { covers_items: 1, goal: 'ship the fix' } }],
      [{ op: 'cache_edit', tool_use_ids: ['b'] }],
    ];
    for (const edits of plans) {
      const admitted = admitEdits(edits, { items, keep_recent_tool_outputs: 0, provider: 'claude_code' });
      expect(projectContextAfter({ items, edits, context_tokens_before: before, floor_tokens: 500, admitted })).toBe(project(edits));
      expect(prefixTokens(items, edits, before, admitted)).toBe(prefixTokens(items, edits, before));
    }
  });
});
