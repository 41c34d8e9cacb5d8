import { Flags } from '@oclif/core';
import { providerFilterFlag } from '../../config/cli-flags.js';
import { availableParallelism } from 'node:os';
import type { BenchAggregate, BenchCommandResult, BenchRow } from '../../../schemas/generated/types.js';
import { ProgressBar } from '../render/progress-bar.js';
import { formatInt } from '../../text/numbers.js';
import { printableText, shorten } from '../../text/human.js';
import { dropInOrder, MESSAGE_CELL_MAX, messagesUnderTable, renderTable, type Column, type TableOptions } from '../../text/table.js';
import { runBench } from '../../services/bench.js';
import { ALL_BELOW_TRIGGER_MESSAGE, allBelowTrigger, noSessionsMessage, windowPhrase, type BenchWindow } from '../../eval/bench-window.js';
import { wrapText } from '../../text/wrap.js';
import { SINCE_HELP } from '../../text/since.js';
import { BaseCommand } from '../base-command.js';
import { policyFlags } from '../plan-flags.js';
import { homeFlags, providerHomes } from '../session-flags.js';

// --strategy here picks which strategies to measure (repeatable), not the policy's strategy.
const sharedPolicyFlags = { preset: policyFlags.preset, trigger: policyFlags.trigger, floor: policyFlags.floor, config: policyFlags.config };

const SHORT_ID_CHARS = 12;
const shortId = (id: string) => (id.length > SHORT_ID_CHARS + 1 ? `${id.slice(0, SHORT_ID_CHARS)}…` : id);

/**
 * How many leading characters tell the sessions apart. Codex ids start with their creation time:
 * sessions started within the same minute share the first 8, which a narrow column cut to.
 */
function distinguishingChars(ids: readonly string[]): number {
  const sorted = [...new Set(ids)].sort();
  let chars = 0;
  for (let i = 1; i < sorted.length; i += 1) {
    const [a, b] = [sorted[i - 1]!, sorted[i]!];
    let same = 0;
    while (same < a.length && a[same] === b[same]) same += 1;
    chars = Math.max(chars, same + 1);
  }
  return Math.min(chars, SHORT_ID_CHARS);
}
const pct = (n: number | null) => (n === null ? '-' : `${n.toFixed(1)}%`);

function resultCell(row: BenchRow): string {
  if (row.strategy === null) return `session failed (${row.failure}): ${row.error ?? ''}`;
  if (row.status === 'error') return `error: ${row.error ?? 'unknown'}`;
  if (row.status === 'no_plan') return `no plan (${row.reason_code ?? 'unknown'})`;
  return row.execution_state === 'provider_only' ? 'provider control' : 'plan';
}

/**
 * The columns a narrow terminal leaves out of the session rows, first to last. The session, the
 * strategy, its reduction and its recall always stay; a failure's result is also listed under the
 * table, so it goes last.
 */
const ROW_DROP_ORDER = ['time', 'provider', 'new errors', 'tail', 'before', 'after', 'result'];

export function benchRowLines(rows: readonly BenchRow[], options: TableOptions = {}): string[] {
  // A lost tail or a new verify error is what a reader must not miss: those columns stay then.
  const lostTail = rows.some((r) => r.tail_intact === false);
  const newErrors = rows.some((r) => r.execution_state === 'rendered' && (r.new_verify_errors ?? 0) > 0);
  const kept = new Set([...(lostTail ? ['tail'] : []), ...(newErrors ? ['new errors'] : [])]);
  const all: Column[] = [
    { header: '' },
    { header: 'provider' },
    // Cut at the end: the prefix is what people select a session by; never so short that two read alike.
    { header: 'session', fit: 'end', minWidth: Math.max(9, distinguishingChars(rows.map((r) => r.session)) + 1) },
    // Wide enough for every built-in id; a selector's label (auto→cache_edits) is cut at its end.
    { header: 'strategy', fit: 'end', minWidth: 11 },
    // A failure's whole message is printed under the table (failureLines).
    { header: 'result', fit: 'end', minWidth: 10, maxWidth: MESSAGE_CELL_MAX },
    { header: 'before', align: 'right' },
    { header: 'after', align: 'right' },
    { header: 'reduction', short: 'reduced', align: 'right' },
    { header: 'kept', align: 'right' },
    { header: 'tail' },
    { header: 'new errors', align: 'right' },
    { header: 'time', align: 'right' },
  ];
  const columns = dropInOrder(all, ROW_DROP_ORDER, kept);
  const body = rows.map((r) => [
    r.best ? '*' : '',
    r.provider,
    shortId(r.session),
    // As eval's table labels it: the strategy, and the plan it measured when that is another's.
    r.strategy === null ? '-' : r.credited_strategy ? `${r.strategy}→${r.credited_strategy}` : r.strategy,
    resultCell(r),
    r.context_before === null ? '-' : formatInt(r.context_before),
    r.status === 'plan' && r.context_after !== null ? formatInt(r.context_after) : '-',
    r.status === 'plan' ? pct(r.reduction_pct) : '-',
    // With no probe sampled the recall is 1 by definition, which measures nothing (the aggregates skip it too).
    r.recall === null || !r.recall_available ? '-' : `${(r.recall * 100).toFixed(0)}%`,
    r.tail_intact === null ? '-' : r.tail_intact ? 'intact' : 'LOST',
    r.new_verify_errors === null || r.execution_state !== 'rendered' ? '-' : String(r.new_verify_errors),
    r.duration_ms === null ? '-' : `${formatInt(r.duration_ms)} ms`,
  ]);
  return [...renderTable(columns, body, options), ...failureLines(rows, options), ...noPlanLines(rows, options)];
}

/** As eval prints them: a strategy's own words on why it proposed nothing, a few lines each. */
const NO_PLAN_WORDS_MAX = 240;
/** Different things said, at most; the rest are counted, and --json or --output has them all. */
const NO_PLAN_SHOWN = 12;

/**
 * What each strategy that proposed nothing said, under the table: its code alone does not say why.
 * The same words from one strategy on several sessions are one line that counts them.
 */
function noPlanLines(rows: readonly BenchRow[], options: TableOptions): string[] {
  const said = new Map<string, { strategy: string; words: string; sessions: string[] }>();
  for (const r of rows) {
    if (r.status !== 'no_plan' || !r.no_plan_rationale || r.strategy === null) continue;
    const key = `${r.strategy}\u0000${r.no_plan_rationale}`;
    const entry = said.get(key) ?? { strategy: r.strategy, words: r.no_plan_rationale, sessions: [] };
    entry.sessions.push(`${r.provider} ${shortId(r.session)}`);
    said.set(key, entry);
  }
  const groups = [...said.values()];
  const entries = groups.slice(0, NO_PLAN_SHOWN).map((g) => {
    const where = g.sessions.length === 1 ? g.sessions[0]! : `${formatInt(g.sessions.length)} sessions`;
    return [`${g.strategy} (${where})`, shorten(g.words, NO_PLAN_WORDS_MAX)] as const;
  });
  const lines = messagesUnderTable('no plan, as the strategy said', entries, options.width);
  const more = groups.length - entries.length;
  if (more > 0) lines.push(...wrapText(`  +${formatInt(more)} more (--json or --output has each row's no_plan_rationale)`, options.width, '    '));
  return lines;
}

/** Every failed session or strategy with its whole message, which the table cuts. */
function failureLines(rows: readonly BenchRow[], options: TableOptions): string[] {
  const failed = rows.filter((r) => r.failure !== null || r.status === 'error');
  return messagesUnderTable('failures', failed.map((r) => [`${r.provider} ${r.session}${r.strategy === null ? '' : ` ${r.strategy}`}`, resultCell(r)] as const), options.width);
}

/** The columns a narrow terminal leaves out of the aggregates, first to last. */
const AGGREGATE_DROP_ORDER = ['no plan', 'tail intact', 'failed', 'controls', 'q1-q3'];

export function benchAggregateLines(aggregates: readonly BenchAggregate[], options: TableOptions = {}): string[] {
  const all: Column[] = [
    { header: 'strategy', fit: 'end', minWidth: 11 },
    { header: 'sessions', short: 'sess', align: 'right' },
    { header: 'with plan', short: 'plans', align: 'right' },
    { header: 'controls', align: 'right' },
    { header: 'best', align: 'right' },
    { header: 'failed', align: 'right' },
    { header: 'reduction median', short: 'reduced', align: 'right' },
    { header: 'q1-q3', align: 'right' },
    // As the report and eval say it: the share of probes a rewrite kept verbatim.
    { header: 'median kept', short: 'kept', align: 'right' },
    { header: 'tail intact', align: 'right' },
    { header: 'no plan', fit: 'end' },
  ];
  const columns = dropInOrder(all, AGGREGATE_DROP_ORDER);
  const body = aggregates.map((a) => [
    a.strategy,
    String(a.sessions),
    String(a.sessions_with_plan),
    String(a.sessions_with_control),
    String(a.sessions_best),
    String(a.sessions_failed),
    a.reduction_pct ? pct(a.reduction_pct.median) : '-',
    a.reduction_pct ? `${pct(a.reduction_pct.q1)}-${pct(a.reduction_pct.q3)}` : '-',
    a.median_recall === null ? '-' : `${(a.median_recall * 100).toFixed(0)}%`,
    String(a.tail_intact_sessions),
    Object.entries(a.no_plan_by_reason).map(([reason, n]) => `${reason} ${n}`).join(', ') || '-',
  ]);
  return renderTable(columns, body, options);
}

export default class Bench extends BaseCommand<BenchCommandResult> {
  static override summary = 'Measure every strategy on every session, in parallel, and report per session and per strategy.';
  static override description = `Runs what \`gobstopper eval\` does on each discovered session (by default those updated in the last 7 days, or within [discovery] max_age_secs of the config, like detect; --all for every age, --since for a window), one worker process per core. Each session is read once into a private copy and never written; a session that vanishes or fails is reported as a failure row and the bench goes on. A configuration \`eval\` would refuse (strategy_params that do not match the strategy's schema, a floor at or above the trigger) fails the bench once, before any session is read, with eval's error and nothing written.

Prints per-session rows (a row whose plan is another's, a selector's pick or a pinned plugin's preset:<id>, is labelled <id>→<plan> as in eval, and carries it as credited_strategy; a row where a strategy proposed nothing carries what it said of why in no_plan_rationale, as eval's --json does, and the table lists those words underneath, once for the same words on several sessions) and per-strategy aggregates: sessions with a plan, median and quartile reduction, the median share of probes kept verbatim (recall in the JSON and CSV), protected tails intact, no-plan counts by reason. --output writes the rows to a new CSV file (the original tool's 24 columns first, provider to failure in its order so existing readers keep working, then status, reason_code and the other newer ones; a text field starting with = + - or @ is written behind a ' so a spreadsheet does not run it) or JSON file (by its extension; --format for any other name); --html writes a self-contained report with charts of reduction against retention per strategy and of sessions' context over time with their compaction points, and lists the sessions and strategies that failed with why; a report with nothing in it says why at its top, as the command does (no sessions in the window, none measurable, every one under the trigger). Output files are never overwritten. A configured legacy command is not measured and a session table keyed by an id prefix is not applied; each is warned of once, as eval warns. With --json, one object: sessions (found), sessions_measured (those at least one strategy measured), sessions_failed (those that failed whole), the rows, the aggregates, output_path, html_path and those warnings. A progress bar is drawn on a terminal; piped runs stay quiet.

Exit status: 0 when at least one session was measured (or none was found), even if others failed; 1 when sessions were found but not one could be measured (each failed, or every strategy failed on it: sessions_measured is 0), after printing the rows (one JSON object with --json) and writing the files, which say why; 1 or 2 for an error before measuring, as for every command.`;
  static override examples = [
    '<%= config.bin %> bench',
    '<%= config.bin %> bench --all --trigger 50000 --floor 10000 --output bench.csv --html bench.html',
    '<%= config.bin %> bench --provider codex --since 24h --strategy elide --strategy scored --json',
  ];
  static override flags = {
    all: Flags.boolean({ summary: 'Include sessions of any age (default: the last 7 days, or [discovery] max_age_secs).', exclusive: ['since'] }),
    since: Flags.string({ summary: `Only sessions updated since: ${SINCE_HELP}.` }),
    // People say claude for Claude Code, as config, explain and policy-check take it.
    provider: providerFilterFlag,
    strategy: Flags.string({ summary: 'Measure only this strategy; repeatable (default: every strategy the plugins provide).', helpValue: '<id>', multiple: true, multipleNonGreedy: true, helpGroup: 'POLICY' }),
    ...sharedPolicyFlags,
    output: Flags.string({ summary: 'Write the per-session rows to this new file (.csv or .json); refuses an existing path.', helpValue: '<new file>', helpGroup: 'OUTPUT' }),
    format: Flags.string({ summary: 'Format of --output when its name ends in neither .csv nor .json (default csv).', options: ['csv', 'json'], helpGroup: 'OUTPUT' }),
    html: Flags.string({ summary: 'Write a self-contained HTML report with charts to this new file.', helpValue: '<new file>', helpGroup: 'OUTPUT' }),
    jobs: Flags.integer({ summary: 'Sessions measured at once, in worker processes (default: the number of cores).', min: 1, max: 256 }),
    ...homeFlags,
  };

  async run(): Promise<BenchCommandResult> {
    const { flags } = await this.parse(Bench);
    const bar = new ProgressBar(this.progressStream());
    let ran: Awaited<ReturnType<typeof runBench>>;
    try {
      ran = await runBench({
        all: flags.all,
        since: flags.since,
        providers: flags.provider,
        strategies: flags.strategy,
        trigger: flags.trigger,
        floor: flags.floor,
        preset: flags.preset,
        configPath: flags.config,
        output: flags.output,
        format: flags.format as 'csv' | 'json' | undefined,
        html: flags.html,
        jobs: flags.jobs ?? availableParallelism(),
        homes: providerHomes(flags),
        onProgress: (p) => bar.update(p),
      });
    } finally {
      bar.finish();
    }
    const { result, window } = ran;
    if (!this.jsonEnabled()) this.print(result, window);
    // The rows and files are the report either way; the status tells a script that sessions were
    // found and not one could be measured. A session that fails beside measured ones costs only its
    // rows. A session whose every strategy failed was read but measured nothing either, as eval's
    // exit 1 for it says: counting only whole-session failures let such a bench pass.
    if (result.sessions > 0 && result.sessions_measured === 0) process.exitCode = 1;
    return result;
  }

  private print(result: BenchCommandResult, window: BenchWindow): void {
    if (result.sessions === 0) {
      for (const line of wrapText(noSessionsMessage(window), this.tableWidth())) this.say(line);
    } else {
      for (const line of benchRowLines(result.rows, { width: this.tableWidth() })) this.say(line);
      this.say('');
      // Sessions that all failed whole leave no strategy to sum up: no header over nothing.
      if (result.aggregates.length > 0) {
        for (const line of benchAggregateLines(result.aggregates, { width: this.tableWidth() })) this.say(line);
        this.say('');
      }
      const unmeasured = result.sessions - result.sessions_measured;
      const failed = unmeasured > 0 ? `, ${formatInt(unmeasured)} could not be measured` : '';
      for (const line of wrapText(`${formatInt(result.sessions)} session(s) ${windowPhrase(window)}${failed}; * marks each session's best clean rewrite (protected tail kept; a tail of - held no probe to check)`, this.tableWidth())) this.say(line);
      for (const note of sharedIdNotes(result.rows)) for (const line of wrapText(note, this.tableWidth())) this.say(line);
      // A bench where nothing fired measured nothing: say why, and how to measure anyway.
      if (allBelowTrigger(result.rows)) for (const line of wrapText(ALL_BELOW_TRIGGER_MESSAGE, this.tableWidth())) this.say(line);
    }
    if (result.output_path) this.say(`wrote ${formatInt(result.rows.length)} row${result.rows.length === 1 ? '' : 's'} to ${result.output_path}`);
    if (result.html_path) this.say(`wrote the report to ${result.html_path}`);
    // As eval prints them: after the tables, which they qualify; --json carries them in warnings.
    for (const w of result.warnings) this.noteProse(`warning: ${w}`);
  }
}

/**
 * Files that hold one session id (a copied project folder) give rows the table cannot tell apart;
 * each such id is named once, with its files, as the rows in --json and --output carry them.
 */
function sharedIdNotes(rows: readonly BenchRow[]): string[] {
  const files = new Map<string, Set<string>>();
  for (const row of rows) {
    const key = `${row.provider} ${row.session}`;
    (files.get(key) ?? files.set(key, new Set()).get(key)!).add(row.path);
  }
  return [...files]
    .filter(([, paths]) => paths.size > 1)
    .map(([key, paths]) => `note: ${paths.size} files hold ${printableText(key)}, so the table shows its rows once per file: ${[...paths].map(printableText).join(', ')} (--json and --output name each row's path)`);
}
