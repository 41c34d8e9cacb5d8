import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startStubServer, STUB_REPLY_TEXT, type StubServer } from '../../../kernel/rehearse/index.js';
import { GobstopperError } from '../../../kernel/errors.js';

interface SseEvent {
  event: string | null;
  data: Record<string, unknown>;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim().length > 0)
    .map((chunk) => {
      let event: string | null = null;
      let data = '';
      for (const line of chunk.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        if (line.startsWith('data: ')) data += line.slice(6);
      }
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

function rawGet(options: { port?: number; socketPath?: string; path: string; headers?: Record<string, string> }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', method: 'GET', ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves when `port` on 127.0.0.1 can be bound again. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('stub model server', () => {
  let stub: StubServer | null = null;
  afterEach(async () => {
    await stub?.close();
    stub = null;
  });

  it('listens on a free 127.0.0.1 port and answers the startup probes with 200', async () => {
    stub = await startStubServer();
    expect(stub.port).toBeGreaterThan(0);
    expect(stub.baseUrl).toBe(`http://127.0.0.1:${stub.port}`);
    const head = await fetch(stub.baseUrl + '/', { method: 'HEAD' });
    expect(head.status).toBe(200);
    const get = await fetch(stub.baseUrl + '/');
    expect(get.status).toBe(200);
    expect(stub.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['HEAD /', 'GET /']);
    expect(stub.modelRequests()).toEqual([]);
  });

  it('streams an Anthropic message in the event order the client expects, with a fresh id per reply', async () => {
    stub = await startStubServer();
    const body = { model: 'claude-x', stream: true, messages: [{ role: 'user', content: 'hello' }] };
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const res = await fetch(stub.baseUrl + '/v1/messages?beta=true', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'secret-key-value' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const events = parseSse(await res.text());
      expect(events.map((e) => e.event)).toEqual([
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      const start = events[0]!.data.message as { id: string; usage: Record<string, number> };
      ids.push(start.id);
      expect(start.usage.input_tokens).toBeGreaterThan(0);
      expect(start.usage).toHaveProperty('cache_read_input_tokens', 0);
      expect((events[3]!.data.delta as { text: string }).text).toBe(STUB_REPLY_TEXT);
      expect((events[5]!.data.delta as { stop_reason: string }).stop_reason).toBe('end_turn');
    }
    expect(new Set(ids).size).toBe(2);
    const recorded = stub.modelRequests();
    expect(recorded).toHaveLength(2);
    expect(recorded[0]!.body).toEqual(body);
    expect(recorded[0]!.path).toBe('/v1/messages?beta=true');
    expect(recorded[0]!.headers['x-api-key']).toBe('<redacted 16 chars>');
    expect(JSON.stringify(stub.requests)).not.toContain('secret-key-value');
  });

  it('answers a non-streaming Anthropic request and count_tokens with JSON', async () => {
    stub = await startStubServer();
    const res = await fetch(stub.baseUrl + '/v1/messages', { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
    const json = (await res.json()) as { type: string; content: { text: string }[]; usage: { output_tokens: number } };
    expect(json.type).toBe('message');
    expect(json.content[0]!.text).toBe(STUB_REPLY_TEXT);
    expect(json.usage.output_tokens).toBeGreaterThan(0);
    const count = await fetch(stub.baseUrl + '/v1/messages/count_tokens', { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(400) }] }) });
    expect(((await count.json()) as { input_tokens: number }).input_tokens).toBeGreaterThanOrEqual(100);
  });

  it('streams a Responses API reply ending in response.completed with full usage', async () => {
    stub = await startStubServer();
    const res = await fetch(stub.baseUrl + '/v1/responses', {
      method: 'POST',
      body: JSON.stringify({ model: 'gpt-x', stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }),
    });
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.output_text.delta',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.data.sequence_number)).toEqual([0, 1, 2, 3, 4]);
    const done = events[4]!.data.response as { status: string; usage: Record<string, unknown>; output: { content: { text: string }[] }[] };
    expect(done.status).toBe('completed');
    expect(done.usage).toMatchObject({ input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(done.usage.total_tokens).toBe((done.usage.input_tokens as number) + (done.usage.output_tokens as number));
    expect(done.output[0]!.content[0]!.text).toBe(STUB_REPLY_TEXT);
  });

  it('refuses a WebSocket upgrade with 426 so the client falls back to HTTP', async () => {
    stub = await startStubServer();
    const res = await rawGet({ port: stub.port!, path: '/v1/responses', headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    expect(res.status).toBe(426);
    expect(stub.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/responses' });
  });

  it('lists models in both the OpenAI and the Codex shape', async () => {
    stub = await startStubServer();
    const json = (await (await fetch(stub.baseUrl + '/v1/models')).json()) as { data: { id: string }[]; models: unknown[] };
    expect(json.data[0]!.id).toBeTruthy();
    expect(json.models).toEqual([]);
  });

  it('rejects a model request whose body is not a JSON object, and refuses oversized bodies', async () => {
    stub = await startStubServer({ maxBodyBytes: 1024 });
    const bad = await fetch(stub.baseUrl + '/v1/messages', { method: 'POST', body: 'not json' });
    expect(bad.status).toBe(400);
    expect(stub.requests[0]!.body).toBe('not json');
    const big = await fetch(stub.baseUrl + '/v1/responses', { method: 'POST', body: JSON.stringify({ input: 'x'.repeat(5000) }) });
    expect(big.status).toBe(413);
  });

  it('frees its port on close', async () => {
    stub = await startStubServer();
    const port = stub.port!;
    expect(await canBind(port)).toBe(false);
    await stub.close();
    expect(await canBind(port)).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('gives a clear error when a fixed port is already in use', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as { port: number }).port;
    try {
      const attempt = startStubServer({ port });
      await expect(attempt).rejects.toBeInstanceOf(GobstopperError);
      await expect(startStubServer({ port })).rejects.toMatchObject({ code: 'stub_port_in_use', message: `stub model server: 127.0.0.1:${port} is already in use; choose another port or 0 for a free one` });
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
  });

  it('serves over a Unix socket and removes it on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gob-stub-'));
    try {
      const socketPath = join(dir, 'stub.sock');
      stub = await startStubServer({ socketPath });
      expect(stub.port).toBeNull();
      const res = await rawGet({ socketPath, path: '/v1/models' });
      expect(res.status).toBe(200);
      await stub.close();
      expect(existsSync(socketPath)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
