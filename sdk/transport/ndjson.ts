import type { Readable, Writable } from 'node:stream';
import { AbstractMessageReader, AbstractMessageWriter, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc/node';
import { arrayText, isLargeArray, ItemsText, mayBeOffer, OfferReader, type ItemsOnTheWay, type ParsedOffer } from './items-lines.js';
import { Methods } from '../protocol.js';
import { clipUtf8Bytes } from '../utf8.js';

export { ItemsText, type ItemsOnTheWay, type ParsedOffer } from './items-lines.js';

/**
 * Why a line was refused: too long, not JSON at all, JSON that is not a JSON-RPC 2.0 message, or
 * one notification too many without an answer between (see maxNotificationsWithoutAnswer).
 */
export type FramingReason = 'overflow' | 'not_json' | 'not_jsonrpc' | 'flood';

/**
 * How much of a refused line a FramingError keeps: enough for whoever wrote the peer to recognise
 * the print it left in (a log line, a banner, a message without "jsonrpc"), not a transcript's worth.
 */
export const REFUSED_LINE_BYTES = 80;

/** Raised through onError when a peer sends something that is not a JSON-RPC message on one line. */
export class FramingError extends Error {
  constructor(
    readonly reason: FramingReason,
    message: string,
    /** The start of the refused line (at most REFUSED_LINE_BYTES), for not_json and not_jsonrpc. */
    readonly line?: { start: string; clipped: boolean },
  ) {
    super(message);
    this.name = 'FramingError';
  }
}

export interface NdjsonReaderOptions {
  /** Largest single message accepted, in bytes (an offer in pieces counts as one); more is an overflow. */
  maxMessageBytes?: number;
  /**
   * Drop a `$/items` line that is not JSON instead of failing the stream. A plugin sets it: the
   * host may pass a provider's items on before it has parsed them itself (ItemsOnTheWay), and an
   * offer has no one to answer, so a broken one is simply not held.
   */
  dropBrokenOffers?: boolean;
  /**
   * Keep the text of each large offer's array beside it (default true), so that sending the same
   * array on writes those bytes instead of encoding it again. Only a host sends received items on:
   * a plugin sets false, and does not hold ~34 MB of text per transcript it keeps.
   */
  keepOfferText?: boolean;
  /**
   * Notifications (items offers aside) a peer may send in a row with no answer to a request between
   * them, as a count and in bytes; more fail the stream as a `flood`. vscode-jsonrpc queues every
   * message it is handed and works the queue one message a turn, so a peer writing notifications as
   * fast as the pipe takes them grows that queue without bound: gigabytes within a request's
   * deadline. Unset: no limit.
   */
  maxNotificationsWithoutAnswer?: { count: number; bytes: number };
}

const NEWLINE = 0x0a;
/**
 * How long a large offer line waits for its text to be passed on before it is parsed anyway: a
 * peer that does not read must not stall this stream.
 */
const OFFER_HOLD_MS = 100;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

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
  private readonly offers: OfferReader;
  /** Bytes of an offer's pieces read so far. */
  private offerBytes = 0;
  /** Notifications, and their bytes, since the last answer (see maxNotificationsWithoutAnswer). */
  private notifications = 0;
  private notificationBytes = 0;
  /**
   * Input that arrived while a line waits for its text to be passed on (see deliver); null when
   * nothing waits. The stream is paused meanwhile, and its end is reported after the held input.
   */
  private held: Buffer[] | null = null;
  private endedWhileHeld = false;

  constructor(
    private readonly stream: Readable,
    private readonly options: NdjsonReaderOptions = {},
  ) {
    super();
    this.maxMessageBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
    this.offers = new OfferReader(options.keepOfferText ?? true);
  }

  /**
   * Tells `listener` about each large `$/items` line the moment it is read whole, before it is
   * parsed. A listener that passes the text on returns when that write is done: the line is parsed
   * only then (or after OFFER_HOLD_MS), so the receiving peer gets it at full speed instead of
   * waiting while this process is busy parsing it.
   */
  onItemsOnTheWay(listener: (offer: ItemsOnTheWay) => void | Promise<unknown>): void {
    this.offers.onItemsOnTheWay(listener);
  }

  /** Tells `listener` about each `$/items` line right after it parsed, pieces included. */
  onOfferParsed(listener: (offer: ParsedOffer) => void): void {
    this.offers.onOfferParsed(listener);
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer | string) => this.onChunk(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const onError = (error: Error) => this.fireError(error);
    const onClose = () => {
      if (this.held) this.endedWhileHeld = true;
      else this.fireClose();
    };
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
    if (this.held) {
      this.held.push(chunk);
      return;
    }
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
      const passingOn = this.deliver(line);
      if (this.failed) return;
      if (passingOn) return this.hold(passingOn, chunk.subarray(start));
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxMessageBytes) return this.fail('overflow', `message larger than ${this.maxMessageBytes} bytes`);
      this.pending.push(rest);
    }
  }

  /** Holds the rest of the input until `passingOn` settles; then parses the held line and goes on. */
  private hold(passingOn: Promise<() => void>, rest: Buffer): void {
    this.held = [rest];
    this.stream.pause();
    void passingOn.then((parse) => {
      parse();
      const input = Buffer.concat(this.held!);
      this.held = null;
      if (this.failed) return;
      this.onChunk(input);
      if (this.held) return;
      if (this.endedWhileHeld) this.fireClose();
      else this.stream.resume();
    });
  }

  /**
   * Parses and dispatches one line. For a large offer whose text a listener is passing on, returns
   * instead a promise of the parse to run once that write is done, for the caller to hold on.
   */
  private deliver(line: Buffer): Promise<() => void> | undefined {
    // Tolerate CRLF and blank keep-alive lines from plugins written on other platforms.
    let end = line.length;
    if (end > 0 && line[end - 1] === 0x0d) end -= 1;
    if (end === 0) return undefined;
    const offer = mayBeOffer(line, end);
    const announced = offer ? this.offers.announce(line, end) : undefined;
    if (announced?.passingOn) {
      const parse = () => this.parse(line, end, offer, announced.settle);
      return Promise.race([announced.passingOn, delay(OFFER_HOLD_MS)]).then(() => parse, () => parse);
    }
    this.parse(line, end, offer, announced?.settle);
    return undefined;
  }

  private parse(line: Buffer, end: number, offer: boolean, settle: ((items: unknown[] | undefined) => void) | undefined): void {
    let message: unknown;
    try {
      message = JSON.parse(line.toString('utf8', 0, end));
    } catch {
      settle?.(undefined);
      if (offer && this.options.dropBrokenOffers) return;
      return this.fail('not_json', 'a line that is not JSON', refusedLine(line, end));
    }
    if (!message || typeof message !== 'object' || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      settle?.(undefined);
      return this.fail('not_jsonrpc', 'a line that is not a JSON-RPC 2.0 message', refusedLine(line, end));
    }
    if (!offer || (message as { method?: unknown }).method !== Methods.items) {
      if (this.flooded(message as Message, end)) return;
      return void this.callback?.(message as Message);
    }
    this.offerBytes += end;
    if (this.offerBytes > this.maxMessageBytes) {
      settle?.(undefined);
      return this.fail('overflow', `message larger than ${this.maxMessageBytes} bytes (an offer in pieces)`);
    }
    const outcome = this.offers.accept(message as Message, line, end, settle);
    if ('held' in outcome) return;
    this.offerBytes = 0;
    if ('deliver' in outcome) this.callback?.(outcome.deliver);
  }

  /** Counts a notification, resets on an answer; true (the stream failed) past the limit. */
  private flooded(message: Message, bytes: number): boolean {
    const limit = this.options.maxNotificationsWithoutAnswer;
    if (limit === undefined) return false;
    const m = message as { id?: unknown; method?: unknown };
    if (m.method === undefined) {
      this.notifications = 0;
      this.notificationBytes = 0;
      return false;
    }
    if (m.id !== undefined) return false;
    this.notifications += 1;
    this.notificationBytes += bytes;
    if (this.notifications <= limit.count && this.notificationBytes <= limit.bytes) return false;
    this.fail('flood', `more than ${this.notifications > limit.count ? `${limit.count} notifications` : `${limit.bytes} bytes of notifications`} without an answer`);
    return true;
  }

  /**
   * A line the peer began and has not ended, when there is one: a plugin that stops mid-line (a
   * print without its newline, a writer that died) looks otherwise like one that never answers.
   */
  unfinishedLine(): { bytes: number; line: NonNullable<FramingError['line']> } | null {
    if (this.pendingBytes === 0) return null;
    const head: Buffer[] = [];
    let headBytes = 0;
    for (const piece of this.pending) {
      if (headBytes >= REFUSED_LINE_BYTES + 4) break;
      head.push(piece);
      headBytes += piece.length;
    }
    return { bytes: this.pendingBytes, line: refusedLine(Buffer.concat(head, headBytes), this.pendingBytes) };
  }

  private fail(reason: FramingReason, message: string, line?: FramingError['line']): void {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.fireError(new FramingError(reason, message, line));
  }
}

function refusedLine(line: Buffer, end: number): NonNullable<FramingError['line']> {
  const start = clipUtf8Bytes(line.subarray(0, end), REFUSED_LINE_BYTES);
  return { start: start.toString('utf8'), clipped: start.length < end };
}

const ITEMS_PLACEHOLDER = '\u0000gobstopper-items\u0000';
const ITEMS_PLACEHOLDER_JSON = JSON.stringify(ITEMS_PLACEHOLDER);

/** A message's JSON in pieces: whole, or the text around a large `params.items` array and its cached bytes. */
function messagePieces(message: Message): [string] | [string, Buffer, string] {
  const params = (message as { params?: unknown }).params;
  const items = params && typeof params === 'object' && !Array.isArray(params) ? (params as { items?: unknown }).items : undefined;
  let itemsJson: Buffer;
  if (items instanceof ItemsText) itemsJson = items.bytes;
  else if (isLargeArray(items)) itemsJson = arrayText(items);
  else return [JSON.stringify(message)];
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
