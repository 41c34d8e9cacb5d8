import { Args } from '@oclif/core';
import type { TuneCommandResult } from '../../../schemas/generated/types.js';
import { contextTokens, elidableTokens } from '../../policy/context.js';
import { pinnedByFlags } from '../../policy/effective-policy.js';
import { tune } from '../../policy/tune.js';
import { unappliedSessionWarning } from '../../config/resolve-config.js';
import { parseSession, recentYields, resolveSessionConfig } from '../../services/plan.js';
import { requireResolvedPolicy } from '../../services/policy-params.js';
import { withRuntime } from '../../services/runtime.js';
import { BaseCommand } from '../base-command.js';
import { policyFlags } from '../plan-flags.js';
import { homeFlags, providerHomes } from '../session-flags.js';

/** The configured and adaptive numbers start in one column, so the two lines read side by side. */
const LABEL_WIDTH = 'configured '.length;

export default class Tune extends BaseCommand<TuneCommandResult> {
  static override summary = "Preview the adaptive trigger and floor for a session, and why.";
  static override description = `Adaptive mode derives a session's trigger and floor from its model window (the trigger capped at 25% of it), from how much past compactions of this session reclaimed (low yields then raise the trigger ×1.5, up to twice the configured one, which can lift it past that cap), and from how much of the context is elidable (over half: compact sooner). tune shows the result for one session with the reasons, and a TOML snippet to pin it; with adaptive on, the snippet also sets adaptive = false in that session's table, since tuning would otherwise move the pasted numbers again. A --trigger or --floor is kept as given, as plan keeps it. It writes nothing.`;
  static override examples = ['<%= config.bin %> tune 7d3f', '<%= config.bin %> tune 7d3f --json'];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  // The adaptive numbers do not depend on the strategy: a --strategy here would be taken and ignored.
  static override flags = { preset: policyFlags.preset, trigger: policyFlags.trigger, floor: policyFlags.floor, config: policyFlags.config, ...homeFlags };

  async run(): Promise<TuneCommandResult> {
    const { args, flags } = await this.parse(Tune);
    // Said on stderr as they come, and carried in --json: recent_applied alone would read 0 as none.
    const warnings: string[] = [];
    const warn = (line: string) => {
      warnings.push(line);
      this.warning(line);
    };
    const tuned = await withRuntime({ homes: providerHomes(flags) }, async (rt) => {
      const parsed = await parseSession(rt, args.session);
      const config = await resolveSessionConfig(rt, parsed.session, { preset: flags.preset, trigger: flags.trigger, floor: flags.floor, configPath: flags.config });
      await requireResolvedPolicy(rt, config);
      // As plan says it: the numbers below ignore that table, and the snippet is keyed by the full id.
      const unapplied = unappliedSessionWarning(config);
      if (unapplied !== null) warn(unapplied);
      return tune({
        provider: parsed.session.provider,
        session_id: parsed.session.session_id,
        context_tokens: contextTokens(parsed.transcript),
        elidable_tokens: elidableTokens(parsed.transcript.items),
        model_context_window: parsed.transcript.usage.model_context_window ?? null,
        recent: await recentYields(rt, parsed.session, warn),
        policy: config.values,
        pinned: pinnedByFlags(config.sources),
        adaptive_off_by_session: !config.values.adaptive && config.sources.adaptive?.layer === 'session',
        session_table_paths: config.session_table_paths,
      });
    });
    const result: TuneCommandResult = warnings.length > 0 ? { ...tuned, warnings } : tuned;
    this.sayProse(`${result.provider} ${result.session_id}: context ${result.context_tokens.toLocaleString('en-US')} tokens`);
    this.say(`${'configured'.padEnd(LABEL_WIDTH)}trigger ${result.configured.trigger_tokens.toLocaleString('en-US')}, floor ${result.configured.floor_tokens.toLocaleString('en-US')}`);
    // Off, the adjusted numbers are a preview: said on the line itself, so they never read as what plans use.
    const off = result.adaptive_enabled ? '' : '; adaptive is off, so plans use the configured values';
    this.sayProse(
      `${'adaptive'.padEnd(LABEL_WIDTH)}trigger ${result.adjusted.trigger_tokens.toLocaleString('en-US')}, floor ${result.adjusted.floor_tokens.toLocaleString('en-US')} (effective trigger ${result.effective_trigger_tokens.toLocaleString('en-US')}${off})`,
      ' '.repeat(LABEL_WIDTH),
    );
    for (const line of result.explanation) this.sayProse(`  - ${line}`);
    if (result.suggested_toml) {
      this.say('to pin it:');
      this.say(result.suggested_toml);
    }
    return result;
  }
}
