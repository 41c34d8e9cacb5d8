import { ITEMS_CACHE_ENTRIES, ITEMS_ID, ITEMS_REF_MIN_ITEMS } from '../../../sdk/items-cache.js';
import { LruMap } from '../../../sdk/lru-map.js';

/** Params as they go on the wire, and the id they stand on when they carry `items_ref`. */
export interface OutgoingParams {
  params: unknown;
  ref: string | null;
}

/**
 * The host side of the `items_ref` feature, for one plugin process: which large `items` arrays it
 * was already sent, by identity. The host never mutates a parsed transcript, so the same array
 * object means the same items. Arrays are held weakly (only their ids are kept in order), so this
 * never keeps a transcript alive; the plugin keeps as many ids and evicts them in the same
 * least-recently-used order (sdk/items-cache.ts).
 */
export class SentItems {
  private readonly idOf = new WeakMap<readonly unknown[], string>();
  /** Ids the process holds, in the order it evicts them. */
  private readonly held: LruMap<string, true>;
  private nextId = 1;

  constructor(capacity = ITEMS_CACHE_ENTRIES) {
    this.held = new LruMap(capacity);
  }

  /**
   * The first time a large array goes to this process it travels whole with `items_id`; later it
   * is replaced by `items_ref`. The caller's params object is never modified.
   */
  outgoing(params: unknown): OutgoingParams {
    if (!params || typeof params !== 'object' || Array.isArray(params)) return { params, ref: null };
    const { items, ...rest } = params as { items?: unknown };
    if (!Array.isArray(items) || items.length < ITEMS_REF_MIN_ITEMS) return { params, ref: null };
    const known = this.idOf.get(items);
    if (known !== undefined && this.held.touch(known)) {
      return { params: { ...rest, items_ref: known }, ref: known };
    }
    const id = this.reserve();
    this.idOf.set(items, id);
    return { params: { ...params, items_id: id }, ref: null };
  }

  /** A new id the process is about to hold, for an array sent now and, if it is not yet known, bound later. */
  reserve(): string {
    const id = `items-${this.nextId++}`;
    this.held.set(id, true);
    return id;
  }

  /** The array a reserved id was sent for, once known: later sends of it name the id. */
  bind(items: readonly unknown[], id: string): void {
    if (!this.held.has(id)) return;
    const known = this.idOf.get(items);
    if (known === undefined || !this.held.has(known)) this.idOf.set(items, id);
  }

  /** The process said it does not hold this id; the next send of that array goes whole. */
  forget(id: string): void {
    this.held.delete(id);
  }
}

/**
 * The host side of the other direction: a plugin told in initialize that the host takes items_ref
 * may send a result's large `items` ahead in a `$/items` notification and put `items_ref` in the
 * result. The last few arrays are kept, by id, until a result names them.
 */
export class ReceivedItems {
  private readonly held: LruMap<string, unknown[]>;

  constructor(capacity = ITEMS_CACHE_ENTRIES) {
    this.held = new LruMap(capacity);
  }

  /** Keeps a well-formed offer; anything else is dropped (a result naming it then fails). */
  keep(params: unknown): void {
    if (!params || typeof params !== 'object') return;
    const { items_id: id, items } = params as { items_id?: unknown; items?: unknown };
    if (typeof id !== 'string' || !ITEMS_ID.test(id) || !Array.isArray(items)) return;
    this.held.set(id, items);
  }

  /** The result with the items it names put back, or why it cannot be. */
  restore(result: unknown): { result: unknown; problem?: string } {
    if (!result || typeof result !== 'object' || Array.isArray(result) || !('items_ref' in result)) return { result };
    const { items_ref: id, ...rest } = result as { items_ref?: unknown; items?: unknown };
    if ('items' in rest) return { result, problem: 'both items and items_ref in its result' };
    const items = typeof id === 'string' ? this.held.get(id) : undefined;
    if (items === undefined) return { result, problem: `items_ref ${JSON.stringify(id).slice(0, 80)} in its result, naming items it never sent ahead` };
    this.held.delete(id as string);
    return { result: { ...rest, items } };
  }
}
