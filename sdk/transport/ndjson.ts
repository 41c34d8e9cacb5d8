import type { Readable, Writable } from 'node:stream';
import { AbstractMessageReader, AbstractMessageWriter, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc/node';
import { Methods } from '../protocol.js';

/** Raised through onError when a peer sends something that is not a JSON-RPC message on one line. */
export class FramingError extends Error {
  constructor(
    readonly reason: 'overflow' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'FramingError';
  }
}

export interface NdjsonReaderOptions {
  /** Largest single message accepted, in bytes; a longer line is an overflow. */
  maxMessageBytes?: number;
}

const NEWLINE = 0x0a;

/**
 * Reads one JSON-RPC message per line. Chunks are kept as buffers until a newline arrives so a
 * large message (a 100,000-item transcript) is decoded and parsed exactly once.
 */
export class NdjsonMessageReader extends AbstractMessageReader {
  private readonly maxMessageBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private callback: DataCallback | undefined;
  private failed = false;

  constructor(
    private readonly stream: Readable,
    options: NdjsonReaderOptions = {},
  ) {
    super();
    this.maxMessageBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer | string) => this.onChunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const onError = (error: Error) => this.fireError(error);
    const onClose = () => this.fireClose();
    this.stream.on('data', onData);
    this.stream.on('error', onError);
    this.stream.on('close', onClose);
    this.stream.on('end', onClose);
    return {
      dispose: () => {
        this.stream.off('data', onData);
        this.stream.off('error', onError);
        this.stream.off('close', onClose);
        this.stream.off('end', onClose);
        this.callback = undefined;
      },
    };
  }

  private onChunk(chunk: Buffer): void {
    if (this.failed) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.pendingBytes + piece.length > this.maxMessageBytes) return this.fail('overflow', `message larger than ${this.maxMessageBytes} bytes`);
      let line: Buffer;
      if (this.pending.length === 0) line = piece;
      else {
        this.pending.push(piece);
        line = Buffer.concat(this.pending, this.pendingBytes + piece.length);
        this.pending = [];
        this.pendingBytes = 0;
      }
      this.deliver(line);
      if (this.failed) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxMessageBytes) return this.fail('overflow', `message larger than ${this.maxMessageBytes} bytes`);
      this.pending.push(rest);
    }
  }

  private deliver(line: Buffer): void {
    // Tolerate CRLF and blank keep-alive lines from plugins written on other platforms.
    let end = line.length;
    if (end > 0 && line[end - 1] === 0x0d) end -= 1;
    if (end === 0) return;
    let message: unknown;
    try {
      message = JSON.parse(line.toString('utf8', 0, end));
    } catch {
      return this.fail('malformed', 'a line that is not JSON');
    }
    if (!message || typeof message !== 'object' || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      return this.fail('malformed', 'a line that is not a JSON-RPC 2.0 message');
    }
    if ((message as { method?: unknown }).method === ITEMS_OFFER) keepOfferedBytes(message as Message, line, end);
    this.callback?.(message as Message);
  }

  private fail(reason: 'overflow' | 'malformed', message: string): void {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.fireError(new FramingError(reason, message));
  }
}

/**
 * Large arrays sent more than once (the same transcript items to several strategies, or whole
 * again after an items_ref miss) are serialized once, and kept as UTF-8 bytes so each send writes
 * them as they are instead of encoding 34 MB again. The host never mutates a transcript after
 * parse, so an array is safe to key on.
 */
const LARGE_ARRAY = 1000;
const serializedArrays = new WeakMap<readonly unknown[], Buffer>();
const ITEMS_PLACEHOLDER = '\u0000gobstopper-items\u0000';
const ITEMS_PLACEHOLDER_JSON = JSON.stringify(ITEMS_PLACEHOLDER);

const ITEMS_OFFER = Methods.items;

/**
 * A `$/items` line read whole is kept as the JSON of its items array, so passing the same array on
 * (to a strategy) writes the bytes the peer sent instead of encoding 34 MB again. Only a line laid
 * out exactly as this writer lays it out counts: the fixed prefix up to `"items":`, then the array,
 * then `}}`, with no other member anywhere (checked on the parsed message), so the slice between is
 * exactly the array's text, and it parsed into exactly this array.
 */
function keepOfferedBytes(message: Message, line: Buffer, end: number): void {
  const params = (message as { params?: unknown }).params as { items_id?: unknown; items?: unknown } | undefined;
  if (!params || typeof params.items_id !== 'string' || !Array.isArray(params.items) || params.items.length < LARGE_ARRAY) return;
  if (Object.keys(message).length !== 3 || Object.keys(params).length !== 2) return;
  const prefix = Buffer.from(`{"jsonrpc":"2.0","method":"${ITEMS_OFFER}","params":{"items_id":${JSON.stringify(params.items_id)},"items":`, 'utf8');
  if (end < prefix.length + 4 || line.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) return;
  if (line[end - 1] !== 0x7d || line[end - 2] !== 0x7d) return;
  serializedArrays.set(params.items, line.subarray(prefix.length, end - 2));
}

/** A message's JSON in pieces: whole, or the text around a large `params.items` array and its cached bytes. */
function messagePieces(message: Message): [string] | [string, Buffer, string] {
  const params = (message as { params?: unknown }).params;
  const items = params && typeof params === 'object' && !Array.isArray(params) ? (params as { items?: unknown }).items : undefined;
  if (!Array.isArray(items) || items.length < LARGE_ARRAY) return [JSON.stringify(message)];
  let itemsJson = serializedArrays.get(items);
  if (itemsJson === undefined) {
    itemsJson = Buffer.from(JSON.stringify(items), 'utf8');
    serializedArrays.set(items, itemsJson);
  }
  const shell = JSON.stringify({ ...message, params: { ...(params as object), items: ITEMS_PLACEHOLDER } });
  const at = shell.indexOf(ITEMS_PLACEHOLDER_JSON);
  return [shell.slice(0, at), itemsJson, shell.slice(at + ITEMS_PLACEHOLDER_JSON.length)];
}

/** JSON of a message, reusing the cached serialization of a large `params.items` array. */
export function serializeMessage(message: Message): string {
  const pieces = messagePieces(message);
  return pieces.length === 1 ? pieces[0] : pieces[0] + pieces[1].toString('utf8') + pieces[2];
}

/** Writes one JSON-RPC message per line. */
export class NdjsonMessageWriter extends AbstractMessageWriter {
  private errorCount = 0;

  constructor(private readonly stream: Writable) {
    super();
  }

  write(message: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (error: Error | null | undefined) => {
        if (error) {
          this.errorCount += 1;
          this.fireError(error, message, this.errorCount);
          reject(error);
        } else resolve();
      };
      const pieces = messagePieces(message);
      if (pieces.length === 1) {
        this.stream.write(pieces[0] + '\n', 'utf8', done);
        return;
      }
      // One synchronous run of writes, so no other message can land inside this line; the
      // callback of the last piece fires once all three are flushed (or with the error that stopped them).
      this.stream.cork();
      this.stream.write(pieces[0], 'utf8');
      this.stream.write(pieces[1]);
      this.stream.write(pieces[2] + '\n', 'utf8', done);
      this.stream.uncork();
    });
  }

  end(): void {
    this.stream.end();
  }
}
