import { describe, expect, it } from 'vitest';
import { serializeMessage } from '../../sdk/transport/ndjson.js';

describe('serializeMessage', () => {
  it('produces exactly JSON.stringify for small and large item arrays, and reuses the large one', () => {
    const items = Array.from({ length: 1500 }, (_, i) => ({ line_index: i, label: i % 2 ? 'Bash' : 'a "quoted" \u0000 label' }));
    const a = { jsonrpc: '2.0' as const, id: 1, method: 'strategy/propose', params: { strategy_id: 'x', items, policy: { n: 1 } } };
    const b = { jsonrpc: '2.0' as const, id: 2, method: 'strategy/propose', params: { strategy_id: 'y', items } };
    expect(serializeMessage(a)).toBe(JSON.stringify(a));
    expect(serializeMessage(b)).toBe(JSON.stringify(b));
    const small = { jsonrpc: '2.0' as const, id: 3, method: 'm', params: { items: [1, 2, 3] } };
    expect(serializeMessage(small)).toBe(JSON.stringify(small));
    const result = { jsonrpc: '2.0' as const, id: 4, result: { items } };
    expect(serializeMessage(result)).toBe(JSON.stringify(result));
  });
});
