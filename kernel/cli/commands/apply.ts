import { Args, Flags } from '@oclif/core';
import { GobstopperError } from '../../errors.js';
import { applySession, type ApplyResult, type ApplyStep } from '../../services/apply.js';
import { withRuntime } from '../../services/runtime.js';
import { printableText } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { resumeLines } from '../render/resume-lines.js';
import { policyFlags } from '../plan-flags.js';
import { noPlanLine, planLines } from '../render/plan-lines.js';
import { homeFlags, providerHomes } from '../session-flags.js';
import { rehearseBinFlags } from '../rehearse-flags.js';

export default class Apply extends BaseCommand<ApplyResult> {
  static override summary = 'Compact a session into a new, verified fork; the source is never changed.';
  static override description = `The whole job in one step: parse the session, plan with the configured strategy, validate the plan, snapshot the exact source bytes into the vault, render the compacted copy into private staging, verify it (no new findings, smaller than the source), write a receipt, publish the fork under a new session id without overwriting anything, record an event, and print the command that resumes the fork.

On a terminal a status line says which step is running; piped runs and --json stay quiet.

Running the same apply again returns the same fork. If a run was interrupted, the next run finishes it from the receipt or says exactly what to repair. A session updated within the last 180 s is refused unless --allow-live is given; then a file strategy (--strategy elide, compacted, …) prepares a fork of it, and auto, the default strategy, hands a live Codex session to the client's own compaction (it prints the control to run, and writes no file).

A cache-edit plan (cache_edits, which auto picks for a live Claude Code session with tool results) is refused with cache_edit_unsupported and nothing is written: those edits act at Claude Code's API layer, and nothing hands them over. plan still shows it.`;
  static override examples = ['<%= config.bin %> apply 7d3f', '<%= config.bin %> apply 7d3f --strategy compacted --trigger 80000 --json'];
  // oclif's generated line groups --claude-bin and --codex-bin oddly; both need --rehearse.
  static override usage = [
    '<%= command.id %> SESSION [--strategy <id>] [--preset <name>] [--trigger <tokens>] [--floor <tokens>] [--config <path>] [--allow-live] [--rehearse [--claude-bin <path>] [--codex-bin <path>]] [--claude-home <path>] [--codex-home <path>] [--provider-home <id>=<path>...] [--json]',
  ];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = {
    ...policyFlags,
    'allow-live': Flags.boolean({ summary: 'Go on even if the session was updated within the last 180 s (a file strategy then prepares a fork; auto names a live Codex session\'s own compaction, and its cache-edit plan for a live Claude Code session is refused).' }),
    rehearse: Flags.boolean({ summary: 'Publish only if the real client resumes the candidate and rebuilds the expected context (needs claude or codex installed).' }),
    ...rehearseBinFlags,
    ...homeFlags,
  };

  async run(): Promise<ApplyResult> {
    const { args, flags } = await this.parse(Apply);
    const status = this.statusLine();
    const result = await withRuntime({ homes: providerHomes(flags) }, async (rt) => {
      const rehearsal = flags.rehearse ? (await loadRehearsal()).rehearsalHooks(rt, { claude_code: flags['claude-bin'], codex: flags['codex-bin'] }) : {};
      return applySession(rt, args.session, {
        strategy: flags.strategy,
        preset: flags.preset,
        trigger: flags.trigger,
        floor: flags.floor,
        configPath: flags.config,
        allowLive: flags['allow-live'],
        ...rehearsal,
        onStep: (step) => status.show(`apply: ${STEP_TEXT[step]}…`),
      });
    }).finally(() => status.clear());
    if (!this.jsonEnabled()) this.print(result);
    // As plan says them, with --json too: when nothing was written they are the likeliest why.
    if (result.status !== 'applied') for (const w of result.warnings) this.warning(w);
    return result;
  }

  private print(result: ApplyResult): void {
    this.say(`${result.session.provider} ${result.session.session_id}`);
    if (result.status === 'no_plan') return this.sayProse(noPlanLine(result.outcome));
    for (const line of planLines(result.plan, result.session.provider)) this.sayProse(line);
    if (result.status === 'provider_control') return this.sayProse(result.message);
    const r = result.receipt;
    this.say(
      result.interrupted
        ? `finished an earlier apply that stopped before publishing: ${printableText(r.path)}`
        : result.restored
          ? `already applied; the fork had been removed and is published again: ${printableText(r.path)}`
          : result.resumed
            ? `already applied; the fork has been resumed since: ${printableText(r.path)}`
            : result.reused
              ? `already applied${r.strategy !== result.plan.plan.strategy ? ` by ${r.strategy}, whose edits were the same` : ''}: ${printableText(r.path)}`
              : `published ${printableText(r.path)}`,
    );
    this.say(`recovery snapshot: ${r.snapshot_manifest_sha256}${result.snapshot_unreadable ? ' (cannot be read now; see the warning below)' : ''}`);
    if (result.rehearsal) this.say(`rehearsed before publishing: ${result.rehearsal.reason}`);
    this.say(`reclaimed ${r.reclaimed_bytes.toLocaleString('en-US')} bytes (${r.bytes_before.toLocaleString('en-US')} → ${r.bytes_after.toLocaleString('en-US')})`);
    this.sayResume(resumeLines('resume the new session', r));
    for (const w of result.warnings) this.note(`warning: ${w}`);
  }
}

const STEP_TEXT: Record<ApplyStep, string> = {
  planning: 'reading and planning the session',
  rendering: 'archiving the source and rendering the fork',
  verifying: 'verifying the fork',
  publishing: 'publishing the fork',
};

type RehearsalService = Pick<typeof import('../../services/rehearse-candidate.js'), 'rehearsalHooks'>;

/** The rehearsal service is loaded only when asked for: it is the one part that runs real clients. */
async function loadRehearsal(): Promise<RehearsalService> {
  try {
    return await import('../../services/rehearse-candidate.js');
  } catch (error) {
    if (error instanceof GobstopperError) throw error;
    throw new GobstopperError('rehearsal_unavailable', 'resume rehearsal is not available in this build');
  }
}
