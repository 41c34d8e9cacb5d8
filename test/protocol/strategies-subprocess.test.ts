/**
 * The strategy and scorer bundles built exactly as they ship (one esbuild bundle each, hashes pinned
 * in the manifest), admitted and spawned by the kernel's PluginHost, with host/score and host/propose
 * answered by the host's callbacks.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { PluginHost } from '../../kernel/plugins/host/plugin-host.js';
import { connectBundle } from '../../kernel/plugins/host/running-bundle.js';
import { spawnPluginProcess } from '../../kernel/plugins/process/plugin-process.js';
import type { HostCallbacks } from '../../kernel/plugins/protocol/host-callbacks.js';
import { PluginRegistry } from '../../kernel/plugins/registry/registry.js';
import { admitProposal } from '../../kernel/policy/admit-proposal.js';
import { admitEdits } from '../../kernel/validate/edit-rules.js';
import type { HostProposeResult, StrategyProposeParams } from '../../schemas/generated/types.js';
import { buildBuiltinBundle, tempDir, type TempDir } from '../fixtures/bundles/build-bundle.js';
import { proposeParams } from '../fixtures/transcripts/params.js';
import { codingSession } from '../fixtures/transcripts/sessions.js';

const BUNDLES = ['strategies-core', 'strategies-control', 'scorer-heuristic'];
const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2, min_savings_tokens: 0 };

describe('built strategy bundles under the real plugin host', () => {
  let dirs: TempDir;
  let host: PluginHost;

  beforeAll(async () => {
    dirs = tempDir('gob-strategies-');
    const builtins = join(dirs.path, 'builtins');
    for (const name of BUNDLES) await buildBuiltinBundle(builtins, name);
    host = new PluginHost({ registry: new PluginRegistry({ builtinDir: builtins, dataDir: join(dirs.path, 'data') }) });
  }, 120_000);

  afterAll(async () => {
    await host?.close();
    dirs?.cleanup();
  });

  /** The callbacks a command gives a strategy call: heuristic scores and admitted plans of other strategies. */
  function callbacks(params: StrategyProposeParams): HostCallbacks {
    const cb: HostCallbacks = {
      score: async ({ candidates }) => {
        const scorer = await host.scorer('heuristic');
        const answer = await scorer.score({ session: params.session, items: params.items, candidates, policy: params.policy });
        return { scorer_id: 'heuristic', scores: answer.scores, summary: answer.summary ?? null };
      },
      propose: async ({ strategy_id }): Promise<HostProposeResult> => {
        const client = await host.strategy(strategy_id);
        const result = await client.propose(params, cb);
        const admitted = admitProposal({
          transcript: { items: params.items, session: params.session },
          policy: params.policy,
          context_tokens_before: params.context_tokens,
          proposal: { edits: result.edits, rationale: result.rationale, strategy: result.strategy ?? strategy_id, source: 'strategy' },
        });
        return admitted.status === 'plan'
          ? { status: 'plan', plan: admitted.plan, prefix_tokens: admitted.prefix_tokens }
          : { status: 'no_plan', reason_code: admitted.reason_code };
      },
    };
    return cb;
  }

  it('lists every built-in strategy from the bundles that provide it', async () => {
    const listed = await host.listStrategies();
    expect(listed.map((l) => `${l.bundle.id}:${l.strategy.id}:${l.strategy.kind}`)).toEqual([
      'strategies-core:agentic:selector',
      'strategies-core:auto:selector',
      'strategies-core:cache_aware:file',
      'strategies-control:cache_edits:control',
      'strategies-core:cliff:file',
      'strategies-core:compacted:file',
      'strategies-core:dedupe:file',
      'strategies-core:elide:file',
      'strategies-core:micro:file',
      'strategies-core:middle:file',
      'strategies-control:sawtooth:control',
      'strategies-core:scored:file',
      'strategies-core:structured:file',
    ]);
  });

  it('elide answers from its own process', async () => {
    const params = proposeParams(codingSession().items, { policy });
    const result = await (await host.strategy('elide')).propose(params);
    expect(result.edits).toEqual([{ op: 'elide', line_indexes: [4, 7, 10, 13, 16], stub_template: '[output elided by gobstopper: {bytes} bytes]' }]);
  });

  it('scored reaches the heuristic scorer bundle through the host', async () => {
    const params = proposeParams(codingSession().items, { policy });
    const result = await (await host.strategy('scored')).propose(params, callbacks(params));
    expect(result.edits.map((e) => e.op)).toEqual(['elide', 'inject_digest']);
    expect(result.rationale).toContain('| scorer heuristic: 8 candidates scored');
    expect(() => admitEdits(result.edits, { items: params.items, keep_recent_tool_outputs: 2, provider: 'claude_code' })).not.toThrow();
  });

  it('auto compares the other bundles\' admitted plans and returns the winner', async () => {
    const params = proposeParams(codingSession().items, { policy });
    const result = await (await host.strategy('auto')).propose(params, callbacks(params));
    expect(result.strategy).toBe('cache_aware');
    expect(result.edits[0]).toMatchObject({ op: 'elide', line_indexes: [13, 16, 19, 22, 25] });
    // Every candidate answered (it ran in the same process as auto, nested inside auto's call).
    for (const id of ['cache_aware', 'scored', 'elide', 'compacted', 'dedupe', 'micro', 'middle', 'structured']) {
      expect(result.rationale).toMatch(new RegExp(`[ ,]${id}=(\\d|no_plan)`));
    }
  });
  it('a bundle served by the SDK exits on its own when the host closes it (shutdown, then exit)', async () => {
    // Being killed after the grace period would also end it (signal SIGKILL), but every command
    // would wait for that.
    const bundle = admitBundle(join(dirs.path, 'builtins', 'strategies-core'));
    const child = await spawnPluginProcess(bundle, { maxOutputBytes: 1 << 20, stderrBytes: 4096 });
    const running = await connectBundle(bundle, child.transport, { hostVersion: '0.1.0' }, child.pid);
    await running.channel.close();
    expect(await child.transport.exited).toEqual({ code: 0, signal: null });
  });
});
