import { describe, expect, it } from 'vitest';
import { proposeSawtooth } from '../../../plugins/strategies-control/src/sawtooth.js';
import { CLAUDE_INFO, CODEX_INFO, proposeParams } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 3000 };

describe('sawtooth', () => {
  it("proposes the provider's own control, projecting the floor", () => {
    const claude = proposeSawtooth(proposeParams(codingSession().items, { policy, provider: CLAUDE_INFO }));
    expect(claude).toEqual({
      edits: [{ op: 'provider_compact', control: 'claude: /compact (or --autocompact at launch)' }],
      rationale: 'context 10610 tokens exceeds trigger 8000',
      context_tokens_after: 3000,
    });
    const codex = proposeSawtooth(proposeParams(codingSession().items, { policy, provider: CODEX_INFO }));
    expect(codex.edits).toEqual([{ op: 'provider_compact', control: 'codex app-server: thread/compact/start' }]);
  });

  it('works for a live session with no items (usage only)', () => {
    const result = proposeSawtooth(proposeParams([], { policy, provider: CODEX_INFO, contextTokens: 9000, active: true }));
    expect(result.edits).toHaveLength(1);
  });

  it('has no plan when the provider offers no native control, or an unusable one', () => {
    const none = proposeSawtooth(proposeParams(codingSession().items, { policy, provider: { ...CODEX_INFO, native_control: null } }));
    expect(none).toEqual({ edits: [], rationale: 'provider codex offers no native compaction control' });
    const bad = proposeSawtooth(proposeParams(codingSession().items, { policy, provider: { ...CODEX_INFO, native_control: 'a\nb' } }));
    expect(bad.edits).toEqual([]);
  });

  it('returns no plan below the trigger', () => {
    expect(proposeSawtooth(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } })).edits).toEqual([]);
  });
});
