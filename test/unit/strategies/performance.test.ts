/**
 * Strategies and the scorer must stay linear or n log n over 100,000 records. Timing a 4× larger
 * input catches a quadratic step (16×) without depending on the machine's absolute speed.
 */
import { describe, expect, it } from 'vitest';
import { scoreHeuristic } from '../../../plugins/scorer-heuristic/src/heuristic.js';
import type { StrategyProposeParams } from '../../../schemas/generated/types.js';
import { staleCandidates } from '../../../sdk/strategy/candidates.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { largeSession } from '../../fixtures/transcripts/sessions.js';
import { runStrategy, STRATEGIES } from './in-process-host.js';

const LARGE_STEPS = 33_333; // 2 + 3 × 33,333 = 100,001 records
const SMALL_STEPS = LARGE_STEPS / 4;

function params(steps: number): StrategyProposeParams {
  const b = largeSession(steps);
  // A floor far below the context makes every strategy walk most of the transcript.
  return proposeParams(b.items, { policy: { trigger_tokens: 1000, floor_tokens: 1000, min_savings_tokens: 0 } });
}

async function bestOf(runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe('performance over 100,000 records', () => {
  const small = params(SMALL_STEPS);
  const large = params(LARGE_STEPS);

  it('builds the large session at the record limit', () => {
    expect(large.items.length).toBeGreaterThanOrEqual(100_000);
  });

  it('the heuristic scorer scales near-linearly', async () => {
    const smallCandidates = staleCandidates(small.items, 8).map((i) => i.line_index);
    const largeCandidates = staleCandidates(large.items, 8).map((i) => i.line_index);
    const tSmall = await bestOf(2, () => scoreHeuristic(small.items, smallCandidates));
    const tLarge = await bestOf(2, () => scoreHeuristic(large.items, largeCandidates));
    expect(tLarge / Math.max(tSmall, 1)).toBeLessThan(10);
    expect(tLarge).toBeLessThan(20_000);
  });

  for (const id of [...STRATEGIES.keys()].filter((s) => s !== 'agentic')) {
    it(`${id} scales near-linearly`, async () => {
      const tSmall = await bestOf(2, () => runStrategy(id, small));
      const tLarge = await bestOf(2, () => runStrategy(id, large));
      expect(tLarge / Math.max(tSmall, 5)).toBeLessThan(10);
      expect(tLarge).toBeLessThan(id === 'auto' ? 60_000 : 20_000);
    });
  }
});
