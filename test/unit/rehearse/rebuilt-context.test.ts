import { describe, expect, it } from 'vitest';
import { analyzeMessagesRequest, analyzeModelRequest, analyzeResponsesRequest, type RecordedRequest } from '../../../kernel/rehearse/index.js';
import { claude, claudeResumeBody, codex, codexResumeBody, PROBE } from './request-builders.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe('rebuilt context of a Claude Code request', () => {
  it('counts the transcript messages, blocks and tool pairs, and sets the client additions aside', () => {
    const body = claudeResumeBody();
    const ctx = analyzeMessagesRequest(body, PROBE);
    expect(ctx.api).toBe('anthropic_messages');
    expect(ctx.messages).toBe(4);
    expect(ctx.units).toBe(8);
    expect(ctx.by_kind).toMatchObject({
      user: { units: 1 },
      reasoning: { units: 1 },
      assistant: { units: 2 },
      tool_call: { units: 2 },
      tool_result: { units: 2 },
    });
    expect(ctx.by_kind.meta).toBeUndefined();
    expect(ctx).toMatchObject({ tool_calls: 2, tool_results: 2, unanswered_tool_calls: 0, orphan_tool_results: 0 });
    // The probe message and the trailing system listing are the client's; so is the opening reminder.
    expect(ctx.client_added).toMatchObject({ messages: 2, units: 4, synthetic_tool_results: 0 });
    const messages = body.messages as { role: string; content: unknown[] }[];
    const kept = [{ role: 'user', content: [messages[0]!.content[1]] }, messages[1], messages[2], messages[3]];
    expect(ctx.bytes).toBe(bytes(kept));
    expect(ctx.est_tokens).toBe(Math.ceil(ctx.bytes / 4));
    expect(ctx.total_messages).toBe(6);
    expect(ctx.total_bytes).toBe(bytes(messages));
    expect(ctx.tools_offered).toBe(2);
    expect(ctx.instructions_bytes).toBe(bytes(body.system));
  });

  it('treats the synthetic "Continue" / "No response requested." repair as the client\'s', () => {
    const body = claude.body([
      claude.user(claude.text('first')),
      claude.assistant(claude.text('answer')),
      claude.user(claude.text('interrupted question'), claude.text('Continue from where you left off.')),
      claude.assistant(claude.text('No response requested.')),
      claude.user(claude.text(PROBE)),
    ]);
    const ctx = analyzeMessagesRequest(body, PROBE);
    expect(ctx.messages).toBe(3);
    expect(ctx.by_kind.user).toEqual({ units: 2, est_tokens: expect.any(Number) });
    expect(ctx.client_added.messages).toBe(2);
    expect(ctx.client_added.units).toBe(3);
  });

  it('keeps reminders that are not the opening context as transcript meta, and reads string content', () => {
    const body = claude.body([
      { role: 'user', content: 'plain string prompt' },
      claude.assistant(claude.text('ok')),
      claude.user(claude.reminder('a file changed'), claude.text('next')),
      claude.assistant(claude.text('done')),
      claude.user(claude.text(PROBE)),
    ]);
    const ctx = analyzeMessagesRequest(body, PROBE);
    expect(ctx.messages).toBe(4);
    expect(ctx.by_kind.meta?.units).toBe(1);
    expect(ctx.by_kind.user?.units).toBe(2);
  });

  it('reports orphan results and unanswered calls', () => {
    const body = claude.body([
      claude.user(claude.text('go')),
      claude.assistant(claude.toolUse('a', 'ls')),
      claude.user(claude.toolResult('zz', 'where from?')),
      claude.assistant(claude.text('hm')),
      claude.user(claude.text(PROBE)),
    ]);
    const ctx = analyzeMessagesRequest(body, PROBE);
    expect(ctx).toMatchObject({ tool_calls: 1, tool_results: 1, unanswered_tool_calls: 1, orphan_tool_results: 1 });
  });

  it('without the probe in the request, counts everything as transcript', () => {
    const body = claude.body([claude.user(claude.text('a')), claude.assistant(claude.text('b'))]);
    const ctx = analyzeMessagesRequest(body, PROBE);
    expect(ctx.messages).toBe(2);
    expect(ctx.client_added.messages).toBe(0);
  });
});

describe('rebuilt context of a Codex request', () => {
  it('counts the transcript items and sets aside base instructions, injected context, the probe and "aborted" outputs', () => {
    const body = codexResumeBody();
    const ctx = analyzeResponsesRequest(body, PROBE);
    expect(ctx.api).toBe('openai_responses');
    expect(ctx.messages).toBe(8);
    expect(ctx.units).toBe(8);
    expect(ctx.by_kind).toMatchObject({
      system: { units: 1 },
      user: { units: 2 },
      reasoning: { units: 1 },
      tool_call: { units: 2 },
      tool_result: { units: 1 },
      assistant: { units: 1 },
    });
    expect(ctx).toMatchObject({ tool_calls: 2, tool_results: 1, unanswered_tool_calls: 1, orphan_tool_results: 0 });
    expect(ctx.client_added).toMatchObject({ messages: 5, units: 5, synthetic_tool_results: 1 });
    const input = body.input as unknown[];
    expect(ctx.bytes).toBe(bytes(input.slice(1, 9)));
    expect(ctx.total_messages).toBe(13);
    expect(ctx.instructions_bytes).toBe(bytes(input[0]));
  });

  it("measures the client's bookkeeping on messages as the client's, not the transcript's", () => {
    const plain = codexResumeBody();
    const tagged = codexResumeBody();
    const input = tagged.input as Record<string, unknown>[];
    const passthrough = { content_item_kinds: ['input_text'], turn_id: 'turn-1' };
    for (const item of input) if (item.type === 'message') item.internal_chat_message_metadata_passthrough = passthrough;
    const a = analyzeResponsesRequest(plain, PROBE);
    const b = analyzeResponsesRequest(tagged, PROBE);
    expect(b.bytes).toBe(a.bytes);
    expect(b.messages).toBe(a.messages);
    expect(b.client_added.bytes).toBeGreaterThan(a.client_added.bytes);
    expect(b.total_bytes).toBeGreaterThan(a.total_bytes);
  });

  it('reads a plain string input as one user message', () => {
    const ctx = analyzeResponsesRequest({ input: 'hello' }, PROBE);
    expect(ctx.messages).toBe(1);
    expect(ctx.by_kind.user?.units).toBe(1);
  });

  it('dispatches recorded requests by route and ignores what is not a model turn', () => {
    const base: RecordedRequest = { seq: 1, method: 'POST', path: '/v1/responses', headers: {}, body: codexResumeBody(), body_bytes: 0, received_at_ms: 0 };
    expect(analyzeModelRequest(base, PROBE)?.api).toBe('openai_responses');
    expect(analyzeModelRequest({ ...base, path: '/v1/messages?beta=true', body: claudeResumeBody() }, PROBE)?.api).toBe('anthropic_messages');
    expect(analyzeModelRequest({ ...base, method: 'HEAD', path: '/' }, PROBE)).toBeNull();
    expect(analyzeModelRequest({ ...base, body: 'text' }, PROBE)).toBeNull();
    expect(analyzeModelRequest({ ...base, path: '/v1/messages/count_tokens' }, PROBE)).toBeNull();
  });

  it('keeps the recorded context items that precede real turns', () => {
    const body = codex.body([
      codex.message('developer', 'base'),
      codex.message('user', '<environment_context>recorded</environment_context>'),
      codex.message('user', 'task'),
      codex.message('assistant', 'done'),
      codex.message('user', PROBE),
    ]);
    const ctx = analyzeResponsesRequest(body, PROBE);
    expect(ctx.messages).toBe(3);
    expect(ctx.client_added.messages).toBe(2);
  });
});
