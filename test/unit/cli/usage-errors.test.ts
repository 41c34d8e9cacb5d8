import { describe, expect, it } from 'vitest';
import { plainUsage, toEnvelope } from '../../../kernel/cli/base-command.js';

describe("oclif's parse errors in the CLI's own words", () => {
  it('names flags with their dashes and drops the preamble', () => {
    expect(plainUsage('The following errors occurred: Missing required flag context-tokens Missing required flag provider')).toBe(
      'missing required flag --context-tokens; missing required flag --provider',
    );
    expect(plainUsage('The following error occurred: --since=1h cannot also be provided when using --all')).toBe('--since=1h cannot also be provided when using --all');
  });

  it('says what a number flag needs', () => {
    expect(plainUsage('Parsing --limit Expected an integer but received: 1.5')).toBe('--limit must be a whole number (got 1.5)');
    expect(plainUsage('Parsing --format Expected --format=yaml to be one of: csv, json')).toBe('--format: Expected --format=yaml to be one of: csv, json');
  });

  it('is applied to usage errors only, folded to one line', () => {
    const error = Object.assign(new Error('The following error occurred:\nMissing required flag query\nSee more help with --help'), { oclif: { exit: 2 } });
    expect(toEnvelope(error)).toEqual({ ok: false, error: { code: 'usage', message: 'missing required flag --query' } });
  });
});
