import { describe, expect, it } from 'vitest';
import { LruMap } from '../../../sdk/lru-map.js';

describe('LruMap', () => {
  it('drops the least recently used entry past its capacity; reading or storing an entry uses it', () => {
    const m = new LruMap<string, number>(3);
    m.set('a', 1);
    m.set('b', 2);
    m.set('c', 3);
    expect(m.get('a')).toBe(1);
    m.set('d', 4);
    expect([m.has('a'), m.has('b'), m.has('c'), m.has('d')]).toEqual([true, false, true, true]);
    m.set('c', 30);
    m.set('e', 5);
    expect([m.has('a'), m.get('c'), m.has('d'), m.has('e')]).toEqual([false, 30, true, true]);
    expect(m.size).toBe(3);
  });

  it('counts get and touch as uses, and has as none', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    expect(m.has('a')).toBe(true);
    m.set('c', 3);
    expect([m.has('a'), m.has('b')]).toEqual([false, true]);
    expect(m.touch('b')).toBe(true);
    expect(m.touch('zz')).toBe(false);
    m.set('d', 4);
    expect([m.has('b'), m.has('c'), m.has('d')]).toEqual([true, false, true]);
  });

  it('keeps a stored undefined apart from a missing key, and forgets on delete and clear', () => {
    const m = new LruMap<string, undefined | number>(2);
    m.set('u', undefined);
    expect(m.has('u')).toBe(true);
    expect(m.get('missing')).toBeUndefined();
    expect(m.delete('u')).toBe(true);
    expect(m.delete('u')).toBe(false);
    m.set('x', 1);
    m.clear();
    expect(m.size).toBe(0);
  });
});
