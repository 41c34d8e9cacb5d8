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

export const providerFlag = Flags.string({
  summary: 'Apply the [provider.<id>] table of the config (claude is taken for claude_code).',
  options: [...BUILTIN_PROVIDERS, 'claude'],
  // As policy-check takes it: people say claude for Claude Code.
  parse: async (value) => (value === 'claude' ? 'claude_code' : value),
});

export const quotaPressureFlag = Flags.string({
  summary: 'Scale the trigger: low compacts later (×1.15), high earlier (×0.7).',
  options: ['low', 'normal', 'high'],
});
