import { afterEach, describe, expect, it } from 'vitest';
import * as P from '../../sdk/protocol.js';
import { connectInMemory } from '../helpers/memory-connection.js';

describe('SDK dispatch over in-memory NDJSON', () => {
  let conn: ReturnType<typeof connectInMemory> | undefined;
  afterEach(() => conn?.dispose());

  it('answers initialize with what the definition provides', async () => {
    conn = connectInMemory({
      id: 'demo',
      version: '1.2.3',
      strategies: { keep: { info: { description: 'keeps', kind: 'file' }, propose: () => ({ edits: [], rationale: 'none' }) } },
    });
    const result = await conn.host.sendRequest(P.Initialize, { protocol_versions: [1], host: { name: 'test', version: '0' } });
    expect(result.protocol_version).toBe(1);
    expect(result.plugin).toEqual({ id: 'demo', version: '1.2.3' });
    expect(result.strategies?.map((s) => s.id)).toEqual(['keep']);
  });

  it('refuses a protocol version it does not speak', async () => {
    conn = connectInMemory({ id: 'demo', version: '1.0.0' });
    await expect(conn.host.sendRequest(P.Initialize, { protocol_versions: [2], host: { name: 't', version: '0' } })).rejects.toMatchObject({
      code: P.PluginErrorCodes.NotSupported,
    });
  });

  it('routes strategy/propose by strategy id and reports unknown ids', async () => {
    conn = connectInMemory({
      id: 'demo',
      version: '1.0.0',
      strategies: {
        one: { info: { description: '', kind: 'file' }, propose: (p) => ({ edits: [], rationale: `items=${p.items.length}` }) },
      },
    });
    const params = {
      strategy_id: 'one',
      session: { provider: 'claude_code', session_id: 's', path: '/x' },
      items: [{ line_index: 0, kind: 'user' as const, est_tokens: 1, label: 'user' }],
      usage: { context_tokens: 0, lifetime_input_tokens: 0, lifetime_cached_tokens: 0, context_state: 'absent' as const, lifetime_scope: 'absent' as const },
      policy: {
        strategy: 'one', trigger_tokens: 1, floor_tokens: 0, min_savings_tokens: 0, keep_recent_tool_outputs: 0, keep_score_threshold: null,
        min_interval_secs: 0, apply_hold_secs: 0, block_tokens: 0, keep_recent_turns: 3, result_max_bytes: 500, quota_pressure: 'normal' as const,
        adaptive: false, effective_trigger_tokens: 1,
      },
      context_tokens: 1,
      active: false,
    };
    expect((await conn.host.sendRequest(P.StrategyPropose, params)).rationale).toBe('items=1');
    await expect(conn.host.sendRequest(P.StrategyPropose, { ...params, strategy_id: 'two' })).rejects.toMatchObject({ code: P.PluginErrorCodes.NotSupported });
  });

  it('warns a scorer that answers NaN or Infinity that those scores go out as null', async () => {
    conn = connectInMemory({
      id: 'demo',
      version: '1.0.0',
      scorers: { odd: { info: { description: '' }, score: () => ({ scores: [{ line_index: 4, keep_probability: 0.5 }, { line_index: 7, keep_probability: Number.NaN }, { line_index: 9, keep_probability: Infinity }] }) } },
    });
    const logs: Array<{ level: string; message: string }> = [];
    conn.host.onNotification(P.HostLog, (p) => void logs.push(p));
    const result = await conn.host.sendRequest(P.ScorerScore, {
      scorer_id: 'odd',
      session: { provider: 'claude_code', session_id: 's', path: '/x' },
      items: [{ line_index: 4, kind: 'tool_result', est_tokens: 1, label: 'Read' }],
      candidates: [4, 7, 9],
      policy: { strategy: 'scored', trigger_tokens: 1, floor_tokens: 0, min_savings_tokens: 0, keep_recent_tool_outputs: 0, keep_score_threshold: 0.5, min_interval_secs: 0, apply_hold_secs: 0, block_tokens: 0, keep_recent_turns: 3, result_max_bytes: 500, quota_pressure: 'normal', adaptive: false, effective_trigger_tokens: 1 },
    });
    expect(result.scores.map((s) => s.keep_probability)).toEqual([0.5, null, null]);
    expect(logs).toEqual([{ level: 'warn', message: expect.stringMatching(/^scorer odd gave 2 keep_probability value\(s\) that are not finite numbers \(first at line 7: NaN\); they are sent as null, which keeps those items$/) }]);
  });
});
