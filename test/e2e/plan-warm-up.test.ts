/**
 * plan starts what a strategy will need while the provider still parses: the strategy's process,
 * and the policy's scorer for a strategy that says it asks for scores (StrategyInfo.uses_scorer).
 * Observed on a plan that never reaches the strategy (the session is below the trigger), so only
 * the warm-up can have started anything.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { planForSelector } from '../../kernel/services/plan.js';
import { withRuntime, type Runtime } from '../../kernel/services/runtime.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => home?.cleanup());

/** Plans with `strategy` far below the trigger; returns the ids the host was asked to start. */
async function warmedFor(strategy: string): Promise<{ strategies: string[]; scorers: string[]; status: string }> {
  home = demoHome();
  const env = { ...process.env, ...home.env };
  return withRuntime({ env }, async (rt: Runtime) => {
    const strategies: string[] = [];
    const scorers: string[] = [];
    const startStrategy = rt.host.strategy.bind(rt.host);
    const startScorer = rt.host.scorer.bind(rt.host);
    const strategyReady: Promise<unknown>[] = [];
    vi.spyOn(rt.host, 'strategy').mockImplementation((id, callbacks) => {
      strategies.push(id);
      const started = startStrategy(id, callbacks);
      strategyReady.push(started.catch(() => undefined));
      return started;
    });
    vi.spyOn(rt.host, 'scorer').mockImplementation((id, callbacks) => {
      scorers.push(id);
      return startScorer(id, callbacks);
    });
    const planned = await planForSelector(rt, DEMO_CLAUDE_ID, { strategy, trigger: 10_000_000, floor: 5_000_000 });
    // The warm-up runs beside the plan: wait until the strategy it started is up, and a turn more.
    await vi.waitFor(() => expect(strategyReady.length).toBeGreaterThan(0));
    await Promise.all(strategyReady);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { strategies, scorers, status: planned.outcome.status };
  });
}

describe('plan warms up what the strategy will need', () => {
  it('starts the scorer alongside a strategy that asks for scores', async () => {
    const warmed = await warmedFor('scored');
    expect(warmed.status).toBe('no_plan');
    expect(warmed.strategies).toEqual(['scored']);
    expect(warmed.scorers).toEqual(['heuristic']);
  });

  it('starts no scorer for a strategy that does not ask for scores', async () => {
    const warmed = await warmedFor('elide');
    expect(warmed.status).toBe('no_plan');
    expect(warmed.strategies).toEqual(['elide']);
    expect(warmed.scorers).toEqual([]);
  });
});

describe('a selector gets the other bundles reading the items once it asks for a plan', () => {
  /** Plans with `strategy` low enough to run it; returns how often items were offered ahead. */
  async function offersFor(strategy: string): Promise<{ fileStrategies: number; scorer: number; status: string }> {
    home = demoHome();
    const env = { ...process.env, ...home.env };
    return withRuntime({ env }, async (rt: Runtime) => {
      const files = vi.spyOn(rt.host, 'offerItemsToFileStrategies');
      const scorer = vi.spyOn(rt.host, 'offerItemsToScorer');
      const planned = await planForSelector(rt, DEMO_CLAUDE_ID, { strategy, trigger: 1_000, floor: 0 });
      return { fileStrategies: files.mock.calls.length, scorer: scorer.mock.calls.length, status: planned.outcome.status };
    });
  }

  it('auto asks for its candidates\' plans: the file strategies and the scorer are offered the items once', async () => {
    const offers = await offersFor('auto');
    expect(offers.status).toBe('plan');
    expect(offers).toMatchObject({ fileStrategies: 1, scorer: 1 });
  });

  it('agentic without an editor asks for nothing, so nothing is offered', async () => {
    const offers = await offersFor('agentic');
    expect(offers.status).toBe('no_plan');
    expect(offers).toMatchObject({ fileStrategies: 0, scorer: 0 });
  });
});
