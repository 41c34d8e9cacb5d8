import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkStrategyParams } from '../../../kernel/plugins/host/strategy-params.js';
import { requireResolvedPolicy } from '../../../kernel/services/policy-params.js';
import { openWatchState, watchPass } from '../../../kernel/services/watch.js';
import { policyVerdicts } from '../../../kernel/watch/policy-verdicts.js';
import { demoHome } from '../../helpers/demo-home.js';

// Counts the policy checks a watch pass makes, each checked as it always is.
vi.mock('../../../kernel/services/policy-params.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../kernel/services/policy-params.js')>();
  return { ...actual, requireResolvedPolicy: vi.fn(actual.requireResolvedPolicy) };
});
const checked = vi.mocked(requireResolvedPolicy);

type Policy = Parameters<Parameters<typeof policyVerdicts>[0]>[0];

/** A policy set by the [policy] table of `path`, its sources as resolve-config records them. */
const policy = (strategy: string, path: string, strategyParams: Record<string, unknown> = { candidates: ['elide'] }): Policy => {
  const source = { layer: 'policy', scope: 'user', table: '[policy]', path };
  return { values: { strategy, strategy_params: strategyParams }, external: null, sources: { strategy: source, strategy_params: source } } as unknown as Policy;
};

describe('policyVerdicts', () => {
  it('checks each distinct policy once and gives every session of it the same answer', async () => {
    const check = vi.fn(async (config: Policy) => (config.values.strategy === 'nosuch' ? `unknown ${config.values.strategy}` : null));
    const verdictOf = policyVerdicts(check);
    expect(await verdictOf(policy('auto', '/a.toml'))).toBeNull();
    expect(await verdictOf(policy('auto', '/a.toml'))).toBeNull();
    expect(await verdictOf(policy('nosuch', '/a.toml'))).toBe('unknown nosuch');
    expect(await verdictOf(policy('nosuch', '/a.toml'))).toBe('unknown nosuch');
    expect(check).toHaveBeenCalledTimes(2);
  });

  it('checks the same values set by another table again: a refusal names the table', async () => {
    const check = vi.fn(async (config: Policy) => JSON.stringify(config.sources));
    const verdictOf = policyVerdicts(check);
    expect(await verdictOf(policy('auto', '/a.toml'))).toContain('/a.toml');
    expect(await verdictOf(policy('auto', '/b.toml'))).toContain('/b.toml');
    expect(check).toHaveBeenCalledTimes(2);
  });

  it('checks params written in another key order again: the refusal names the key its own check meets first', async () => {
    const schema = { type: 'object', additionalProperties: false, properties: { keep: { type: 'integer' } } };
    const verdictOf = policyVerdicts((config) => checkStrategyParams(config.values.strategy, schema, config.values.strategy_params).then(() => null, (error: Error) => error.message));
    expect(await verdictOf(policy('keeper', '/a.toml', { zz: 1, aa: 2 }))).toContain("additional properties 'zz'");
    expect(await verdictOf(policy('keeper', '/a.toml', { aa: 2, zz: 1 }))).toContain("additional properties 'aa'");
  });
});

describe('a watch pass', () => {
  let home: ReturnType<typeof demoHome> | undefined;
  afterEach(() => home?.cleanup());

  it('checks a policy its sessions share once', async () => {
    home = demoHome('[policy]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide", "dedupe"] }\ntrigger_tokens = 5000000\nfloor_tokens = 0\n');
    const options = { env: home.env, dryRun: true };
    checked.mockClear();
    const pass = await watchPass(options, await openWatchState(home.env, undefined), 1);
    expect(pass.decisions.map((d) => [d.provider, d.outcome]).sort()).toEqual([['claude_code', 'below_trigger'], ['codex', 'below_trigger']]);
    expect(checked).toHaveBeenCalledTimes(1);
  });

  it('checks a policy one provider table changes on its own', async () => {
    home = demoHome('[policy]\nstrategy = "auto"\nstrategy_params = { candidates = ["elide", "dedupe"] }\ntrigger_tokens = 5000000\nfloor_tokens = 0\n[provider.codex]\ntrigger_tokens = 4000000\n');
    checked.mockClear();
    await watchPass({ env: home.env, dryRun: true }, await openWatchState(home.env, undefined), 1);
    expect(checked).toHaveBeenCalledTimes(2);
  });
});
