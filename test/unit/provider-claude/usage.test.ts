import { describe, expect, it } from 'vitest';
import { modelContextWindow } from '../../../plugins/provider-claude-code/src/models.js';
import { ClaudeSessionBuilder, type Usage } from '../../fixtures/claude/session-builder.js';
import { branchedSession, compactedSession, modernSession } from '../../fixtures/claude/sessions.js';
import { parse, scratch } from './support.js';

const tmp = scratch('claude-usage-');
const u = (input: number, cacheRead: number, cacheCreation: number, output: number): Usage => ({
  input_tokens: input,
  cache_read_input_tokens: cacheRead,
  cache_creation_input_tokens: cacheCreation,
  output_tokens: output,
});

describe('usage', () => {
  it('reports input + cache_read + cache_creation + output of the last live assistant record', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('one');
    b.text('first', u(10, 1000, 200, 30));
    b.user('two');
    b.assistant([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], { usage: u(3, 5000, 100, 77) });
    const t = await parse(tmp.file('ctx.jsonl', b.toJsonl()));
    expect(t.usage).toMatchObject({
      context_tokens: 3 + 5000 + 100 + 77,
      context_state: 'reported',
      model: 'claude-opus-4-6',
      model_context_window: 200_000,
      // Each response once: its split records repeat the same input counters.
      lifetime_input_tokens: 10 + 1000 + 200 + (3 + 5000 + 100),
      lifetime_cached_tokens: 1000 + 5000,
      lifetime_scope: 'full',
      context_components: null,
      context_reason: null,
    });
  });

  it('ignores a dead branch reporting a larger context', async () => {
    const { b, deadLines } = branchedSession();
    const deadReply = b.records[deadLines.at(-1)!]!;
    ((deadReply.message as Record<string, unknown>).usage as Usage).input_tokens = 9000;
    const t = await parse(tmp.file('dead.jsonl', b.toJsonl()));
    const lastLive = b.records.at(-1)!.message as { usage: Usage };
    const x = lastLive.usage;
    expect(t.usage.context_tokens).toBe(x.input_tokens + x.cache_read_input_tokens + x.cache_creation_input_tokens + x.output_tokens);
  });

  it('skips the zero usage of records the client writes itself', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('one');
    b.text('real', u(1, 2, 3, 4));
    b.user('two');
    const synthetic = b.text('No response requested.', u(0, 0, 0, 0));
    ((b.byUuid(synthetic).message as Record<string, unknown>).model as string) = '<synthetic>';
    const t = await parse(tmp.file('synthetic.jsonl', b.toJsonl()));
    expect(t.usage.context_tokens).toBe(10);
  });

  it('says unknown, with the components it could read, when the counters are malformed', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('one');
    const a = b.text('x', u(1, 2, 3, 4));
    ((b.byUuid(a).message as Record<string, unknown>).usage as Record<string, unknown>).output_tokens = '4';
    let t = await parse(tmp.file('malformed.jsonl', b.toJsonl()));
    expect(t.usage).toMatchObject({ context_state: 'unknown', context_reason: 'malformed_component', context_tokens: 0 });
    expect(t.usage.context_components).toEqual({ input_tokens: 1, cache_read_tokens: 2, cache_creation_tokens: 3, output_tokens: null });
    delete ((b.byUuid(a).message as Record<string, unknown>).usage as Record<string, unknown>).input_tokens;
    t = await parse(tmp.file('missing.jsonl', b.toJsonl()));
    expect(t.usage.context_reason).toBe('missing_component');
  });

  it('counts missing cache counters as zero (old files omit them)', async () => {
    const b = new ClaudeSessionBuilder({ version: '1.0.98' });
    b.user('one');
    const a = b.text('x');
    (b.byUuid(a).message as Record<string, unknown>).usage = { input_tokens: 100, cache_read_input_tokens: 10, output_tokens: 2 };
    const t = await parse(tmp.file('old.jsonl', b.toJsonl()));
    expect(t.usage.context_tokens).toBe(112);
  });

  it('reads the post-compaction report, and says reset when nothing answered since the compaction', async () => {
    const { b } = compactedSession();
    let t = await parse(tmp.file('compacted.jsonl', b.toJsonl()));
    expect(t.usage.context_state).toBe('reported');
    const fresh = compactedSession().b;
    fresh.records.splice(fresh.records.findIndex((r) => r.isCompactSummary === true) + 1);
    t = await parse(tmp.file('reset.jsonl', fresh.toJsonl()));
    expect(t.usage.context_state).toBe('reset');
    expect(t.usage.context_tokens).toBe(0);
  });

  it('knows context windows from model names only where it can', () => {
    expect(modelContextWindow('claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(modelContextWindow('claude-haiku-4-5-20251001')).toBe(200_000);
    expect(modelContextWindow('claude-3-5-sonnet-20241022')).toBe(200_000);
    expect(modelContextWindow('claude-sonnet-4-5-20250929[1m]')).toBe(1_000_000);
    expect(modelContextWindow('<synthetic>')).toBeNull();
    expect(modelContextWindow('sonnet')).toBeNull();
    expect(modelContextWindow('claude-fable-5')).toBeNull();
  });

  it('reports absent usage for a transcript without assistant reports', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('only a prompt');
    const t = await parse(tmp.file('none.jsonl', b.toJsonl()));
    expect(t.usage).toMatchObject({ context_state: 'absent', lifetime_scope: 'absent', context_tokens: 0 });
    const m = modernSession();
    expect((await parse(tmp.file('m.jsonl', m.toJsonl()))).usage.lifetime_scope).toBe('full');
  });
});
