import { describe, expect, it } from 'vitest';
import { controlWords, nativeControlOf } from '../../../kernel/policy/provider-controls.js';

describe("how a provider_compact edit's control reads for people", () => {
  it("names a built-in provider's own control, and a strategy's other wording only quoted", () => {
    expect(nativeControlOf('codex')).toBe('thread/compact/start');
    // What a person types comes first; the app-server method stays named for orchestrators.
    expect(controlWords('codex', 'thread/compact/start')).toBe('/compact at the Codex prompt, or thread/compact/start over its app-server');
    expect(controlWords('codex', 'compact now')).toBe(`/compact at the Codex prompt, or thread/compact/start over its app-server; the strategy's words: "compact now"`);
    expect(controlWords('claude_code', 'please run /compact now')).toBe(`/compact; the strategy's words: "please run /compact now"`);
  });

  it('quotes the whole text for a provider it does not know, escapes included', () => {
    expect(nativeControlOf('someone_else')).toBeNull();
    expect(controlWords('someone_else', 'say "hi"')).toBe(`the strategy's words: "say \\"hi\\""`);
    expect(controlWords(null, '/compact')).toBe(`the strategy's words: "/compact"`);
  });
});
