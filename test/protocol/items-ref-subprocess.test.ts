/**
 * items_ref over real pipes: a built-in bundle served by the TypeScript SDK gets a transcript once
 * and then references to it; a Python SDK bundle, which does not list the feature, keeps getting
 * the items whole. Every message the host writes is recorded before it is serialized.
 */
import { join } from 'node:path';
import type { Message, MessageWriter } from 'vscode-jsonrpc/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { connectBundle, type RunningBundle } from '../../kernel/plugins/host/running-bundle.js';
import { spawnPluginProcess } from '../../kernel/plugins/process/plugin-process.js';
import type { StrategyProposeResult } from '../../schemas/generated/types.js';
import { Methods, StrategyPropose } from '../../sdk/protocol.js';
import { serializeMessage } from '../../sdk/transport/ndjson.js';
import { buildBuiltinBundle, buildSdkFixtureBundle, fixturePluginBundle, tempDir, type TempDir } from '../fixtures/bundles/build-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';

interface Sent {
  params: Record<string, unknown>;
  bytes: number;
}

async function startRecorded(root: string): Promise<{ running: RunningBundle; sent: Sent[] }> {
  const bundle = admitBundle(root);
  const child = await spawnPluginProcess(bundle, { maxOutputBytes: 64 << 20, stderrBytes: 8192 });
  const sent: Sent[] = [];
  const writer: MessageWriter = child.transport.writer;
  const recording: MessageWriter = {
    onError: writer.onError,
    onClose: writer.onClose,
    write(message: Message) {
      const { method, params } = message as { method?: string; params?: Record<string, unknown> };
      if (method === Methods.strategyPropose && params) sent.push({ params, bytes: Buffer.byteLength(serializeMessage(message)) });
      return writer.write(message);
    },
    end: () => writer.end(),
    dispose: () => writer.dispose(),
  };
  const running = await connectBundle(bundle, { ...child.transport, writer: recording }, { hostVersion: '0.1.0' }, child.pid);
  return { running, sent };
}

const itemFields = (s: Sent) => Object.keys(s.params).filter((k) => k.startsWith('items')).sort();

describe('items_ref over real plugin processes', () => {
  let dir: TempDir;
  const running: RunningBundle[] = [];

  beforeAll(async () => {
    dir = tempDir('gob-items-ref-');
    await buildBuiltinBundle(dir.path, 'strategies-core');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((r) => r.channel.close()));
    dir?.cleanup();
  });

  it('a bundle built on the TypeScript SDK parses the transcript once and then works from its id', async () => {
    const started = await startRecorded(join(dir.path, 'strategies-core'));
    running.push(started.running);
    expect(started.running.handshake.features).toEqual(['items_ref']);
    const items = syntheticItems(300);
    const policy = { trigger_tokens: 1000, floor_tokens: 500, min_savings_tokens: 0 };
    const results: StrategyProposeResult[] = [];
    for (let i = 0; i < 3; i++) results.push(await started.running.channel.request(StrategyPropose, proposeParams('elide', items, policy)));

    expect(results[0]!.edits.length).toBeGreaterThan(0);
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    expect(started.sent.map(itemFields)).toEqual([['items', 'items_id'], ['items_ref'], ['items_ref']]);
    expect(started.sent[0]!.bytes).toBeGreaterThan(100_000);
    for (const byRef of started.sent.slice(1)) expect(byRef.bytes).toBeLessThan(2_000);
  });

  it('a TypeScript SDK plugin that logs to the console keeps working: the SDK sends console output to stderr', async () => {
    const root = await buildSdkFixtureBundle(join(dir.path, 'chatty'), 'chatty-sdk-strategy.ts', { id: 'chatty' });
    const bundle = admitBundle(root);
    const child = await spawnPluginProcess(bundle, { maxOutputBytes: 1 << 20, stderrBytes: 8192 });
    const connected = await connectBundle(bundle, child.transport, { hostVersion: '0.1.0' }, child.pid);
    running.push(connected);
    const result = await connected.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(10)));
    expect(result).toEqual({ edits: [], rationale: 'logged and proposed nothing' });
    const stderr = child.stderr.contents().toString('utf8');
    expect(stderr).toContain('console.log from the handler 40');
    expect(stderr).toContain('console.info from the handler');
  });

  it('a Python SDK bundle, which does not list items_ref, gets the items whole every time', async () => {
    const root = fixturePluginBundle(join(dir.path, 'python'), 'sdk_features.py', {
      provides: { strategies: ['fixture_strategy', 'inner_strategy', 'failing_strategy', 'buggy_strategy', 'disk_full_strategy', 'sdk_misuse_strategy', 'set_result_strategy'] },
    });
    const started = await startRecorded(root);
    running.push(started.running);
    expect(started.running.handshake.features).toBeUndefined();
    const items = syntheticItems(300);
    for (let i = 0; i < 3; i++) {
      const result = await started.running.channel.request(StrategyPropose, proposeParams('inner_strategy', items));
      expect(result.rationale).toBe('inner saw 1200 items');
    }
    expect(started.sent.map(itemFields)).toEqual([['items'], ['items'], ['items']]);
    for (const whole of started.sent) expect(whole.bytes).toBeGreaterThan(100_000);
  });
});
