import { Args } from '@oclif/core';
import type { PlanCommandNoPlan, PlanCommandPlan } from '../../../schemas/generated/types.js';
import { planForSelector } from '../../services/plan.js';
import { withRuntime } from '../../services/runtime.js';
import { BaseCommand } from '../base-command.js';
import { policyFlags } from '../plan-flags.js';
import { noPlanLine, planLines } from '../render/plan-lines.js';
import { neverFiresNote } from '../../policy/explain.js';
import { formatCount } from '../../text/human.js';
import { rewritesFile } from '../../eval/plan-metrics.js';
import { endsWithFinishedLine } from '../../services/publication.js';
import { homeFlags, providerHomes } from '../session-flags.js';

type PlanResult = PlanCommandPlan | PlanCommandNoPlan;

export default class Plan extends BaseCommand<PlanResult> {
  static override summary = 'Preview a compaction: what would be elided or summarised, and how many tokens it saves.';
  static override description = `Parses the session through its provider, resolves the policy (config layers, preset, flags, adaptive tuning) and asks the strategy for a plan, which the kernel validates (no growth, the protected recent tool outputs untouched, bounds). Nothing is written. On a terminal a status line shows while it works.

When there is nothing to do the answer is a "no plan" with one of five reasons: below_trigger, strategy_returned_no_plan, empty_external_edits, minimum_savings_not_met, external_nonreducing_plan. That is a successful result (exit 0); an invalid config or an invalid proposal is an error (exit 1).`;
  static override examples = [
    '<%= config.bin %> plan 7d3f',
    '<%= config.bin %> plan 7d3f --trigger 100000 --floor 30000',
    '<%= config.bin %> plan 7d3f --strategy compacted --json',
  ];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = { ...policyFlags, ...homeFlags };

  async run(): Promise<PlanResult> {
    const { args, flags } = await this.parse(Plan);
    const status = this.statusLine();
    status.show('plan: reading and planning the session…');
    const planned = await withRuntime({ homes: providerHomes(flags), refuseLateBreaches: true }, (rt) =>
      planForSelector(rt, args.session, { strategy: flags.strategy, preset: flags.preset, trigger: flags.trigger, floor: flags.floor, configPath: flags.config }),
    ).finally(() => status.clear());
    const { outcome, session } = planned;
    if (!this.jsonEnabled()) {
      this.say(`${session.provider} ${session.session_id} (${planned.active ? 'live' : 'idle'})`);
      if (outcome.status === 'plan') for (const line of planLines(outcome, session.provider)) this.sayProse(line);
      else this.sayProse(noPlanLine(outcome));
      // A trigger past where the client compacts by itself is never reached: say so where it bites.
      const never = outcome.status === 'no_plan' ? neverFiresNote(outcome, planned.transcript.usage.model_context_window, session.session_id) : null;
      if (never !== null) this.sayProse(`note: ${never}`);
      // Told by the parse (no second read of the receipts): how this compaction's stale report was replaced.
      if (planned.staleReport) {
        const counted =
          planned.staleReport === 'estimated'
            ? "so the records' own estimate is counted instead"
            : `so its plan's projection (~${formatCount(planned.transcript.usage.context_tokens)} tokens) is counted instead`;
        this.sayProse(`note: gobstopper published this compaction and nobody has resumed it yet: its last usage report predates it, ${counted}`);
      }
      // The client would glue its next record onto a torn final line (a write in progress), so apply
      // publishes no rewrite of such a session until that line is finished.
      // A last line without its newline is refused even when it parses: the provider only reports
      // one that does not.
      const torn = (planned.transcript.findings ?? []).some((f) => f.code === 'torn_final_line') || !(await endsWithFinishedLine(planned.session.path).catch(() => true));
      if (outcome.status === 'plan' && torn && rewritesFile(outcome.plan)) {
        this.note('warning: the session ends with a torn record (a write in progress?); apply refuses it until the client finishes that line');
      }
    }
    // On stderr with --json too, as before they had a place in the JSON.
    for (const w of planned.warnings) this.warning(w);
    const warnings = planned.warnings.length > 0 ? { warnings: planned.warnings } : {};
    if (outcome.status === 'plan') return { ...outcome, session, active: planned.active, ...warnings };
    return { ...outcome, ...warnings };
  }
}
