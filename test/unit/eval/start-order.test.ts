import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Runtime } from '../../../kernel/services/runtime.js';
import { selectorsAmong } from '../../../kernel/services/eval.js';

afterEach(() => vi.useRealTimers());

/** A runtime whose strategy processes answer their kind at once, or never (a bundle stuck starting). */
function runtimeWith(kinds: Record<string, 'file' | 'selector' | 'stuck' | 'broken'>): Runtime {
  const strategy = (id: string) => {
    const kind = kinds[id];
    if (kind === 'stuck') return new Promise(() => undefined);
    if (kind === 'broken') return Promise.reject(new Error(`${id} failed the initialize handshake`));
    return Promise.resolve({ info: { id, kind } });
  };
  return { host: { strategy } } as unknown as Runtime;
}

describe('which strategies eval starts last', () => {
  it('the selectors among them, once every strategy has said its kind', async () => {
    const selectors = selectorsAmong(runtimeWith({ auto: 'selector', elide: 'file', agentic: 'selector', broken: 'broken' }), ['agentic', 'auto', 'broken', 'elide']);
    expect([...(await selectors.known())].sort()).toEqual(['agentic', 'auto']);
  });

  it('a bundle stuck starting holds the rows back for at most a second, and the kinds known by then count', async () => {
    vi.useFakeTimers();
    const selectors = selectorsAmong(runtimeWith({ auto: 'selector', elide: 'file', slow: 'stuck' }), ['auto', 'elide', 'slow']);
    let known: Set<string> | undefined;
    void selectors.known().then((k) => (known = k));
    await vi.advanceTimersByTimeAsync(900);
    expect(known).toBeUndefined();
    await vi.advanceTimersByTimeAsync(200);
    expect(known && [...known]).toEqual(['auto']);
  });
});
