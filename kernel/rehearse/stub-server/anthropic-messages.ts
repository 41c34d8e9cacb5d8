import type { ServerResponse } from 'node:http';
import { replyId, replyUsage, STUB_REPLY_TEXT } from './reply.js';
import { sendJson, startEventStream, writeEvent } from './sse.js';

/** `POST /v1/messages`: one text block, streamed as the Messages API streams it, or as one JSON body. */
export function answerMessages(res: ServerResponse, seq: number, body: Record<string, unknown>, requestBytes: number): void {
  const id = replyId('msg', seq);
  const model = typeof body.model === 'string' ? body.model : 'claude-stub';
  const usage = replyUsage(requestBytes);
  const startUsage = { input_tokens: usage.input_tokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (body.stream !== true) {
    sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: STUB_REPLY_TEXT }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { ...startUsage, output_tokens: usage.output_tokens },
    });
    return;
  }
  startEventStream(res);
  writeEvent(res, 'message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage },
  });
  writeEvent(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  writeEvent(res, 'ping', { type: 'ping' });
  writeEvent(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: STUB_REPLY_TEXT } });
  writeEvent(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  writeEvent(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  writeEvent(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

/** `POST /v1/messages/count_tokens`: the estimate the project uses everywhere, ceil(bytes / 4). */
export function answerCountTokens(res: ServerResponse, requestBytes: number): void {
  sendJson(res, 200, { input_tokens: replyUsage(requestBytes).input_tokens });
}
