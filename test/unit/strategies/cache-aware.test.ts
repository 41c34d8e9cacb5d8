import { describe, expect, it } from 'vitest';
import { proposeCacheAware } from '../../../plugins/strategies-core/src/cache-aware.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

describe('cache_aware', () => {
  it('elides the newest stale outputs right before the protected tail, keeping the prefix', () => {
    const result = proposeCacheAware(proposeParams(codingSession().items, { policy }));
    expect(result.edits[0]).toMatchObject({ op: 'elide', line_indexes: [13, 16, 19, 22, 25] });
    expect(result.edits[1]).toMatchObject({
      op: 'inject_digest',
      digest: {
        concepts: ['bash', 'edit', 'read', 'webfetch'],
        files_touched: ['src/auth/session.ts 80 lines', 'git status clean', 'npm test passed', 'release notes'],
        open_tasks: ['TODO: handle expired tokens'],
        errors: [],
        covers_items: 5,
      },
    });
    expect(result.context_tokens_after).toBe(5730 + 82);
    expect(result.rationale).toBe(
      'context 10610 tokens exceeds trigger 8000; eliding 5 latest stale outputs before tail to keep 13 prefix records in cache',
    );
  });

  it('returns no plan below the trigger', () => {
    expect(proposeCacheAware(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } })).edits).toEqual([]);
  });
});
