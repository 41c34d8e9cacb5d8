import { describe, expect, it } from 'vitest';
import { SentItems } from '../../kernel/plugins/protocol/sent-items.js';
import { ITEMS_CACHE_ENTRIES, ITEMS_REF_MIN_ITEMS, ItemsCache } from '../../sdk/items-cache.js';

const transcript = (tag: number) => Array.from({ length: ITEMS_REF_MIN_ITEMS }, (_, line_index) => ({ line_index, tag }));

describe('host and plugin items caches', () => {
  it('stay in agreement over any order of sends, so a reference never misses', () => {
    const host = new SentItems();
    const plugin = new ItemsCache();
    const arrays = Array.from({ length: ITEMS_CACHE_ENTRIES + 3 }, (_, i) => transcript(i));
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    let references = 0;
    for (let step = 0; step < 500; step++) {
      const items = arrays[next() % arrays.length]!;
      const wire = host.outgoing({ strategy_id: 's', items });
      if (wire.ref !== null) references += 1;
      // What the plugin reads is a copy; what it hands the handler must be equal to what the host meant.
      const received = plugin.resolve(JSON.parse(JSON.stringify(wire.params)) as { items: unknown[] });
      expect(received.items).toEqual(items);
      expect(received).not.toHaveProperty('items_id');
      expect(received).not.toHaveProperty('items_ref');
    }
    expect(references).toBeGreaterThan(100);
    expect(plugin.size).toBe(ITEMS_CACHE_ENTRIES);
  });

  it('never modifies the params the host was given', () => {
    const host = new SentItems();
    const params = { strategy_id: 's', items: transcript(0) };
    host.outgoing(params);
    host.outgoing(params);
    expect(Object.keys(params)).toEqual(['strategy_id', 'items']);
  });

  it('sends an array whole again after the plugin said it lost it', () => {
    const host = new SentItems();
    const items = transcript(0);
    const first = host.outgoing({ items });
    const second = host.outgoing({ items });
    expect(second.ref).toBe((first.params as { items_id: string }).items_id);
    host.forget(second.ref!);
    const third = host.outgoing({ items });
    expect(third.ref).toBeNull();
    expect(third.params).toMatchObject({ items, items_id: expect.any(String) });
  });
});
