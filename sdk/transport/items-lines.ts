/**
 * `$/items` lines on the wire (the items_ref feature, sdk/items-cache.ts): how this transport lays
 * them out, reads them back, puts an offer sent in pieces together again, and keeps the text of a
 * large items array so that it is never encoded twice.
 *
 * Why pieces: a 100,000-item transcript is ~34 MB of JSON. Sent as one line, the sender encodes all
 * of it, then the receiver reads all of it, then parses all of it, one after the other. Sent in
 * pieces, the receiver parses one piece while the sender encodes the next, and a host passing the
 * items on to a strategy lets that process parse them at the same time as well.
 */
import type { Message } from 'vscode-jsonrpc/node';
import { Methods } from '../protocol.js';

/** Arrays at least this long are worth keeping as text (and passing on). */
const LARGE_ARRAY = 1000;
/** Items per piece of an offer; a longer array goes in several (100,000 items: 13 pieces). */
export const OFFER_PIECE_ITEMS = 8192;
/** The most items one offer may add up to, as the schema allows in one array. */
const MAX_OFFER_ITEMS = 100_000;

/**
 * Every `$/items` line this transport writes begins exactly so: the id, then for a piece its
 * number and whether more follow, then the array, then `}}`. A line that parses into the values the
 * header shows, with no other member, holds exactly the array's text between header and `}}`.
 */
const OFFER_HEADER = /^\{"jsonrpc":"2\.0","method":"\$\/items","params":\{"items_id":"([A-Za-z0-9_.:-]{1,64})"(?:,"part":(0|[1-9][0-9]{0,5}),"more":(true|false))?,"items":/;
const HEADER_WINDOW = 200;
/** Offers shorter than this are not worth passing on before they are parsed. */
const ON_THE_WAY_MIN_BYTES = 64 * 1024;
const OFFER_START = Buffer.from(`{"jsonrpc":"2.0","method":"${Methods.items}",`, 'utf8');

interface OfferHeader {
  itemsId: string;
  /** null: the whole array in one line. */
  part: number | null;
  more: boolean;
  /** Bytes before the array. */
  length: number;
}

function readHeader(line: Buffer, end: number): OfferHeader | undefined {
  if (!mayBeOffer(line, end)) return undefined;
  const match = OFFER_HEADER.exec(line.toString('latin1', 0, Math.min(end, HEADER_WINDOW)));
  if (!match || line[end - 1] !== 0x7d || line[end - 2] !== 0x7d) return undefined;
  return { itemsId: match[1]!, part: match[2] === undefined ? null : Number(match[2]), more: match[3] === 'true', length: match[0].length };
}

/** Cheap test for a line that may be an offer, before anything else is done with it. */
export function mayBeOffer(line: Buffer, end: number): boolean {
  return end >= OFFER_START.length && line.compare(OFFER_START, 0, OFFER_START.length, 0, OFFER_START.length) === 0;
}

// ---- the text of large arrays ----

/**
 * Large arrays sent more than once (the same transcript items to several strategies, or whole
 * again after an items_ref miss) are encoded once, and arrays read from an offer keep the text they
 * were read from. The host never mutates a transcript after parse, so an array is safe to key on.
 * An array put together from pieces keeps the pieces' texts, joined only if it is ever written.
 */
const arrayTexts = new WeakMap<readonly unknown[], Buffer | Buffer[]>();

export function isLargeArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length >= LARGE_ARRAY;
}

/** The JSON text of a large array, encoded once. */
export function arrayText(items: readonly unknown[]): Buffer {
  const kept = arrayTexts.get(items);
  if (Buffer.isBuffer(kept)) return kept;
  const text = kept ? joinArrayTexts(kept) : Buffer.from(JSON.stringify(items), 'utf8');
  arrayTexts.set(items, text);
  return text;
}

/** `[a,b]` and `[c]` make `[a,b,c]`. */
function joinArrayTexts(texts: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from('[')];
  let first = true;
  for (const text of texts) {
    const inner = text.subarray(1, text.length - 1);
    if (inner.length === 0) continue;
    if (!first) parts.push(Buffer.from(','));
    parts.push(inner);
    first = false;
  }
  parts.push(Buffer.from(']'));
  return Buffer.concat(parts);
}

/**
 * The JSON text of an items array, written as it is where an array would be: an offer passed on
 * before the array it stands for was parsed (see ItemsOnTheWay).
 */
export class ItemsText {
  constructor(readonly bytes: Buffer) {}
}

/**
 * The params of the `$/items` lines that send `items` under `itemsId`: one, or one per piece. Made
 * as they are asked for, so a piece (and the text it was encoded to) is dropped once it is sent.
 */
export function* offerParams(itemsId: string, items: readonly unknown[]): Generator<Record<string, unknown>> {
  if (items.length <= OFFER_PIECE_ITEMS) {
    yield { items_id: itemsId, items };
    return;
  }
  for (let at = 0, part = 0; at < items.length; at += OFFER_PIECE_ITEMS, part += 1) {
    yield { items_id: itemsId, part, more: at + OFFER_PIECE_ITEMS < items.length, items: items.slice(at, at + OFFER_PIECE_ITEMS) };
  }
}

// ---- reading ----

/**
 * A large `$/items` line the moment it was read whole, before it is parsed: the text of its array,
 * and, once the line parsed and that text is known to be exactly the array's, the array. For the
 * last piece of an offer in pieces that is the whole offer's array put together; undefined when the
 * line or the offer is broken. A host passes the text on to strategies while it parses it itself.
 */
export interface ItemsOnTheWay {
  itemsId: string;
  part: number | null;
  more: boolean;
  bytes: Buffer;
  parsed: Promise<unknown[] | undefined>;
}

type Settle = (items: unknown[] | undefined) => void;

/** One `$/items` line as parsed, and placed: a whole offer or one piece of one. */
export interface ParsedOffer {
  itemsId: string;
  more: boolean;
  /** Where this line's first item is in the whole offer's array. */
  first: number;
  params: Record<string, unknown>;
}

interface PendingOffer {
  itemsId: string;
  next: number;
  items: unknown[][];
  count: number;
  /** The pieces' texts while every piece was laid out exactly as this transport writes them. */
  texts: Buffer[] | null;
}

/**
 * What became of one `$/items` message: delivered (a whole offer, the pieces' put together), held
 * until the rest of its offer arrives, or dropped with its offer (a result naming the offer then
 * fails as naming items never sent, and a host's items_ref gets ItemsNotCached).
 */
type OfferOutcome = { deliver: Message } | { held: true } | { dropped: true };

/**
 * The offers of one stream: announces large lines to listeners before they are parsed, keeps the
 * text of the arrays they carry (unless told not to: only a host sends them on), and puts pieces
 * together so that whoever reads the stream sees one whole offer, as if it had come in one line.
 */
export class OfferReader {
  constructor(private readonly keepTexts = true) {}

  private pending: PendingOffer | undefined;
  private readonly listeners: ((offer: ItemsOnTheWay) => void | Promise<unknown>)[] = [];
  private readonly parsedListeners: ((offer: ParsedOffer) => void)[] = [];

  onItemsOnTheWay(listener: (offer: ItemsOnTheWay) => void | Promise<unknown>): void {
    this.listeners.push(listener);
  }

  /**
   * Tells `listener` about each offer line right after it parsed and was put in place, pieces
   * included (a host checks each against the schema as it comes).
   */
  onOfferParsed(listener: (offer: ParsedOffer) => void): void {
    this.parsedListeners.push(listener);
  }

  private parsed(offer: ParsedOffer): void {
    for (const listener of this.parsedListeners) listener(offer);
  }

  /**
   * Tells the listeners about a large offer line, unparsed; returns how to settle it once parsed,
   * and when the listeners that pass its text on have written it.
   */
  announce(line: Buffer, end: number): { settle: Settle; passingOn?: Promise<unknown> } | undefined {
    if (this.listeners.length === 0) return undefined;
    const header = readHeader(line, end);
    // Small offers are not worth it; but every later piece of an offer that was is told about.
    if (!header || (end < ON_THE_WAY_MIN_BYTES && !header.part)) return undefined;
    let settle!: Settle;
    const parsed = new Promise<unknown[] | undefined>((resolve) => (settle = resolve));
    const offer: ItemsOnTheWay = { itemsId: header.itemsId, part: header.part, more: header.more, bytes: line.subarray(header.length, end - 2), parsed };
    const writes: Promise<unknown>[] = [];
    for (const listener of this.listeners) {
      try {
        const written = listener(offer);
        if (written) writes.push(written);
      } catch {
        // A listener's failure is its own; the line is still read.
      }
    }
    return writes.length > 0 ? { settle, passingOn: Promise.all(writes) } : { settle };
  }

  /**
   * A parsed `$/items` message. A piece out of order, or not laid out as a piece, or one that takes
   * its offer past 100,000 items, is dropped with the offer it belonged to.
   */
  accept(message: Message, line: Buffer, end: number, settle: Settle | undefined): OfferOutcome {
    const params = (message as { params?: unknown }).params as Record<string, unknown> | undefined;
    const isPiece = !!params && typeof params === 'object' && ('part' in params || 'more' in params);
    if (!isPiece) {
      this.pending = undefined;
      if (params && typeof params === 'object' && typeof params.items_id === 'string') this.parsed({ itemsId: params.items_id, more: false, first: 0, params });
      // Kept whether or not anyone waits on the line (an optional call skips its arguments). A
      // listener learns whether the text it was told about is exactly this array either way.
      const kept = this.keepTexts ? keepText(message, line, end) : exactArray(message, line, end)?.items;
      settle?.(kept);
      return { deliver: message };
    }
    const dropped = (): OfferOutcome => {
      this.pending = undefined;
      settle?.(undefined);
      return { dropped: true };
    };
    const { items_id: itemsId, part, more, items } = params;
    if (Object.keys(params).length !== 4 || typeof itemsId !== 'string' || !Number.isSafeInteger(part) || typeof more !== 'boolean' || !Array.isArray(items)) {
      return dropped();
    }
    if (part === 0) this.pending = { itemsId, next: 0, items: [], count: 0, texts: this.keepTexts ? [] : null };
    const pending = this.pending;
    if (!pending || pending.itemsId !== itemsId || pending.next !== part) return dropped();
    const first = pending.count;
    pending.count += items.length;
    if (pending.count > MAX_OFFER_ITEMS) return dropped();
    this.parsed({ itemsId, more, first, params });
    pending.items.push(items);
    pending.next += 1;
    const text = pending.texts ? exactText(message, line, end) : undefined;
    if (pending.texts && text) pending.texts.push(text);
    else pending.texts = null;
    if (more) {
      settle?.(items);
      return { held: true };
    }
    this.pending = undefined;
    const whole = pending.items.length === 1 ? pending.items[0]! : pending.items.flat();
    if (pending.texts && whole.length >= LARGE_ARRAY) arrayTexts.set(whole, pending.texts);
    settle?.(whole);
    return { deliver: { jsonrpc: '2.0', method: Methods.items, params: { items_id: itemsId, items: whole } } as Message };
  }
}

/** The text of the array a parsed offer line carries, when the line is laid out exactly as this transport writes it. */
function exactText(message: Message, line: Buffer, end: number): Buffer | undefined {
  const header = readHeader(line, end);
  const params = (message as { params?: Record<string, unknown> }).params;
  if (!header || !params || Object.keys(message).length !== 3) return undefined;
  if (params.items_id !== header.itemsId || !Array.isArray(params.items)) return undefined;
  if (header.part === null ? Object.keys(params).length !== 2 : params.part !== header.part || params.more !== header.more) return undefined;
  return line.subarray(header.length, end - 2);
}

/** Keeps the text of a whole (one-line) offer's large array; the array when it did. */
function keepText(message: Message, line: Buffer, end: number): unknown[] | undefined {
  const exact = exactArray(message, line, end);
  if (exact) arrayTexts.set(exact.items, exact.text);
  return exact?.items;
}

/** A whole offer's large array and its text, when the line holds it laid out exactly as this transport writes it. */
function exactArray(message: Message, line: Buffer, end: number): { items: unknown[]; text: Buffer } | undefined {
  const items = (message as { params?: { items?: unknown } }).params?.items;
  if (!isLargeArray(items)) return undefined;
  const text = exactText(message, line, end);
  return text ? { items, text } : undefined;
}
