import { afterEach, describe, expect, it, vi } from 'vitest';
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

const policy = (strategy: string, table: string): Policy =>
  ({
    values: { strategy, strategy_params: { candidates: ['elide'] } },
    external: null,
    sources: { strategy: { layer: 'policy', file: table }, strategy_params: { layer: 'policy', file: table } },
  }) as unknown as Policy;

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
