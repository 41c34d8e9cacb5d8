import type { ServerResponse } from 'node:http';

/** Starts a server-sent-event stream; the connection closes after the last event, as the vendors' do. */
export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'close',
  });
}

export function writeEvent(res: ServerResponse, event: string | null, data: unknown): void {
  res.write((event ? `event: ${event}\n` : '') + `data: ${JSON.stringify(data)}\n\n`);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, method = 'GET'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(method === 'HEAD' ? undefined : text);
}
