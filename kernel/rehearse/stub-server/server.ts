import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { rmSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { GobstopperError } from '../../errors.js';
import { answerCountTokens, answerMessages } from './anthropic-messages.js';
import { answerModels, answerResponses } from './openai-responses.js';
import { isModelRequest, redactHeaders, routeOf, type RecordedRequest } from './recorded-request.js';
import { sendJson } from './sse.js';

export const STUB_HOST = '127.0.0.1';
/** A resumed 512 MiB transcript rebuilds to far less than this; anything bigger is refused, not buffered. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024;

export interface StubServerOptions {
  /** TCP port on 127.0.0.1; 0 (the default) lets the system pick a free one. */
  port?: number;
  /** Listen on this Unix socket instead of TCP (used to reach the stub from a private network namespace). */
  socketPath?: string;
  maxBodyBytes?: number;
}

export interface StubServer {
  /** The bound TCP port, or null when listening on a Unix socket. */
  readonly port: number | null;
  readonly socketPath: string | null;
  /** `http://127.0.0.1:<port>` for TCP; for a socket, the address a bridge must forward to it. */
  readonly baseUrl: string;
  /** Every request in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Only the model turns (`POST /v1/messages`, `POST /v1/responses`). */
  modelRequests(): RecordedRequest[];
  /** Stops listening and drops open connections; the port (or socket file) is free when it resolves. */
  close(): Promise<void>;
}

/**
 * A stand-in for the Anthropic Messages and OpenAI Responses APIs that answers every model turn with
 * one short fixed reply and keeps each request in memory. It binds loopback only: the clients it
 * serves must never have a reason to reach anything else.
 */
export async function startStubServer(options: StubServerOptions = {}): Promise<StubServer> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const requests: RecordedRequest[] = [];
  const record = (req: IncomingMessage, body: unknown, bodyBytes: number): number => {
    const seq = requests.length + 1;
    requests.push({
      seq,
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: redactHeaders(req.headers),
      body,
      body_bytes: bodyBytes,
      received_at_ms: Date.now(),
    });
    return seq;
  };

  const server = createServer((req, res) => {
    readBody(req, maxBodyBytes).then(
      (raw) => route(req, res, raw, record),
      () => {
        record(req, null, 0);
        sendJson(res, 413, { error: { type: 'request_too_large', message: `request body over ${maxBodyBytes} bytes` } });
        req.resume();
      },
    );
  });
  // Codex's built-in `openai` provider first tries a WebSocket; 426 makes it fall back to HTTP at once
  // (404 or 501 cost five retries, 400 aborts the run).
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    record(req, null, 0);
    const text = JSON.stringify({ error: { type: 'upgrade_required', message: 'the stub model server speaks HTTP only' } });
    socket.end(
      `HTTP/1.1 426 Upgrade Required\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  });
  server.keepAliveTimeout = 1000;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(listenError(error, options));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    if (options.socketPath) server.listen(options.socketPath);
    else server.listen(options.port ?? 0, STUB_HOST);
  });

  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : null;
  const socketPath = options.socketPath ?? null;
  let closing: Promise<void> | null = null;
  return {
    port,
    socketPath,
    baseUrl: port === null ? 'http://localhost' : `http://${STUB_HOST}:${port}`,
    requests,
    modelRequests: () => requests.filter(isModelRequest),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => {
          if (socketPath) rmSync(socketPath, { force: true });
          resolve();
        });
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function listenError(error: NodeJS.ErrnoException, options: StubServerOptions): Error {
  const where = options.socketPath ? options.socketPath : `${STUB_HOST}:${options.port ?? 0}`;
  if (error.code === 'EADDRINUSE') {
    return new GobstopperError('stub_port_in_use', `stub model server: ${where} is already in use; choose another port or 0 for a free one`);
  }
  if (error.code === 'EACCES') {
    return new GobstopperError('stub_port_denied', `stub model server: not allowed to listen on ${where}`);
  }
  return new GobstopperError('stub_listen_failed', `stub model server: cannot listen on ${where}: ${error.code ?? error.message}`);
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBytes) {
        refused = true;
        chunks.length = 0;
        reject(new Error('body too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!refused) resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      if (!refused) reject(error);
    });
  });
}

function parseBody(raw: Buffer): unknown {
  if (raw.length === 0) return null;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function route(req: IncomingMessage, res: ServerResponse, raw: Buffer, record: (req: IncomingMessage, body: unknown, bytes: number) => number): void {
  const body = parseBody(raw);
  const seq = record(req, body, raw.length);
  const method = req.method ?? 'GET';
  const path = routeOf(req.url ?? '/');
  if (method === 'GET' && (req.headers.upgrade ?? '').toLowerCase() === 'websocket') {
    sendJson(res, 426, { error: { type: 'upgrade_required', message: 'the stub model server speaks HTTP only' } });
    return;
  }
  if (method === 'POST' && (path.endsWith('/v1/messages') || path.endsWith('/v1/responses') || path.endsWith('/v1/messages/count_tokens'))) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      sendJson(res, 400, { error: { type: 'invalid_request_error', message: 'body must be a JSON object' } });
      return;
    }
    const fields = body as Record<string, unknown>;
    if (path.endsWith('/count_tokens')) answerCountTokens(res, raw.length);
    else if (path.endsWith('/v1/messages')) answerMessages(res, seq, fields, raw.length);
    else answerResponses(res, seq, fields, raw.length);
    return;
  }
  if ((method === 'GET' || method === 'HEAD') && path.endsWith('/models')) {
    answerModels(res, method);
    return;
  }
  // Startup probes (Claude's `HEAD /` preflight, anything a newer client adds) get an empty success
  // and stay in the record, so a change in what a client calls shows up in the rehearsal report.
  sendJson(res, 200, {}, method);
}
