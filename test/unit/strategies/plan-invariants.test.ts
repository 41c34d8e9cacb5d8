/**
 * Every built-in strategy, on varied generated sessions and policies, against the host's own rules:
 * each plan passes the kernel's admission (no protected tail, no overlap, one card, bounds), file
 * plans shrink the context and project it exactly as the host does, rationales carry no transcript
 * text, and nothing fires below the trigger.
 */
import { describe, expect, it } from 'vitest';
import { admitEdits } from '../../../kernel/validate/edit-rules.js';
import { projectContextAfter } from '../../../kernel/validate/projection.js';
import type { ResolvedPolicy, StrategyProposeParams } from '../../../schemas/generated/types.js';
import type { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { CODEX_INFO, proposeParams } from '../../fixtures/transcripts/params.js';
import { codingSession, duplicateSession, mixedSession, PLANTED_SECRET } from '../../fixtures/transcripts/sessions.js';
import { runStrategy, STRATEGIES } from './in-process-host.js';

const SESSIONS: Array<[string, () => TranscriptBuilder]> = [
  ['coding', codingSession],
  ['duplicates', duplicateSession],
  ...[1, 2, 3, 4, 5, 6].map((seed): [string, () => TranscriptBuilder] => [`mixed ${seed}`, () => mixedSession(seed)]),
];

const POLICIES: Array<Partial<ResolvedPolicy>> = [
  { keep_recent_tool_outputs: 0, floor_tokens: 0 },
  { keep_recent_tool_outputs: 2, floor_tokens: 2000 },
  { keep_recent_tool_outputs: 8, floor_tokens: 5000, keep_score_threshold: 0.5 },
  { keep_recent_tool_outputs: 3, floor_tokens: 1000, keep_recent_turns: 0, result_max_bytes: 100, strategy_params: {} },
];

const IDS = [...STRATEGIES.keys()];

function cases(): Array<{ name: string; params: StrategyProposeParams }> {
  const out: Array<{ name: string; params: StrategyProposeParams }> = [];
  for (const [sessionName, build] of SESSIONS) {
    const b = build();
    POLICIES.forEach((policy, p) => {
      for (const provider of [undefined, CODEX_INFO]) {
        out.push({
          name: `${sessionName} / policy ${p} / ${provider?.id ?? 'claude_code'}`,
          params: proposeParams(b.items, { policy: { trigger_tokens: 1000, min_savings_tokens: 0, ...policy }, ...(provider ? { provider } : {}) }),
        });
      }
    });
  }
  return out;
}

describe('plan invariants of every built-in strategy', () => {
  it('covers every strategy id the bundles declare', () => {
    expect(IDS.sort()).toEqual(['agentic', 'auto', 'cache_aware', 'cache_edits', 'cliff', 'compacted', 'dedupe', 'elide', 'micro', 'middle', 'sawtooth', 'scored', 'structured']);
  });

  for (const id of IDS) {
    it(`${id}: plans pass host admission, shrink the context and leak no content`, async () => {
      let plans = 0;
      for (const { name, params } of cases()) {
        const withEditor = id === 'agentic' ? { ...params, policy: { ...params.policy, strategy_params: { editor: 'elide' } } } : params;
        const result = await runStrategy(id, withEditor);
        expect(result.rationale, name).not.toContain(PLANTED_SECRET);
        expect(result.rationale.length, name).toBeLessThanOrEqual(4096);
        if (result.edits.length === 0) continue;
        plans++;
        expect(() => admitEdits(result.edits, { items: params.items, keep_recent_tool_outputs: params.policy.keep_recent_tool_outputs, provider: params.session.provider }), name).not.toThrow();
        const hostAfter = projectContextAfter({ items: params.items, edits: result.edits, context_tokens_before: params.context_tokens, floor_tokens: params.policy.floor_tokens });
        const kinds = new Set(result.edits.map((e) => e.op));
        if (!kinds.has('provider_compact') && !kinds.has('cache_edit')) {
          expect(hostAfter, name).toBeLessThan(params.context_tokens);
          expect(result.context_tokens_after, name).toBe(hostAfter);
        }
      }
      expect(plans, `${id} never produced a plan`).toBeGreaterThan(0);
    });

    it(`${id}: no plan below the effective trigger`, async () => {
      for (const { name, params } of cases()) {
        const result = await runStrategy(id, { ...params, policy: { ...params.policy, effective_trigger_tokens: params.context_tokens + 1 } });
        expect(result.edits, name).toEqual([]);
      }
    });
  }
});
