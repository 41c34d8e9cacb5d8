import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { PluginHost } from '../../kernel/plugins/host/plugin-host.js';
import { installBundle } from '../../kernel/plugins/registry/install.js';
import { PluginRegistry } from '../../kernel/plugins/registry/registry.js';
import { admitEdits } from '../../kernel/validate/edit-rules.js';
import { repoRoot, tempDir, type TempDir } from '../fixtures/bundles/build-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';

const examples = [
  { dir: 'keep-last-python', strategy: 'keep_last_py' },
  { dir: 'keep-last-jq', strategy: 'keep_last_jq' },
];

/** Tool results of syntheticItems sit on lines 3, 7, 11, ...; the k-th (0-based) on 4k + 3. */
const toolResultLines = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => 4 * (from + k) + 3);

describe('example bundles', () => {
  it('carry a byte-identical copy of the Python SDK', () => {
    const sdk = readFileSync(join(repoRoot, 'sdk', 'python', 'gobstopper_sdk.py'));
    expect(readFileSync(join(repoRoot, 'examples', 'plugins', 'keep-last-python', 'gobstopper_sdk.py')).equals(sdk)).toBe(true);
  });

  for (const example of examples) {
    it(`${example.dir} pins the current hashes of its files (run examples/plugins/rehash.mjs after editing)`, () => {
      expect(() => admitBundle(join(repoRoot, 'examples', 'plugins', example.dir))).not.toThrow();
    });
  }
});

describe.each(examples)('$dir through the real host', ({ dir, strategy }) => {
  let data: TempDir;
  let host: PluginHost;

  beforeAll(async () => {
    data = tempDir('gob-examples-');
    const registry = new PluginRegistry({ dataDir: join(data.path, 'data'), builtinDir: join(data.path, 'no-builtins') });
    await installBundle(registry, join(repoRoot, 'examples', 'plugins', dir));
    host = new PluginHost({ registry });
  });
  afterAll(async () => {
    await host?.close();
    data?.cleanup();
  });

  const cases = [
    { name: 'keep_last 10 stubs the 10 oldest of 20 tool outputs', keepRecent: 8, params: { keep_last: 10 }, expected: toolResultLines(0, 10) },
    { name: 'without keep_last, N is keep_recent_tool_outputs', keepRecent: 8, params: undefined, expected: toolResultLines(0, 12) },
    { name: 'keep_last 2 still leaves the protected tail of 8 alone', keepRecent: 8, params: { keep_last: 2 }, expected: toolResultLines(0, 12) },
    { name: 'nothing older than N: no plan', keepRecent: 8, params: { keep_last: 25 }, expected: [] },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const items = syntheticItems(20);
      const client = await host.strategy(strategy);
      const params = proposeParams(strategy, items, { keep_recent_tool_outputs: c.keepRecent, ...(c.params ? { strategy_params: c.params } : {}) });
      const result = await client.propose(params);
      const lines = result.edits.flatMap((e) => (e.op === 'elide' ? e.line_indexes : []));
      expect(lines).toEqual(c.expected);
      expect(result.rationale.length).toBeGreaterThan(0);
      // The kernel's own plan rules accept the edits (targets elidable, outside the protected tail).
      expect(() => admitEdits(result.edits, { items, keep_recent_tool_outputs: c.keepRecent, provider: 'claude_code' })).not.toThrow();
    });
  }

  it('serves every call of a command from one warm process', async () => {
    const first = await host.strategy(strategy);
    const second = await host.strategy(strategy);
    expect(second.running).toBe(first.running);
    expect(first.running.handshake.strategies?.map((s) => s.id)).toEqual([strategy]);
  });

  it('refuses a bad keep_last with the plugin\'s invalid-input error', async () => {
    const client = await host.strategy(strategy);
    const params = proposeParams(strategy, syntheticItems(3), { strategy_params: { keep_last: -1 } });
    await expect(client.propose(params)).rejects.toMatchObject({ code: 'plugin_error', rpcCode: -32002 });
    // The process survives an error answer.
    expect(client.running.channel.alive).toBe(true);
  });
});
