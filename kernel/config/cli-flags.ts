/** Flags every policy-reading command shares, so --config and --preset mean the same thing everywhere. */
import { Flags } from '@oclif/core';
import { BUILTIN_PROVIDERS } from '../policy/provider-controls.js';

export const configFlag = Flags.string({
  summary: 'Config file to use instead of $XDG_CONFIG_HOME/gobstopper/config.toml.',
  helpValue: '<path>',
});

export const presetFlag = Flags.string({
  summary: 'Apply the [presets.<name>] table of the config (see gobstopper presets).',
  helpValue: '<name>',
});

/** A provider id as a person may type it: people say claude for Claude Code. */
export const providerIdOf = (value: string): string => (value === 'claude' ? 'claude_code' : value);

export const providerFlag = Flags.string({
  summary: 'Apply the [provider.<id>] table of the config (claude is taken for claude_code).',
  options: [...BUILTIN_PROVIDERS, 'claude'],
  parse: async (value) => providerIdOf(value),
});

/** The sessions of these providers only (detect, bench, watch). */
export const providerFilterFlag = Flags.string({
  summary: 'Only this provider (e.g. claude_code or claude, codex); repeatable.',
  helpValue: '<id>',
  multiple: true,
  multipleNonGreedy: true,
  parse: async (value) => providerIdOf(value),
});

export const quotaPressureFlag = Flags.string({
  summary: 'Scale the trigger: low compacts later (×1.15), high earlier (×0.7, but not to within min_savings_tokens of the floor).',
  options: ['low', 'normal', 'high'],
});
