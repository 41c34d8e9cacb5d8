import { Args, Flags } from '@oclif/core';
import type { ExplainCommandResult, ExplainWarning } from '../../../schemas/generated/types.js';
import { usageError } from '../../errors.js';
import { wrapText } from '../../text/wrap.js';
import { BaseCommand } from '../base-command.js';
import { configFlag, presetFlag, providerFlag, quotaPressureFlag } from '../../config/cli-flags.js';
import { resolveForCommand } from '../../config/resolve-for-command.js';
import { unappliedSessionWarning } from '../../config/resolve-config.js';
import { toResolvedPolicy } from '../../policy/effective-policy.js';
import { DEFAULT_EXPLAIN_WINDOW_TOKENS, explain } from '../../policy/explain.js';
import { MAX_CONTEXT_TOKENS } from '../../policy/bounds.js';
import { isQuotaPressure } from '../../policy/quota.js';
import { transcriptSample } from '../../policy/adaptive.js';
import { contextTokens } from '../../policy/context.js';
import { effectivePolicy } from '../../policy/effective-policy.js';
import { BUILTIN_PROVIDERS, type BuiltinProvider } from '../../policy/provider-controls.js';
import { PluginRegistry } from '../../plugins/registry/registry.js';
import { parseSession, recentYields } from '../../services/plan.js';
import { requirePolicyIds } from '../../services/policy-ids.js';
import { requireResolvedPolicy } from '../../services/policy-params.js';
import { checkStrategyParamsEarly } from '../../services/strategy-params-check.js';
import { withRuntime } from '../../services/runtime.js';
import { homeFlags, providerHomes } from '../session-flags.js';

/** Under this, a window leaves no trigger below its native one worth advising. */
const MIN_WINDOW_TOKENS = 1_000;

export default class Explain extends BaseCommand<ExplainCommandResult> {
  static override summary = 'Explain the occupancy math: trigger, floor, what counts as context, what a cycle costs.';
  static override description =
    'Uses your configured policy (with --provider and --preset applied). Give --context-tokens to see what would happen to a session of that size, ' +
    "or a session to use its own context, model window and policy (its provider's and session's config tables, and adaptive tuning, as plan applies them; --provider, if given, must be the session's). " +
    'The comparison with native auto-compaction assumes it fires at 90% of the window (--window, else the session\'s, else 1,000,000) and lands near 60,000 tokens.';
  static override examples = [
    '<%= config.bin %> explain',
    '<%= config.bin %> explain --provider codex --context-tokens 300000',
    '<%= config.bin %> explain --provider claude_code --window 200000 --json',
    '<%= config.bin %> explain 7d3f',
  ];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path (optional).', required: false }) };
  static override flags = {
    provider: providerFlag,
    'context-tokens': Flags.integer({ summary: 'A context size to assess against the policy.', min: 0, max: MAX_CONTEXT_TOKENS, helpValue: '<tokens>' }),
    window: Flags.integer({ summary: "Model context window for the native comparison (default: the session's, else 1,000,000).", min: MIN_WINDOW_TOKENS, max: MAX_CONTEXT_TOKENS, helpValue: '<tokens>' }),
    'quota-pressure': quotaPressureFlag,
    preset: presetFlag,
    config: configFlag,
    ...homeFlags,
  };

  async run(): Promise<ExplainCommandResult> {
    const { args, flags } = await this.parse(Explain);
    const pressure = flags['quota-pressure'];
    const quota = { quota_pressure: isQuotaPressure(pressure) ? pressure : undefined };
    if (args.session !== undefined) {
      if (flags['context-tokens'] !== undefined) this.error('give a session or --context-tokens, not both: a session brings its own context', { exit: 2 });
      // On stderr as they come (the lines are the explanation itself), and by code in --json.
      const sessionWarnings: ExplainWarning[] = [];
      const warn = (code: ExplainWarning['code'], message: string) => {
        sessionWarnings.push({ code, message });
        this.warning(message);
      };
      const result = await withRuntime({ homes: providerHomes(flags) }, async (rt) => {
        const parsed = await parseSession(rt, args.session!);
        // As config does: a provider flag that contradicts the session is a mistake, not a preference.
        if (flags.provider !== undefined && flags.provider !== parsed.session.provider) {
          throw usageError('provider_mismatch', `${parsed.session.session_id} is a ${parsed.session.provider} session; --provider ${flags.provider} contradicts it`);
        }
        const { resolved } = await resolveForCommand({
          configPath: flags.config,
          provider: parsed.session.provider,
          session_id: parsed.session.session_id,
          preset: flags.preset,
          flags: quota,
          env: rt.env,
        });
        await requireResolvedPolicy(rt, resolved);
        // As plan says it: the policy explained below ignores that table.
        const unapplied = unappliedSessionWarning(resolved);
        if (unapplied !== null) warn('session_table_unapplied', unapplied);
        const context = contextTokens(parsed.transcript);
        const window = parsed.transcript.usage.model_context_window ?? null;
        const policy = effectivePolicy(resolved.values, transcriptSample(parsed.transcript, context, await recentYields(rt, parsed.session, (message) => warn('events_log_unreadable', message))));
        const provider = (BUILTIN_PROVIDERS as readonly string[]).includes(parsed.session.provider) ? (parsed.session.provider as BuiltinProvider) : null;
        return explain({
          provider,
          policy,
          context_tokens: context,
          window_tokens: flags.window ?? window ?? DEFAULT_EXPLAIN_WINDOW_TOKENS,
          session: { provider: parsed.session.provider, session_id: parsed.session.session_id, path: parsed.session.path, model_context_window: window },
          proposer: resolved.external,
        });
      });
      for (const line of result.lines) for (const wrapped of wrapText(line, this.tableWidth())) this.say(wrapped);
      return { ...result, warnings: [...result.warnings, ...sessionWarnings] };
    }
    const { resolved } = await resolveForCommand({ configPath: flags.config, provider: flags.provider, preset: flags.preset, flags: quota });
    // As plan would: a policy naming a strategy or scorer nobody serves can never plan.
    requirePolicyIds(new PluginRegistry({ env: process.env }), resolved);
    await checkStrategyParamsEarly(resolved);
    const result = explain({
      provider: (flags.provider as BuiltinProvider | undefined) ?? null,
      policy: toResolvedPolicy(resolved.values),
      context_tokens: flags['context-tokens'] ?? null,
      // Left unset without --window: explain then says the window is its assumption.
      window_tokens: flags.window,
      proposer: resolved.external,
    });
    for (const line of result.lines) for (const wrapped of wrapText(line, this.tableWidth())) this.say(wrapped);
    return result;
  }
}
