import { Flags } from '@oclif/core';
import { providerFilterFlag } from '../../config/cli-flags.js';
import type { WatchDecision, WatchPass } from '../../../schemas/generated/types.js';
import { checkWatchSetup, openWatchState, watchPass, type WatchOptions } from '../../services/watch.js';
import { FailuresSaid } from '../../watch/failures-said.js';
import { WatchLocks } from '../../watch/watch-locks.js';
import { controlWords, nativeControlOf } from '../../policy/provider-controls.js';
import { formatCount, printableText } from '../../text/human.js';
import { terminalSafeJson } from '../../text/json-output.js';
import { GobstopperError } from '../../errors.js';
import { forgetCompletedForStop } from '../../exit-cleanup.js';
import { BaseCommand, toEnvelope } from '../base-command.js';
import { policyFlags } from '../plan-flags.js';
import { stillOverTriggerNote } from '../render/plan-lines.js';
import { resumeLines } from '../render/resume-lines.js';
import { homeFlags, providerHomes } from '../session-flags.js';
import { rehearseBinFlags } from '../rehearse-flags.js';

/** Longest pause between passes a person could mean: one day. */
const MAX_INTERVAL_SECS = 86_400;

export default class Watch extends BaseCommand<WatchPass | undefined> {
  static override summary = 'Follow your sessions and compact each one that crosses its trigger, once it is idle.';
  static override description = `Every --interval seconds, lists the sessions (as detect does) and runs apply on each idle one whose context has reached the trigger its session, provider or preset tables set: a vault snapshot, then a verified fork under a new id; the source is never changed. The config is read again on every pass.

Passed over without reading the transcript: live sessions (updated within 180 s; a live one over its trigger is named once, with the control its client compacts with, and so is one its client takes up while the watch decides on it), sessions unchanged since the watch last decided on them under the same policy and plugin bundles (within a day; since it compacted them, under any policy and however long ago), sessions compacted less than min_interval_secs ago (by this watch, another, or apply: the events log says when), forks and restores gobstopper published that no client has resumed, and sessions whose reported context is under the trigger (unless adaptive is on, which needs the transcript). Sessions are taken smallest first. What was decided is kept in gobstopper's data directory, in watch-state-all.json (watch-state-codex.json for --provider codex, and so on); a state that cannot be saved there (a read-only data directory, a full disk) is a warning, and the pass's work still stands and is reported.

One watch of each provider runs at a time: a watch that would cover a provider another watch is following (watch beside watch --provider codex, or watch --once from cron beside a running watch) exits 1 (watch_running), naming that provider's lock (locks/watch-<provider>.lock in the data directory) and the process that holds it. A lock left behind by a watch that was killed is taken over. --dry-run takes no lock.

A [sessions."<prefix>"] table keyed by a prefix of a session id never applies: the watch warns of each such table once, in the first pass that finds it, not on every pass (again if the table is fixed and then broken anew, and when the watch restarts). A trigger at or above where a session's client compacts by itself (90% of its model window; the default 250,000 is past it for Claude Code and Codex) never fires: the watch says so once for each provider, trigger and window, unless adaptive is on.

A session that cannot be compacted is reported as failed (so is one, under its trigger too, whose policy plan would refuse: a config table naming a strategy or scorer nothing serves, or strategy_params its strategy's schema refuses) and tried again once its file or its policy changes, or a plugin bundle is added, upgraded or removed (at once, when the failure only meant "not now", such as a config file saved half edited while the pass ran, or lay with the vault or the disk, such as a full disk or a file where a vault directory belongs, once mended); it does not stop the watch, and --once still exits 0. A pass that cannot run at all (a config file that does not load) stops the watch on the first pass; later, it is reported and the next pass tries again. Without --json, a failure that comes back pass after pass (a session's, a whole pass's) is printed once while it lasts and again once it changes, and the pass that runs again after failed ones prints its line; --json reports every pass in full.

--rehearse publishes each fork only once the real client (claude or codex, offline against a local stub) has resumed it and rebuilt the context the plan predicts; a fork it refuses is that session's failure. --dry-run plans instead of applying and writes nothing at all. --once runs one pass and exits. With --json each pass is one JSON object on its own line (with --once, the one object, as every command prints it); a pass that fails after the first is a line holding the error object every command prints when it fails ({"ok":false,"error":...}, its details naming the pass), and so is a stop, last. Stop a watch with Ctrl-C: stopped in the middle of a pass, it names the forks that pass had already published, with their resume commands. It also stops (exit 1) once whatever reads its output has gone.`;
  static override examples = [
    '<%= config.bin %> watch --dry-run --once',
    '<%= config.bin %> watch --interval 60 --provider codex',
    '<%= config.bin %> watch --once --json',
    '<%= config.bin %> watch --rehearse --provider claude',
  ];
  // oclif's generated line reads as if --claude-bin went with --dry-run; it needs --rehearse, which --dry-run excludes.
  static override usage = [
    '<%= command.id %> [--interval <secs>] [--once] [--dry-run | --rehearse [--claude-bin <path>] [--codex-bin <path>]] [--provider <id>...] [--max-age <secs> | --all] [--strategy <id>] [--preset <name>] [--config <path>] [--claude-home <path>] [--codex-home <path>] [--provider-home <id>=<path>...] [--json]',
  ];
  static override flags = {
    interval: Flags.integer({ summary: 'Seconds between the start of one pass and the next.', default: 30, min: 1, max: MAX_INTERVAL_SECS, helpValue: '<secs>' }),
    once: Flags.boolean({ summary: 'Run one pass, then exit.' }),
    'dry-run': Flags.boolean({ summary: 'Plan and report what would be compacted; write nothing (no fork, vault, event or watch state).' }),
    rehearse: Flags.boolean({ summary: 'Publish a fork only once the real client resumes it offline and rebuilds the expected context, as apply --rehearse (needs the client of each watched provider).', exclusive: ['dry-run'] }),
    ...rehearseBinFlags,
    provider: providerFilterFlag,
    'max-age': Flags.integer({ summary: 'Only sessions updated within this many seconds (default [discovery] max_age_secs, 7 days).', min: 1, max: Number.MAX_SAFE_INTEGER, exclusive: ['all'], helpValue: '<secs>' }),
    all: Flags.boolean({ summary: 'Sessions of any age.', exclusive: ['max-age'] }),
    // As plan takes them; a trigger is the config's to set, per session, provider or preset.
    strategy: policyFlags.strategy,
    preset: policyFlags.preset,
    config: policyFlags.config,
    ...homeFlags,
  };

  /** What the terminal was told of failures that come back pass after pass. */
  private readonly failuresSaid = new FailuresSaid();

  async run(): Promise<WatchPass | undefined> {
    const { flags } = await this.parse(Watch);
    const providers = flags.provider ? [...new Set(flags.provider)] : undefined;
    const status = this.statusLine();
    const options: WatchOptions = {
      env: process.env,
      homes: providerHomes(flags),
      providers,
      strategy: flags.strategy,
      preset: flags.preset,
      configPath: flags.config,
      maxAgeSecs: flags.all ? null : flags['max-age'],
      dryRun: flags['dry-run'] === true,
      rehearse: flags.rehearse ? { claude_code: flags['claude-bin'], codex: flags['codex-bin'] } : undefined,
      onSession: (row, index, of) => status.show(`watch: session ${index + 1} of ${of} (${row.provider} ${row.session_id.slice(0, 8)})…`),
    };
    const covered = await checkWatchSetup(options);
    // A dry run writes nothing, so it neither needs nor takes the providers' locks; a watch takes
    // the lock of every provider it covers, and one another watch holds refuses it (watch_running).
    options.locks = options.dryRun ? undefined : await WatchLocks.take(process.env, covered);
    // oclif swallows EPIPE on stdout, which suits a command that answers once; a watch whose reader
    // has gone (`watch --json | head -1`) would go on compacting, its lock held, and tell no one.
    let outputClosed = false;
    const onOutputError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') outputClosed = true;
    };
    process.stdout.on('error', onOutputError);
    try {
      const state = await openWatchState(process.env, providers);
      // A quiet pass prints nothing, so a person is told once that the watch runs and how to stop it.
      if (!flags.once) this.noteProse(`watching ${providers ? providers.join(', ') : 'every provider'}'s sessions every ${flags.interval} s${options.dryRun ? ' (dry run)' : ''}; passes that decide nothing print nothing; Ctrl-C stops`);
      for (let pass = 1; ; pass++) {
        if (outputClosed) throw new GobstopperError('output_closed', `the watch's output was closed (whatever read it has gone); it stops before pass ${pass}`);
        const started = Date.now();
        let result: WatchPass;
        try {
          result = await watchPass(options, state, pass).finally(() => status.clear());
        } catch (error) {
          // The first pass shows whether the setup works at all; later, a broken pass (a config
          // edit half saved, a vault being repaired) is reported and the watch goes on.
          if (pass === 1 || flags.once || !(error instanceof GobstopperError) || error.exit === 2) throw error;
          this.passFailed(pass, error, flags.interval);
          await sleep(Math.max(0, flags.interval * 1000 - (Date.now() - started)));
          continue;
        }
        if (flags.once) {
          if (!this.jsonEnabled()) this.print(result, true);
          return result;
        }
        if (this.jsonEnabled()) process.stdout.write(terminalSafeJson(result) + '\n');
        // The pass that ends a spell of failed passes says so, quiet or not.
        else this.print(result, pass === 1 || this.failuresSaid.passRan());
        // The pass named its forks: an interrupt from here on has none to add. (A pass that failed
        // named none, so its forks stay in the note until a pass is reported.)
        forgetCompletedForStop();
        await sleep(Math.max(0, flags.interval * 1000 - (Date.now() - started)));
      }
    } finally {
      process.stdout.off('error', onOutputError);
      await options.locks?.release();
    }
  }

  private passFailed(pass: number, error: GobstopperError, interval: number): void {
    if (this.jsonEnabled()) {
      const envelope = toEnvelope(error);
      process.stdout.write(terminalSafeJson({ ...envelope, error: { ...envelope.error, details: { ...envelope.error.details, pass } } }) + '\n');
    } else if (this.failuresSaid.passFailed(`${error.code}\u0000${error.message}`)) {
      this.warning(`pass ${pass} failed: ${error.message}; trying again every ${interval} s, said again only if the failure changes`);
    }
  }

  /**
   * Each decision on a line, then what the pass passed over; a quiet pass prints nothing after the
   * first, and a session failing as it failed last pass is not said again.
   */
  private print(pass: WatchPass, always: boolean): void {
    if (pass.state_discarded) this.warning(`the watch state was not used: ${pass.state_discarded}; ${pass.dry_run ? 'a watch that is not a dry run rewrites it' : 'it is rewritten after this pass'}`);
    for (const warning of pass.warnings ?? []) this.warning(warning);
    const repeated = this.failuresSaid.repeated(pass.decisions);
    const shown = pass.decisions.filter((d) => d.outcome !== 'below_trigger' && !repeated.has(d));
    for (const d of shown) {
      for (const { text, whole } of decisionLines(d)) {
        if (whole) this.say(text);
        // Deeper than a decision's own indented lines, so a wrapped sentence does not read as one of them.
        else this.sayProse(text, '    ');
      }
    }
    if (!always && shown.length === 0) return;
    const counts = new Map<string, number>();
    // A fork returned again is no new compaction: counted apart, in the words its line uses.
    const tally = (d: WatchDecision) => (d.outcome === 'compacted' && d.reused ? 'already compacted' : OUTCOME_WORDS[d.outcome]);
    for (const d of pass.decisions) counts.set(tally(d), (counts.get(tally(d)) ?? 0) + 1);
    const parts = [...counts].map(([words, n]) => `${n} ${words}`);
    const s = pass.skipped;
    for (const [n, words] of [[s.live, 'live'], [s.settled, 'unchanged'], [s.rate_limited, 'compacted too recently'], [s.published, s.published === 1 ? 'unresumed fork' : 'unresumed forks'], [s.gone, 'gone']] as const) {
      if (n > 0) parts.push(`${n} ${words}`);
    }
    const time = new Date(pass.started_at).toISOString().slice(11, 19);
    this.sayProse(`${time} pass ${pass.pass}${pass.dry_run ? ' (dry run)' : ''}: ${pass.sessions} session${pass.sessions === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}`);
  }
}

const OUTCOME_WORDS: Record<WatchDecision['outcome'], string> = {
  compacted: 'compacted',
  would_compact: 'would be compacted',
  no_plan: 'without a plan',
  below_trigger: 'under the trigger',
  provider_control: 'for the client to compact',
  live_over_trigger: 'live over the trigger',
  failed: 'failed',
};

/** A line of a decision: sentences wrap to the terminal; a path or a command to copy is `whole`, as a break in it would paste as two. */
type DecisionLine = { text: string; whole?: true };

const prose = (text: string): DecisionLine => ({ text });

/** A decision's lines, then what plan or apply warned about it, under it. */
function decisionLines(d: WatchDecision): DecisionLine[] {
  const lines = outcomeLines(d);
  return lines.length > 0 ? [...lines, ...(d.warnings ?? []).map((w) => prose(`  warning: ${w}`))] : lines;
}

function outcomeLines(d: WatchDecision): DecisionLine[] {
  const who = `${d.provider} ${d.session_id}`;
  const tokens = d.context_tokens_after !== undefined ? `: ${formatCount(d.context_tokens)} → ${formatCount(d.context_tokens_after)} tokens (${d.strategy})` : '';
  switch (d.outcome) {
    case 'compacted': {
      const resume = resumeLines('  resume', d.fork!);
      return [
        prose(`${d.reused ? 'already compacted' : 'compacted'} ${who}${tokens}`),
        ...overTrigger(d),
        { text: `  fork: ${printableText(d.fork!.path)}`, whole: true },
        ...(d.rehearsal ? [prose(`  rehearsed before publishing: ${d.rehearsal}`)] : []),
        { text: resume.command, whole: true },
        ...(resume.note ? [prose(resume.note)] : []),
      ];
    }
    case 'would_compact':
      return [prose(`would compact ${who}${tokens}`), ...overTrigger(d)];
    case 'no_plan':
      return [prose(`no plan for ${who}: ${d.reason_code} (context ${formatCount(d.context_tokens)}, trigger ${formatCount(d.effective_trigger_tokens)})`)];
    case 'provider_control':
      return [prose(`${who}${tokens}: ${d.control ?? 'the plan names the client\'s own compaction'}`)];
    case 'live_over_trigger':
      return [prose(`${who} is live at ${formatCount(d.context_tokens)} tokens, over its trigger of ${formatCount(d.effective_trigger_tokens)}: it will be compacted once idle${d.control ? ` (its client can compact now: ${typedControl(d.provider, d.control)})` : ''}`)];
    case 'below_trigger':
      return [];
    case 'failed':
      return [prose(`failed ${who}: ${d.error!.message} [${d.error!.code}]`)];
  }
}

/** A fork still over the trigger is compacted again soon after a client resumes it: said, as plan says it. */
function overTrigger(d: WatchDecision): DecisionLine[] {
  if (d.context_tokens_after === undefined || d.effective_trigger_tokens === undefined) return [];
  const note = stillOverTriggerNote(d.context_tokens_after, d.effective_trigger_tokens);
  return note === null ? [] : [prose(`  ${note}`)];
}

/** A control as a person reaches it: Codex's API method is named with what its prompt takes. */
function typedControl(provider: string, control: string): string {
  return control === nativeControlOf(provider) ? controlWords(provider, control) : control;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
