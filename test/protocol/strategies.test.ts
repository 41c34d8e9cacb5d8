/**
 * Each strategy and scorer bundle over the real protocol framing (in-memory NDJSON): initialize
 * declares what it provides, strategy/propose round-trips, and the plugin→host calls (host/score,
 * host/propose) reach a host that routes them to the other bundles, as the kernel does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { admitProposal } from '../../kernel/policy/admit-proposal.js';
import { definition as scorerBundle } from '../../plugins/scorer-heuristic/src/definition.js';
import { definition as controlBundle } from '../../plugins/strategies-control/src/definition.js';
import { definition as coreBundle } from '../../plugins/strategies-core/src/definition.js';
import { validateInitializeResult, validateStrategyProposeResult, validateScorerScoreResult } from '../../schemas/generated/validators.js';
import type { HostProposeResult, StrategyProposeParams } from '../../schemas/generated/types.js';
import * as P from '../../sdk/protocol.js';
import type { PluginDefinition } from '../../sdk/serve.js';
import { proposeParams } from '../fixtures/transcripts/params.js';
import { codingSession } from '../fixtures/transcripts/sessions.js';
import { connectInMemory } from '../helpers/memory-connection.js';

const HOST = { name: 'test-host', version: '0.0.0' };
const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2, min_savings_tokens: 0 };

let open: Array<ReturnType<typeof connectInMemory>> = [];
afterEach(() => {
  for (const c of open) c.dispose();
  open = [];
});

function connect(def: PluginDefinition): MessageConnection {
  const c = connectInMemory(def);
  open.push(c);
  return c.host;
}

async function initialize(host: MessageConnection) {
  const result = await host.sendRequest(P.Initialize, { protocol_versions: [1], host: HOST });
  expect(validateInitializeResult(result), JSON.stringify(validateInitializeResult.errors)).toBe(true);
  return result;
}

/**
 * A small host: one connection per bundle, strategy ids routed to the bundle that declared them,
 * host/score sent to the heuristic scorer, host/propose admitted with the kernel's admission.
 */
async function miniHost(params: StrategyProposeParams) {
  const scorer = connect(scorerBundle);
  await initialize(scorer);
  const owners = new Map<string, MessageConnection>();
  for (const def of [coreBundle, controlBundle]) {
    const conn = connect(def);
    const init = await initialize(conn);
    for (const s of init.strategies ?? []) owners.set(s.id, conn);
  }
  const calls: string[] = [];
  const propose = (id: string) => owners.get(id)!.sendRequest(P.StrategyPropose, { ...params, strategy_id: id });
  for (const conn of new Set(owners.values())) {
    conn.onRequest(P.HostScore, async ({ candidates }) => {
      calls.push(`score:${candidates.length}`);
      const answer = await scorer.sendRequest(P.ScorerScore, {
        scorer_id: 'heuristic',
        session: params.session,
        items: params.items,
        candidates,
        policy: params.policy,
      });
      return { scorer_id: 'heuristic', scores: answer.scores, summary: answer.summary ?? null };
    });
    conn.onRequest(P.HostPropose, async ({ strategy_id }): Promise<HostProposeResult> => {
      calls.push(`propose:${strategy_id}`);
      const result = await propose(strategy_id);
      const admitted = admitProposal({
        transcript: { items: params.items, session: params.session },
        policy: params.policy,
        context_tokens_before: params.context_tokens,
        proposal: { edits: result.edits, rationale: result.rationale, strategy: result.strategy ?? strategy_id, source: 'strategy' },
      });
      return admitted.status === 'plan'
        ? { status: 'plan', plan: admitted.plan, prefix_tokens: admitted.prefix_tokens }
        : { status: 'no_plan', reason_code: admitted.reason_code };
    });
  }
  return { propose, calls };
}

describe('strategy and scorer bundles over the protocol', () => {
  it('each bundle declares its strategies with kinds and params schemas', async () => {
    const declared: Record<string, string> = {};
    for (const def of [coreBundle, controlBundle]) {
      const init = await initialize(connect(def));
      expect(init.plugin.id).toBe(def.id);
      for (const s of init.strategies ?? []) {
        declared[s.id] = s.kind;
        expect(s.params_schema, s.id).toMatchObject({ type: 'object' });
      }
    }
    expect(declared).toEqual({
      elide: 'file',
      compacted: 'file',
      structured: 'file',
      scored: 'file',
      dedupe: 'file',
      micro: 'file',
      middle: 'file',
      cache_aware: 'file',
      cliff: 'file',
      agentic: 'selector',
      sawtooth: 'control',
      cache_edits: 'control',
      auto: 'selector',
    });
    const control = await initialize(connect(controlBundle));
    expect(control.strategies?.find((s) => s.id === 'cache_edits')?.provider_ids).toEqual(['claude_code']);
    const scorer = await initialize(connect(scorerBundle));
    expect(scorer.scorers?.map((s) => s.id)).toEqual(['heuristic']);
    expect(scorer.strategies).toEqual([]);
  });

  it('elide round-trips a plan', async () => {
    const host = connect(coreBundle);
    await initialize(host);
    const result = await host.sendRequest(P.StrategyPropose, proposeParams(codingSession().items, { policy, strategyId: 'elide' }));
    expect(validateStrategyProposeResult(result)).toBe(true);
    expect(result.edits).toEqual([{ op: 'elide', line_indexes: [4, 7, 10, 13, 16], stub_template: '[output elided by gobstopper: {bytes} bytes]' }]);
    expect(result.context_tokens_after).toBe(5730);
  });

  it('the scorer answers one score per candidate in [0, 1]', async () => {
    const host = connect(scorerBundle);
    await initialize(host);
    const params = proposeParams(codingSession().items, { policy });
    const result = await host.sendRequest(P.ScorerScore, { scorer_id: 'heuristic', session: params.session, items: params.items, candidates: [4, 7, 10], policy: params.policy });
    expect(validateScorerScoreResult(result)).toBe(true);
    expect(result.scores.map((s) => s.line_index)).toEqual([4, 7, 10]);
    for (const s of result.scores) expect(s.keep_probability).toBeGreaterThanOrEqual(0);
  });

  it('scored asks the host for scores, and a null (unknown) score is preserved under a cutoff', async () => {
    const host = connect(coreBundle);
    await initialize(host);
    const asked: number[][] = [];
    host.onRequest(P.HostScore, ({ candidates }) => {
      asked.push(candidates);
      // JSON has no NaN: an unknown score crosses the wire as null.
      return { scorer_id: 'fake', scores: candidates.map((line) => ({ line_index: line, keep_probability: line === 7 ? null : 0.1 })) };
    });
    const params = proposeParams(codingSession().items, { policy: { ...policy, keep_score_threshold: 0.5 }, strategyId: 'scored' });
    const result = await host.sendRequest(P.StrategyPropose, params);
    expect(validateStrategyProposeResult(result)).toBe(true);
    expect(asked).toEqual([[4, 7, 10, 13, 16, 19, 22, 25]]);
    const elided = (result.edits[0] as { line_indexes: number[] }).line_indexes;
    expect(elided).not.toContain(7);
    expect(result.rationale).toContain('1 outputs protected by keep-score cutoff 0.5 | scorer fake');
  });

  it('auto reaches every candidate through host/propose and returns the winning validated plan', async () => {
    const params = proposeParams(codingSession().items, { policy, strategyId: 'auto' });
    const host = await miniHost(params);
    const result = await host.propose('auto');
    expect(validateStrategyProposeResult(result)).toBe(true);
    // scored last: the scorer reads the items while the other candidates run.
    expect(host.calls.filter((c) => c.startsWith('propose:'))).toEqual(
      ['cache_aware', 'elide', 'compacted', 'dedupe', 'micro', 'middle', 'structured', 'scored'].map((id) => `propose:${id}`),
    );
    // scored reached the scorer through the host while auto was waiting on it.
    expect(host.calls).toContain('score:8');
    // cache_aware keeps the longest prefix of the plans that reach the floor.
    expect(result.strategy).toBe('cache_aware');
    const direct = await host.propose('cache_aware');
    expect(result.edits).toEqual(direct.edits);
    expect(result.rationale).toMatch(/^auto: selected cache_aware \(score \d+\); scores cache_aware=\d+, scored=[\d.]+, elide=[\d.]+/);
  });

  it('auto on a live Claude session delegates to cache_edits', async () => {
    const params = proposeParams(codingSession().items, { policy, strategyId: 'auto', active: true });
    const host = await miniHost(params);
    const result = await host.propose('auto');
    expect(result.strategy).toBe('cache_edits');
    expect(result.edits[0]).toMatchObject({ op: 'cache_edit' });
  });

  it('errors from a strategy reach the host as protocol errors', async () => {
    const host = connect(coreBundle);
    await initialize(host);
    host.onRequest(P.HostPropose, (): HostProposeResult => ({ status: 'error', reason_code: 'invalid_elision_bounds', message: 'invalid elision bounds or stub template' }));
    const params = proposeParams(codingSession().items, { policy: { ...policy, strategy_params: { editor: 'broken' } }, strategyId: 'agentic' });
    await expect(host.sendRequest(P.StrategyPropose, params)).rejects.toMatchObject({ code: P.PluginErrorCodes.InvalidInput });
    await expect(host.sendRequest(P.StrategyPropose, { ...params, strategy_id: 'nope' })).rejects.toMatchObject({ code: P.PluginErrorCodes.NotSupported });
  });
});
