import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StrategyProposeResult } from '../../schemas/generated/types.js';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { startBundle, type RunningBundle } from '../../kernel/plugins/host/running-bundle.js';
import { fixturePluginBundle, tempDir, type TempDir } from '../fixtures/bundles/build-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';
import { StrategyPropose } from '../../sdk/protocol.js';
import { STRATEGY_ID_FORMAT } from '../../sdk/index.js';
import { checkStrategyParams } from '../../kernel/plugins/host/strategy-params.js';

describe('the Python SDK through the real host', () => {
  let dir: TempDir;
  let running: RunningBundle;

  beforeAll(async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'sdk_features.py', {
      provides: { strategies: ['fixture_strategy', 'inner_strategy', 'failing_strategy', 'buggy_strategy', 'disk_full_strategy', 'sdk_misuse_strategy', 'set_result_strategy'] },
      capabilities: ['read_content'],
    });
    running = await startBundle(admitBundle(root), { hostVersion: '0.1.0' });
  });
  afterAll(async () => {
    await running?.channel.close();
    dir?.cleanup();
  });

  it('answers initialize with every registered strategy', () => {
    expect(running.handshake.plugin).toEqual({ id: 'fixture', version: '1.0.0' });
    expect(running.handshake.strategies?.map((s) => `${s.id}:${s.kind}`)).toEqual([
      'fixture_strategy:selector',
      'inner_strategy:file',
      'failing_strategy:file',
      'buggy_strategy:file',
      'sdk_misuse_strategy:file',
      'set_result_strategy:file',
      'disk_full_strategy:file',
    ]);
    // A strategy that asks for scores says so, so the host can start the scorer early.
    expect(running.handshake.strategies?.map((s) => s.uses_scorer ?? false)).toEqual([true, false, false, false, false, false, false]);
  });

  it("marks a strategy id in a params_schema with the SDK's STRATEGY_ID_FORMAT, which the host checks as the TypeScript SDK's", async () => {
    const info = running.handshake.strategies!.find((s) => s.id === 'fixture_strategy')!;
    expect(info.params_schema).toMatchObject({ properties: { candidates: { items: { format: STRATEGY_ID_FORMAT } } } });
    const served = running.handshake.strategies!.map((s) => s.id);
    await expect(checkStrategyParams('fixture_strategy', info.params_schema, { candidates: ['inner_strategy'] }, served)).resolves.toBeUndefined();
    await expect(checkStrategyParams('fixture_strategy', info.params_schema, { candidates: ['inner_strategy', 'inner_stratgy'] }, served)).rejects.toMatchObject({
      code: 'unknown_strategy',
      details: { id: 'inner_stratgy', key: 'strategy_params.candidates[1]' },
    });
  });

  it('asks the host for scores, content and another plan from inside a handler (re-entrantly)', async () => {
    const logs: string[] = [];
    const result = await running.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(2)), {
      log: (p) => logs.push(`${p.level}:${p.message}`),
      progress: (p) => logs.push(`progress:${p.done}/${p.total}`),
      score: (p) => ({ scorer_id: 'heuristic', scores: p.candidates.map((line_index) => ({ line_index, keep_probability: 0.5 })) }),
      readItems: (p) => ({
        items: p.line_indexes.map((line_index) => ({ line_index, content: 'hello world'.slice(0, p.max_bytes_per_item), truncated: true })),
        content_trust: 'untrusted_archived_data',
      }),
      propose: async (p) => {
        // The callback calls the same plugin process again while its outer handler waits.
        const inner = await running.channel.request(StrategyPropose, proposeParams(p.strategy_id, syntheticItems(3)));
        return { status: 'no_plan', message: inner.rationale };
      },
    });
    expect(result.rationale).toBe('scores=8 content=hello nested=inner saw 12 items');
    expect(logs).toEqual(['info:starting', 'progress:0/2']);
    expect(running.channel.alive).toBe(true);
  });

  it('turns PluginError into its JSON-RPC error and a handler bug into an internal error, and keeps serving', async () => {
    await expect(running.channel.request(StrategyPropose, proposeParams('failing_strategy', syntheticItems(1)))).rejects.toMatchObject({
      code: 'plugin_error',
      rpcCode: -32002,
      message: expect.stringContaining('this session is not for me'),
    });
    await expect(running.channel.request(StrategyPropose, proposeParams('buggy_strategy', syntheticItems(1)))).rejects.toMatchObject({
      code: 'plugin_error',
      rpcCode: -32603,
      message: expect.stringMatching(/KeyError: 'missing' \(at sdk_features\.py:\d+ in \w+\)/),
    });
    await expect(running.channel.request(StrategyPropose, proposeParams('unknown', syntheticItems(1)))).rejects.toMatchObject({ rpcCode: -32005 });
    expect(running.channel.alive).toBe(true);
  });

  it("names the handler's own line when an error is raised inside the SDK, and says what JSON could not hold of a result", async () => {
    await expect(running.channel.request(StrategyPropose, proposeParams('sdk_misuse_strategy', syntheticItems(1)))).rejects.toMatchObject({
      rpcCode: -32603,
      message: expect.stringMatching(/HostError: .*256.* \(at sdk_features\.py:\d+ in sdk_misuse\)/),
    });
    await expect(running.channel.request(StrategyPropose, proposeParams('set_result_strategy', syntheticItems(1)))).rejects.toMatchObject({
      rpcCode: -32603,
      message: expect.stringContaining('the strategy/propose handler returned a result JSON cannot hold: Object of type set is not JSON serializable'),
    });
    expect(running.channel.alive).toBe(true);
  });

  it("names the errno of an OSError a handler lets through, as the TypeScript SDK's staging writer does, so the host can tell a full disk from a plugin's fault", async () => {
    await expect(running.channel.request(StrategyPropose, proposeParams('disk_full_strategy', syntheticItems(1)))).rejects.toMatchObject({
      code: 'plugin_error',
      rpcCode: -32603,
      rpcErrno: 'ENOSPC',
      message: expect.stringContaining('No space left on device'),
    });
    expect(running.channel.alive).toBe(true);
  });
});
