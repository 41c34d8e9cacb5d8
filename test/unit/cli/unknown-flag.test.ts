import { describe, expect, it } from 'vitest';
import { nearestFlag, unknownFlagMessage } from '../../../kernel/cli/unknown-flag.js';

const flags = [{ name: 'trigger' }, { name: 'floor' }, { name: 'strategy' }, { name: 'json' }, { name: 'secret', hidden: true }];

describe('unknown flags', () => {
  it('names the flag a typo or a config key spelling meant', () => {
    expect(nearestFlag('--flor', flags)).toBe('--floor');
    expect(nearestFlag('--trigger-tokens', flags)).toBe('--trigger');
    expect(nearestFlag('--floor_tokens=5', flags)).toBe('--floor');
    expect(nearestFlag('--strategi', flags)).toBe('--strategy');
  });

  it('suggests nothing far off, hidden, or a short flag', () => {
    expect(nearestFlag('--bogus', flags)).toBeNull();
    expect(nearestFlag('--secrte', flags)).toBeNull();
    expect(nearestFlag('-t', flags)).toBeNull();
  });

  it("rewrites oclif's refusal only", () => {
    expect(unknownFlagMessage('Nonexistent flag: --flor', ['--flor'], 'plan', flags)).toBe('Nonexistent flag: --flor (did you mean --floor?); gobstopper plan --help lists its flags');
    expect(unknownFlagMessage('Nonexistent flags: --x, --jsn', ['--x', '--jsn'], 'plugin list', flags)).toBe(
      'Nonexistent flags: --x, --jsn (did you mean --json?); gobstopper plugin list --help lists its flags',
    );
    expect(unknownFlagMessage('Missing 1 required arg: session', [], 'plan', flags)).toBeNull();
  });
});
