import { Args, Flags } from '@oclif/core';
import type { EvalCommandResult } from '../../../schemas/generated/types.js';
import { renderEvalTable } from '../../eval/eval-table.js';
import { ProgressBar } from '../render/progress-bar.js';
import { evaluateSelector } from '../../services/eval.js';
import { withRuntime } from '../../services/runtime.js';
import { BaseCommand } from '../base-command.js';
import { policyFlags } from '../plan-flags.js';
import { homeFlags, providerHomes } from '../session-flags.js';
import { rehearseBinFlags } from '../rehearse-flags.js';

// --strategy here picks which strategies to measure (repeatable), not the policy's strategy.
const sharedPolicyFlags = { preset: policyFlags.preset, trigger: policyFlags.trigger, floor: policyFlags.floor, config: policyFlags.config };

export default class Eval extends BaseCommand<EvalCommandResult> {
  static override summary = 'Compare every strategy on one session, on private copies: savings, what each keeps, and whether the copy verifies.';
  static override description = `Reads the session once and freezes its bytes: every strategy plans against the same private copy with the same policy (config layers, preset, flags). Each rewrite is rendered by the provider into a private staging file, verified, scored and thrown away; the session, the vault and the events log are never written.

Per strategy: the plan or the no-plan reason (and under the table what a strategy that proposed nothing said of why, in no_plan_rationale with --json), context before and after and the reduction, how many of up to 64 sampled probes (paths, commands, decisions, error signatures, file names, identifiers) the rewrite still holds verbatim (probes kept), whether the protected recent tail is intact (a warning, in warnings with --json, when no probe was sampled in it and the check is vacuous), the cached prefix kept, verify findings on the rendered copy (new ones apart from those the source already had), the time its own steps took (strategies run side by side, so the times do not add up to the wall time), and the retention an applied compaction would record in the events log (checks kept, the number events reports as retention). The best row (*) maximises tokens reclaimed x (prefix kept / context)^3 among clean file rewrites that keep the protected tail. The scored strategy uses the configured scorer; a strategy a plugin pinned by the configuration serves (plugin = {...}) gets a row beside the others, while a configured legacy command is not run (a warning says so). A strategy that fails costs only its own row: --json gives its message in error and its code (plugin_timeout, plugin_schema_violation, file_hash_mismatch, ...) in error_code. When every strategy failed, the rows are still printed and the exit status is 1.

A progress bar counts the strategies done on a terminal; piped runs and --json stay quiet.

With --rehearse the real client (claude or codex) also resumes each rewritten copy offline against a local stub, and the context it rebuilt is shown next to the projected one; without the client installed the eval says so once and goes on.`;
  static override examples = [
    '<%= config.bin %> eval 7d3f',
    '<%= config.bin %> eval 7d3f --trigger 50000 --floor 10000',
    '<%= config.bin %> eval 7d3f --strategy elide --strategy scored --json',
    '<%= config.bin %> eval 7d3f --rehearse',
  ];
  // oclif's generated line groups --claude-bin and --codex-bin oddly; both need --rehearse.
  static override usage = [
    '<%= command.id %> SESSION [--strategy <id>...] [--preset <name>] [--trigger <tokens>] [--floor <tokens>] [--config <path>] [--rehearse [--claude-bin <path>] [--codex-bin <path>]] [--claude-home <path>] [--codex-home <path>] [--provider-home <id>=<path>...] [--json]',
  ];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = {
    strategy: Flags.string({ summary: 'Measure only this strategy; repeatable (default: every strategy the plugins provide).', helpValue: '<id>', multiple: true, multipleNonGreedy: true, helpGroup: 'POLICY' }),
    ...sharedPolicyFlags,
    rehearse: Flags.boolean({ summary: 'Also resume each rewritten copy with the real client, offline, and show the context it rebuilt.' }),
    ...rehearseBinFlags,
    ...homeFlags,
  };

  async run(): Promise<EvalCommandResult> {
    const { args, flags } = await this.parse(Eval);
    const bar = new ProgressBar(this.progressStream(), 'strategies');
    const { result } = await withRuntime({ homes: providerHomes(flags) }, (rt) =>
      evaluateSelector(rt, args.session, {
        strategies: flags.strategy,
        preset: flags.preset,
        trigger: flags.trigger,
        floor: flags.floor,
        configPath: flags.config,
        rehearse: flags.rehearse,
        clientBins: { claude_code: flags['claude-bin'], codex: flags['codex-bin'] },
        onProgress: (p) => bar.update(p),
      }),
    ).finally(() => bar.finish());
    if (!this.jsonEnabled()) {
      if (result.rehearsal_note) this.noteProse(`note: ${result.rehearsal_note}`);
      for (const line of renderEvalTable(result, { width: this.tableWidth() })) this.say(line);
      if (result.rows.some((r) => r.event_record?.retention_total != null)) {
        this.sayProse('checks kept: heuristic checks of the source still in place / sampled (lexical tier), as apply would record them in the events log');
      }
      // After the table they qualify; --json carries them in warnings.
      for (const w of result.warnings) this.noteProse(`warning: ${w}`);
    }
    // As bench does: the rows are the report either way, and the status tells a script that not one
    // strategy could be run. One that fails beside others costs only its row.
    if (result.rows.length > 0 && result.rows.every((r) => r.execution_state === 'failed')) process.exitCode = 1;
    return result;
  }
}
