/**
 * The plugin side of the `items_ref` transport feature. A selector such as `auto` makes the host
 * send the same 100,000-item transcript to one process many times (once per candidate strategy,
 * once more to the scorer); parsing ~34 MB of JSON each time dominated those commands. A plugin
 * that lists `items_ref` in its initialize answer is sent a large `items` array whole once, tagged
 * `items_id`, and afterwards only `items_ref` naming it. This module turns both back into ordinary
 * params before a handler sees them, so handlers and method schemas never know the feature exists.
 */
import { ErrorCodes, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { LruMap } from './lru-map.js';
import { Methods, PluginErrorCodes } from './protocol.js';
import { OFFER_PIECE_ITEMS, offerParams } from './transport/items-lines.js';

/** Arrays shorter than this always travel whole: a reference would save less than it costs to track. */
export const ITEMS_REF_MIN_ITEMS = 1000;
/**
 * How many arrays one process keeps. The host remembers as many ids per process and evicts in the
 * same least-recently-used order, so the two sides agree without talking about it; a disagreement
 * costs one resend, never a wrong answer.
 */
export const ITEMS_CACHE_ENTRIES = 4;

/** What an items_id or items_ref may be (the same pattern as the schema's ItemsOfferParams). */
export const ITEMS_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

/** A bounded least-recently-used map of item arrays by the id the host gave them. */
export class ItemsCache {
  private readonly arrays: LruMap<string, unknown[]>;

  constructor(readonly capacity = ITEMS_CACHE_ENTRIES) {
    this.arrays = new LruMap(capacity);
  }

  get size(): number {
    return this.arrays.size;
  }

  put(id: string, items: unknown[]): void {
    this.arrays.set(id, items);
  }

  get(id: string): unknown[] | undefined {
    return this.arrays.get(id);
  }

  clear(): void {
    this.arrays.clear();
  }

  /**
   * Rewrites one request's params in place: `items_id` stores `items` and is dropped; `items_ref`
   * is replaced by the stored array under `items`. Throws the JSON-RPC error to answer with when the
   * fields are malformed (-32602) or the array is not held (ItemsNotCached). Every handler gets the
   * same array object for the same id, so it must treat params as read-only.
   */
  resolve<P>(params: P): P {
    if (!params || typeof params !== 'object' || Array.isArray(params)) return params;
    const fields = params as Record<string, unknown>;
    const hasId = 'items_id' in fields;
    const hasRef = 'items_ref' in fields;
    if (!hasId && !hasRef) return params;
    if (hasId && hasRef) throw invalidParams('a request may carry items_id or items_ref, not both');
    if (hasId) {
      const id = checkedId('items_id', fields.items_id);
      if (!Array.isArray(fields.items)) throw invalidParams('items_id must come with an items array');
      this.put(id, fields.items);
      delete fields.items_id;
      return params;
    }
    const id = checkedId('items_ref', fields.items_ref);
    if ('items' in fields) throw invalidParams('items_ref stands for items; a request may not carry both');
    const items = this.get(id);
    if (items === undefined) {
      throw new ResponseError(
        PluginErrorCodes.ItemsNotCached,
        `items_ref ${id} is not held by this plugin process (it keeps the last ${this.capacity} item arrays it was sent); send the items again`,
      );
    }
    fields.items = items;
    delete fields.items_ref;
    return params;
  }
}

function checkedId(field: string, value: unknown): string {
  if (typeof value === 'string' && ITEMS_ID.test(value)) return value;
  throw invalidParams(`${field} must be a string of 1 to 64 letters, digits, '_', '-', '.' or ':'`);
}

function invalidParams(message: string): ResponseError<undefined> {
  return new ResponseError(ErrorCodes.InvalidParams, message);
}

/**
 * The other direction, for a host that listed `items_ref` in its initialize params: a result
 * carrying a large `items` array (a parsed transcript) sends the array first in a `$/items`
 * notification and names it with `items_ref` in the result. The host keeps the bytes it read, so
 * it can pass the same items on to a strategy without encoding them again.
 */
export class ItemsAhead {
  enabled = false;
  private nextId = 1;

  constructor(private readonly connection: MessageConnection) {}

  /** The result to answer with: unchanged, or with its items sent ahead. */
  answer(result: unknown): unknown {
    if (result instanceof Promise) return result.then((r) => this.rewrite(r));
    return this.rewrite(result);
  }

  private rewrite(result: unknown): unknown {
    if (!this.enabled || !result || typeof result !== 'object' || Array.isArray(result)) return result;
    const { items, ...rest } = result as { items?: unknown };
    if (!Array.isArray(items) || items.length < ITEMS_REF_MIN_ITEMS) return result;
    const id = `r-${this.nextId++}`;
    // Written before the response, on the same pipe, so the host reads them first.
    if (items.length <= OFFER_PIECE_ITEMS) {
      for (const whole of offerParams(id, items)) void this.connection.sendNotification(Methods.items, whole).catch(() => undefined);
      return { ...rest, items_ref: id };
    }
    return this.sendPieces(offerParams(id, items)).then(() => ({ ...rest, items_ref: id }));
  }

  /**
   * Each piece is encoded once the host has taken all but the one before it: while the host parses
   * piece k, piece k+1 is already on its way and this process encodes k+2, so the host never waits
   * for an encoding, and no more than two pieces (with their encoded text) are held in memory.
   */
  private async sendPieces(pieces: Iterable<Record<string, unknown>>): Promise<void> {
    let previous: Promise<void> = Promise.resolve();
    for (const piece of pieces) {
      const sent = this.connection.sendNotification(Methods.items, piece);
      await previous;
      previous = sent;
    }
    await previous;
  }
}
