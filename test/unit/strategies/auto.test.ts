import { describe, expect, it } from 'vitest';
import { AUTO_CANDIDATES, proposeAuto } from '../../../plugins/strategies-core/src/auto.js';
import { cachePreservationScore } from '../../../sdk/strategy/cache-score.js';
import type { Edit, HostProposeResult } from '../../../schemas/generated/types.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { CODEX_INFO, proposeParams, tableProposer } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };

function planAnswer(strategy: string, lines: number[], after: number, prefix: number | null): HostProposeResult {
  const edits: Edit[] = [{ op: 'elide', line_indexes: lines, stub_template: '[output elided by gobstopper: {bytes} bytes]' }];
  return { status: 'plan', plan: { strategy, rationale: `${strategy} rationale`, edits, context_tokens_before: 10_610, context_tokens_after: after }, prefix_tokens: prefix };
}

describe('auto', () => {
  it('scores by savings × (prefix / context)^3 (the worked examples)', () => {
    expect(cachePreservationScore(400, 500, 1000)).toBe(50);
    expect(cachePreservationScore(150, 750, 1000)).toBe(63.28125);
  });

  it('idle: asks every file candidate except cliff, scored last, and picks the best validated plan', async () => {
    const host = tableProposer({
      cache_aware: planAnswer('cache_aware', [13, 16, 19, 22, 25], 6610, 9000), // 4000 × (9000/10610)^3 ≈ 2441
      scored: planAnswer('scored', [7, 10, 16], 4610, 5000), // 6000 × (5000/10610)^3 ≈ 628
      elide: planAnswer('elide', [4, 7, 10, 13, 16], 2610, 300), // tiny prefix
      compacted: { status: 'error', reason_code: 'invalid_plan', message: 'overlapping elision edits' },
    });
    const result = await proposeAuto(proposeParams(codingSession().items, { policy, strategyId: 'auto' }), host.propose, (id) => id === 'scored');
    // scored is asked last (the scorer reads the items meanwhile); the rationale keeps the configured order.
    expect(host.asked).toEqual([...AUTO_CANDIDATES.filter((c) => c !== 'scored'), 'scored']);
    expect(host.asked).not.toContain('cliff');
    expect(result.strategy).toBe('cache_aware');
    expect(result.edits).toEqual(planAnswer('cache_aware', [13, 16, 19, 22, 25], 6610, 9000).plan!.edits);
    expect(result.context_tokens_after).toBe(6610);
    expect(result.rationale).toBe(
      'auto: selected cache_aware (score 2441); scores cache_aware=2441, scored=628, elide=0.181, compacted=error(invalid_plan), dedupe=no_plan(strategy_returned_no_plan), micro=no_plan(strategy_returned_no_plan), middle=no_plan(strategy_returned_no_plan), structured=no_plan(strategy_returned_no_plan); cache_aware rationale',
    );
  });

  it('keeps the earlier candidate on a tie, and computes the prefix itself when the host gives none', async () => {
    const items = codingSession().items;
    // Both elide from line 10: the prefix is lines 0..9 = 100 + 50 + 20 + 10 + 1016 + 20 + 10 + 1016 + 20 + 10 = 2272.
    const host = tableProposer({
      scored: planAnswer('scored', [10], 9634, 2272),
      elide: planAnswer('elide', [10], 9634, null),
    });
    // scored is asked after elide, yet keeps the lead it has in the configured order.
    const result = await proposeAuto(proposeParams(items, { policy }), host.propose, (id) => id === 'scored');
    expect(host.asked.indexOf('scored')).toBeGreaterThan(host.asked.indexOf('elide'));
    expect(result.strategy).toBe('scored');
    expect(result.rationale).toContain('scored=9.58, elide=9.58');
  });

  it('idle with no candidate plan: no plan, with every outcome in the rationale', async () => {
    const result = await proposeAuto(proposeParams(codingSession().items, { policy }), tableProposer({}).propose);
    expect(result.edits).toEqual([]);
    expect(result.rationale).toMatch(/^no candidate produced a plan; cache_aware=no_plan/);
  });

  it("says what the candidates that proposed nothing said, the same words once, and stays within the rationale's limit", async () => {
    const small = { status: 'no_plan' as const, reason_code: 'strategy_returned_no_plan', message: 'no tool outputs over 200 bytes outside the 8 protected recent ones' };
    const result = await proposeAuto(
      proposeParams(codingSession().items, { policy }),
      tableProposer({ elide: small, compacted: small, dedupe: { status: 'no_plan', reason_code: 'strategy_returned_no_plan', message: 'no older duplicate tool outputs' } }).propose,
    );
    expect(result.rationale).toContain('; elide, compacted: no tool outputs over 200 bytes outside the 8 protected recent ones; dedupe: no older duplicate tool outputs');
    const long = { status: 'no_plan' as const, reason_code: 'strategy_returned_no_plan', message: 'x'.repeat(3000) };
    const capped = await proposeAuto(proposeParams(codingSession().items, { policy }), tableProposer({ elide: long, dedupe: { ...long, message: 'y'.repeat(3000) } }).propose);
    expect(capped.rationale.length).toBe(4096);
    expect(capped.rationale.endsWith('...')).toBe(true);
  });

  it('takes its candidate list from strategy_params, never itself', async () => {
    const host = tableProposer({ dedupe: planAnswer('dedupe', [4], 9634, 150) });
    const params = proposeParams(codingSession().items, { policy: { ...policy, strategy_params: { candidates: ['dedupe', 'auto', 'my-plugin'] } }, strategyId: 'auto' });
    const result = await proposeAuto(params, host.propose);
    expect(host.asked).toEqual(['dedupe', 'my-plugin']);
    expect(result.strategy).toBe('dedupe');
  });

  it('live Claude with tool ids delegates to cache_edits, falling back to sawtooth', async () => {
    const cacheEdit: HostProposeResult = {
      status: 'plan',
      plan: { strategy: 'cache_edits', rationale: 'ce', edits: [{ op: 'cache_edit', tool_use_ids: ['toolu_01'] }], context_tokens_before: 10_610, context_tokens_after: 9634 },
    };
    const sawtooth: HostProposeResult = {
      status: 'plan',
      plan: { strategy: 'sawtooth', rationale: 'st', edits: [{ op: 'provider_compact', control: '/compact' }], context_tokens_before: 10_610, context_tokens_after: 6000 },
    };
    const live = proposeParams(codingSession().items, { policy, active: true });
    const first = tableProposer({ cache_edits: cacheEdit, sawtooth });
    const r1 = await proposeAuto(live, first.propose);
    expect(first.asked).toEqual(['cache_edits']);
    expect(r1).toMatchObject({ strategy: 'cache_edits', edits: cacheEdit.plan!.edits, rationale: 'auto (live session): delegated to cache_edits; ce' });

    const fallback = tableProposer({ sawtooth });
    const r2 = await proposeAuto(live, fallback.propose);
    expect(fallback.asked).toEqual(['cache_edits', 'sawtooth']);
    expect(r2.strategy).toBe('sawtooth');
  });

  it('live sessions of other providers, or without tool ids, go straight to sawtooth', async () => {
    const codex = tableProposer({});
    const r = await proposeAuto(proposeParams(codingSession().items, { policy, active: true, provider: CODEX_INFO }), codex.propose);
    expect(codex.asked).toEqual(['sawtooth']);
    expect(r.rationale).toBe('auto (live session): no provider-side compaction available; sawtooth=no_plan(strategy_returned_no_plan)');

    const b = new TranscriptBuilder();
    b.system({ tokens: 9000 });
    b.step(null, { label: 'Bash', bytes: 4000 });
    const noIds = tableProposer({});
    await proposeAuto(proposeParams(b.items, { policy, active: true }), noIds.propose);
    expect(noIds.asked).toEqual(['sawtooth']);

    const empty = tableProposer({});
    await proposeAuto(proposeParams([], { policy, contextTokens: 9000 }), empty.propose);
    expect(empty.asked).toEqual(['sawtooth']);
  });

  it('returns no plan below the trigger without asking anything', async () => {
    const host = tableProposer({});
    expect((await proposeAuto(proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611 } }), host.propose)).edits).toEqual([]);
    expect(host.asked).toEqual([]);
  });
});
