import type { ServerResponse } from 'node:http';
import { replyId, replyUsage, STUB_MODEL, STUB_REPLY_TEXT } from './reply.js';
import { sendJson, startEventStream, writeEvent } from './sse.js';

/**
 * `POST /v1/responses`: one assistant message. The event order is the one Codex 0.171 accepted:
 * created, output_item.added, output_text.delta, output_item.done, completed (with full usage).
 */
export function answerResponses(res: ServerResponse, seq: number, body: Record<string, unknown>, requestBytes: number): void {
  const id = replyId('resp', seq);
  const messageId = replyId('msg', seq);
  const model = typeof body.model === 'string' ? body.model : STUB_MODEL;
  const { input_tokens, output_tokens } = replyUsage(requestBytes);
  const usage = {
    input_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input_tokens + output_tokens,
  };
  const message = {
    type: 'message',
    id: messageId,
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: STUB_REPLY_TEXT, annotations: [] }],
  };
  const response = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] as unknown[] };
  if (body.stream === false) {
    sendJson(res, 200, { ...response, status: 'completed', output: [message], usage });
    return;
  }
  startEventStream(res);
  let sequence = 0;
  const emit = (type: string, fields: Record<string, unknown>): void => writeEvent(res, type, { type, sequence_number: sequence++, ...fields });
  emit('response.created', { response });
  emit('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } });
  emit('response.output_text.delta', { item_id: messageId, output_index: 0, content_index: 0, delta: STUB_REPLY_TEXT });
  emit('response.output_item.done', { output_index: 0, item: message });
  emit('response.completed', { response: { ...response, status: 'completed', output: [message], usage } });
  res.end();
}

/** `GET /v1/models`: both list shapes (`data` for the OpenAI API, `models` for Codex's own catalogue). */
export function answerModels(res: ServerResponse, method: string): void {
  sendJson(res, 200, { object: 'list', data: [{ id: STUB_MODEL, object: 'model', created: 0, owned_by: 'gobstopper' }], models: [] }, method);
}
