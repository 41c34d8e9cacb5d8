import { describe, expect, it } from 'vitest';
import { checkAgainst } from '../../../kernel/plugins/protocol/schema-check.js';
import { validateScorerScoreResult, validateStrategyProposeResult, validateTranscriptItem } from '../../../schemas/generated/validators.js';

const check = (edits: unknown[]) => checkAgainst(validateStrategyProposeResult, { edits, rationale: 'r' });

describe('schema violations name the place that is wrong', () => {
  it('an edit missing a field of its own op is reported at that field, not as another op', () => {
    expect(check([{ op: 'provider_compact' }])).toEqual({ pointer: '/edits/0', message: "must have required property 'control'" });
    expect(check([{ op: 'elide', line_indexes: [1], stub_template: 'x' }, { op: 'cache_edit' }])).toEqual({ pointer: '/edits/1', message: "must have required property 'tool_use_ids'" });
    expect(check([{ op: 'elide', line_indexes: [-1], stub_template: 'x' }])).toMatchObject({ pointer: '/edits/0/line_indexes/0' });
  });

  it('an op no variant has stays an op error, listing the ops there are; a valid result has none', () => {
    expect(check([{ op: 'explode' }])).toEqual({ pointer: '/edits/0/op', message: 'must be one of "elide", "inject_digest", "provider_compact", "cache_edit"' });
    expect(check([{ op: 'elide', line_indexes: [1], stub_template: 'x' }])).toBeNull();
  });

  it('a value outside a closed list names the allowed values', () => {
    const item = { line_index: 0, kind: 'bogus', est_tokens: 1, elidable_bytes: null, label: 'x' };
    const violation = checkAgainst(validateTranscriptItem, item);
    expect(violation).toEqual({ pointer: '/kind', message: 'must be one of "system", "user", "assistant", "tool_call", "tool_result", "reasoning", "meta"' });
  });

  it('of many equally wrong elements, the first is named, not the one with the longest index', () => {
    const scores = Array.from({ length: 12 }, (_, line) => ({ line, p: 0.5 }));
    expect(checkAgainst(validateScorerScoreResult, { scores })).toMatchObject({ pointer: '/scores/0' });
  });
});
