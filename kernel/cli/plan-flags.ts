/** Flags shared by the commands that plan (plan, apply, eval, tune). */
import { Flags } from '@oclif/core';

export const policyFlags = {
  strategy: Flags.string({ summary: 'Strategy id to use (overrides the configured one; see gobstopper plugin list).', helpValue: '<id>', helpGroup: 'POLICY' }),
  preset: Flags.string({ summary: 'Apply the [presets.<name>] table of the config.', helpValue: '<name>', helpGroup: 'POLICY' }),
  // Adaptive tuning leaves a flag's number as it is (docs/design.md, Configuration), and says so here.
  trigger: Flags.integer({ summary: 'Compact when the context reaches this many tokens (this run only; adaptive tuning keeps it).', min: 1, max: 10_000_000, helpGroup: 'POLICY', helpValue: '<tokens>' }),
  floor: Flags.integer({ summary: 'Target context after compaction, in tokens (this run only; adaptive tuning keeps it).', min: 0, max: 10_000_000, helpGroup: 'POLICY', helpValue: '<tokens>' }),
  config: Flags.string({ summary: 'Config file to use instead of $XDG_CONFIG_HOME/gobstopper/config.toml.', helpValue: '<path>', helpGroup: 'POLICY' }),
};
