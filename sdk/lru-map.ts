/**
 * A map that keeps only its `capacity` most recently used entries. The host and plugins both bound
 * what they remember of item arrays with it (sdk/items-cache.ts, kernel/plugins/protocol), and they
 * must evict in the same order to agree on what the other side still holds.
 */
export class LruMap<K, V> {
  // Map order is insertion order: re-inserting an entry marks it as the most recently used.
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Whether the key is held; unlike get, this does not count as a use. */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Marks the key as the most recently used; false when it is not held. */
  touch(key: K): boolean {
    if (!this.entries.has(key)) return false;
    this.get(key);
    return true;
  }

  /** The value, marked as the most recently used. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Stores `value` as the most recently used, then drops the least recently used past capacity. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
