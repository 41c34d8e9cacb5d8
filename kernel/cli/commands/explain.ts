import { Flags } from '@oclif/core';
import type { ExplainCommandResult } from '../../../schemas/generated/types.js';
import { BaseCommand } from '../base-command.js';
import { configFlag, presetFlag, providerFlag, quotaPressureFlag } from '../../config/cli-flags.js';
import { resolveForCommand } from '../../config/resolve-for-command.js';
import { toResolvedPolicy } from '../../policy/effective-policy.js';
import { DEFAULT_EXPLAIN_WINDOW_TOKENS, explain } from '../../policy/explain.js';
import type { BuiltinProvider } from '../../policy/provider-controls.js';
import { MAX_CONTEXT_TOKENS } from '../../policy/bounds.js';
import { isQuotaPressure } from '../../policy/quota.js';

export default class Explain extends BaseCommand<ExplainCommandResult> {
  static override summary = 'Explain the occupancy math: trigger, floor, what counts as context, what a cycle costs.';
  static override description =
    'Uses your configured policy (with --provider and --preset applied). Give --context-tokens to see what would happen to a session of that size. ' +
    'The comparison with native auto-compaction assumes it fires at 90% of --window and lands near 60,000 tokens.';
  static override examples = [
    '<%= config.bin %> explain',
    '<%= config.bin %> explain --provider codex --context-tokens 300000',
    '<%= config.bin %> explain --provider claude_code --window 200000 --json',
  ];
  static override flags = {
    provider: providerFlag,
    'context-tokens': Flags.integer({ summary: 'A context size to assess against the policy.', min: 0, max: MAX_CONTEXT_TOKENS, helpValue: '<tokens>' }),
    window: Flags.integer({ summary: 'Model context window for the native comparison.', min: 1, default: DEFAULT_EXPLAIN_WINDOW_TOKENS, helpValue: '<tokens>' }),
    'quota-pressure': quotaPressureFlag,
    preset: presetFlag,
    config: configFlag,
  };

  async run(): Promise<ExplainCommandResult> {
    const { flags } = await this.parse(Explain);
    const pressure = flags['quota-pressure'];
    const { resolved } = await resolveForCommand({
      configPath: flags.config,
      provider: flags.provider,
      preset: flags.preset,
      flags: { quota_pressure: isQuotaPressure(pressure) ? pressure : undefined },
    });
    const result = explain({
      provider: (flags.provider as BuiltinProvider | undefined) ?? null,
      policy: toResolvedPolicy(resolved.values),
      context_tokens: flags['context-tokens'] ?? null,
      window_tokens: flags.window,
    });
    for (const line of result.lines) this.say(line);
    return result;
  }
}
