import { Command, Flags, toConfiguredId, ux, type Interfaces } from '@oclif/core';
import { GobstopperError, usageError } from '../errors.js';
import { isStopping, onStopSignal, stopNote } from '../exit-cleanup.js';
import { filesystemMessage } from '../filesystem-message.js';
import type { ProgressStream } from './render/status-line.js';
import { StatusLine } from './render/status-line.js';
import { renderTable, type Column } from '../text/table.js';
import { printableText, terminalSafe } from '../text/human.js';
import { terminalSafeJson } from '../text/json-output.js';
import { wrapText } from '../text/wrap.js';
import { nearestName } from '../text/edit-distance.js';
import type { ResumeLines } from './render/resume-lines.js';
import { unexpectedArgumentMessage, unknownFlagMessage } from './unknown-flag.js';

export interface ErrorEnvelope {
  ok: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
}

interface OclifLikeError extends Error {
  code?: string;
  oclif?: { exit?: number };
  exitCode?: number;
}

/** What oclif's parser outputs flags and args as. */
type Output = Record<string, unknown>;

/** Narrower than this, a terminal width is taken for a mistake and tables print whole. */
const MIN_TABLE_WIDTH = 20;

/**
 * Every command extends this: `--json` everywhere, errors as one JSON object or one line, exit codes
 * 0 ok / 1 error / 2 usage, and no stack trace for anything expected.
 */
export abstract class BaseCommand<TResult> extends Command {
  static override enableJsonFlag = true;
  static override baseFlags = { help: Flags.help({ char: 'h', summary: 'Show this help.', description: '', helpGroup: 'GLOBAL' }) };

  abstract override run(): Promise<TResult>;

  /**
   * An interrupted command says so, as any other ending does: one line on stderr (under --json, the
   * error object on stdout), after clearing a status line left on the terminal.
   */
  override async init(): Promise<void> {
    await super.init();
    onStopSignal((signal) => {
      if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
      const done = stopNote();
      const message = `interrupted by ${signal}${done ? `; ${done}` : ''}`;
      if (this.jsonEnabled()) process.stdout.write(terminalSafeJson({ ok: false, error: { code: 'interrupted', message, details: { signal, ...(done ? { done } : {}) } } }) + '\n');
      // The note names files (a fork's path), whose names may hold characters that steer a terminal.
      else process.stderr.write(terminalSafe(`gobstopper: ${message}`) + '\n');
    });
  }

  /**
   * oclif fills a missing argument from stdin when stdin is not a terminal, so `echo x | gobstopper
   * apply` would compact session x and a command inside a `while read` loop would eat the loop's
   * input. Arguments here come from the command line only.
   */
  protected override parse<F extends Output, B extends Output, A extends Output>(options?: Interfaces.Input<F, B, A>, argv?: string[]): Promise<Interfaces.ParserOutput<F, B, A>> {
    const input = options ?? (this.ctor as unknown as Interfaces.Input<F, B, A>);
    // oclif reads `--verify=true` as the flag and an argument `true`: it names the wrong argument
    // as unexpected, or takes the value for the command's argument (`vault --verify=true` would
    // check a session named true).
    const given = argv ?? this.argv;
    const flagsEnd = given.indexOf('--');
    const switches = this.switchNames();
    const valued = (flagsEnd < 0 ? given : given.slice(0, flagsEnd)).map((arg) => /^--([^=]+)=/.exec(arg)?.[1]).find((name) => name !== undefined && switches.has(name));
    if (valued !== undefined) throw usageError('usage', `--${valued} takes no value; pass --${valued} alone`);
    if (!input.args) return super.parse(input, argv).catch((error: unknown) => this.unknownFlag(error));
    const args = Object.fromEntries(Object.entries(input.args).map(([name, arg]) => [name, { ...arg, ignoreStdin: true }]));
    // The command class itself, with these args: oclif spreads its own statics and reads the
    // inherited ones (base flags, --json) through it.
    return super.parse(Object.assign(Object.create(input) as object, input, { args }) as Interfaces.Input<F, B, A>, argv).catch((error: unknown) => this.unknownFlag(error));
  }

  /** The flags that take no value, by every name they answer to: --json, --help and the command's boolean flags. */
  private switchNames(): Set<string> {
    const all: Record<string, { type?: string; aliases?: string[] }> = { ...this.ctor.baseFlags, ...this.ctor.flags };
    const names = Object.entries(all).flatMap(([name, flag]) => (flag.type === 'boolean' ? [name, ...(flag.aliases ?? [])] : []));
    return new Set(this.ctor.enableJsonFlag ? [...names, 'json'] : names);
  }

  /**
   * An unknown flag, refused with the flag probably meant and where this command's flags are listed;
   * an argument too many or one missing, with where the command says what it takes, as a command
   * that takes no argument says it (the command_not_found hook).
   */
  private unknownFlag(error: unknown): never {
    const refused = error as OclifLikeError & { flags?: unknown };
    if (refused.oclif?.exit !== 2) throw error;
    const typed = Array.isArray(refused.flags) ? refused.flags.filter((f): f is string => typeof f === 'string') : [];
    // oclif adds --json and the base flags at parse time, outside the command's own flags.
    const all = { ...this.ctor.baseFlags, ...(this.ctor.enableJsonFlag ? { json: {} } : {}), ...this.ctor.flags };
    const flags = Object.entries(all).map(([name, flag]) => ({ name, hidden: Boolean((flag as { hidden?: boolean }).hidden) }));
    const id = toConfiguredId(this.id ?? '', this.config);
    const missing = /^Missing \d+ required args?:/.test(refused.message) ? `${oneLine(refused.message)}; gobstopper ${id} --help lists what it takes` : null;
    // A required flag left out gets the same pointer, to where the command lists its flags.
    const unflagged = /Missing required flag /.test(refused.message) ? `${plainUsage(oneLine(refused.message))}; gobstopper ${id} --help lists its flags` : null;
    const message = unknownFlagMessage(refused.message, typed, id, flags) ?? unexpectedArgumentMessage(refused.message, id) ?? missing ?? unflagged;
    throw message === null ? error : usageError('usage', message);
  }

  /**
   * Nothing more reaches stdout once a stop signal has been reported: a command whose last step was
   * already under way when the signal came may still finish while the stop waits for it, and its
   * answer after "interrupted" would make two answers (two JSON objects under --json).
   */
  override log(message = '', ...args: unknown[]): void {
    if (!isStopping()) super.log(message, ...args);
  }

  /**
   * The answer under --json, laid out as oclif lays it out (two-space indent, coloured only by a
   * user's theme), with the characters that could steer a terminal escaped. The text is made here
   * and handed over as it is: given the value, oclif would stringify it again and undo the escapes.
   */
  override logJson(json: unknown): void {
    if (!isStopping()) ux.stdout(ux.colorizeJson(terminalSafeJson(json, 2), { pretty: false, theme: this.config.theme?.json }));
  }

  /** Human output; suppressed under --json, where the returned result is printed instead. */
  protected say(line = ''): void {
    this.log(terminalSafe(line));
  }

  /**
   * A sentence for people, wrapped at word boundaries to the width tables fit, continuation lines
   * indented by `hang`. Not for a command to copy (a resume command, a path): a break in it would
   * paste as two.
   */
  protected sayProse(line: string, hang = '  '): void {
    for (const wrapped of wrapText(line, this.tableWidth(), hang)) this.say(wrapped);
  }

  /** A resume command on its own line, to copy whole, and the provider's note under it, wrapped. */
  protected sayResume(lines: ResumeLines): void {
    this.say(lines.command);
    if (lines.note) this.sayProse(lines.note, '        ');
  }

  /**
   * A table for people, narrowed to the terminal it is printed on. Cells are made one-line safe
   * first, so a cut never splits an escape from what it stands for in the width count.
   */
  protected sayTable(columns: readonly Column[], rows: readonly (readonly string[])[]): { header: string } {
    const safe = rows.map((row) => row.map(printableText));
    const lines = renderTable(columns, safe, { width: this.tableWidth() });
    for (const line of lines) this.say(line);
    // Which optional columns made it onto the screen, for footnotes about them.
    return { header: lines[0] ?? '' };
  }

  /**
   * The width tables fit in: COLUMNS when set (as `ls` and most tools read it), else the terminal's;
   * none when stdout is a file or a pipe, which get whole rows.
   */
  protected tableWidth(): number | undefined {
    const fromEnv = Number(process.env.COLUMNS);
    if (Number.isInteger(fromEnv) && fromEnv >= MIN_TABLE_WIDTH) return fromEnv;
    return process.stdout.isTTY && process.stdout.columns >= MIN_TABLE_WIDTH ? process.stdout.columns : undefined;
  }

  /**
   * A line on stderr saying which step of a long command is running: drawn only on a terminal and
   * never with --json, cleared before the answer is printed.
   */
  protected statusLine(): StatusLine {
    return new StatusLine(this.progressStream());
  }

  /**
   * Where progress for people goes: stderr, or nowhere with --json. A terminal that cannot move the
   * cursor (TERM=dumb: editors' shells, some CI logs) gets none, as a pipe does.
   */
  protected progressStream(): ProgressStream {
    return this.jsonEnabled() || process.env.TERM === 'dumb' ? { isTTY: false, write: () => true } : process.stderr;
  }

  /** Progress and notes for people go to stderr so stdout stays parseable. */
  protected note(line: string): void {
    if (!this.jsonEnabled()) process.stderr.write(terminalSafe(line) + '\n');
  }

  /** A note that is a sentence, wrapped as sayProse wraps one: stderr shares the terminal stdout is on. */
  protected noteProse(line: string, hang = '  '): void {
    for (const wrapped of wrapText(line, this.tableWidth(), hang)) this.note(wrapped);
  }

  /**
   * Something the answer leaves out or got around, which a result without a place for it would
   * hide: on stderr with --json too, where a script's stdout stays the JSON alone.
   */
  protected warning(line: string): void {
    process.stderr.write(terminalSafe(`warning: ${line}`) + '\n');
  }

  protected override async catch(error: OclifLikeError): Promise<void> {
    const exit = exitStatus(error);
    // oclif ends --help and -h by throwing an exit 0: the help is the answer, not an error.
    if (exit === 0) return;
    // Work cut short by a stop signal fails on its way out; the interrupt was already reported.
    if (isStopping()) return;
    const envelope = toEnvelope(error);
    process.exitCode = exit;
    if (this.jsonEnabled()) {
      process.stdout.write(terminalSafeJson(envelope) + '\n');
      return;
    }
    process.stderr.write(terminalSafe(`gobstopper: ${envelope.error.message}${whereRefused(envelope.error.message, envelope.error.details)}`) + '\n');
    if (process.env.GOBSTOPPER_DEBUG) {
      if (error.stack) process.stderr.write(terminalSafe(error.stack) + '\n');
      const pluginStderr = (error as { stderrText?: unknown }).stderrText;
      // What a plugin wrote is untrusted text like any other it sends: shown, never obeyed.
      if (typeof pluginStderr === 'string' && pluginStderr.length > 0) process.stderr.write(`--- the plugin's stderr (the last ${pluginStderr.length} characters kept) ---\n${terminalSafe(pluginStderr)}${pluginStderr.endsWith('\n') ? '' : '\n'}`);
    }
  }
}

/**
 * Where a refused plan broke its rule, for people: the message starts with the exact text of the
 * rule (scripts match it) and says why; this adds the edit, line and proposer the reason does not
 * already name. --json carries the same numbers in `details`.
 */
function whereRefused(message: string, details: Record<string, unknown> | undefined): string {
  if (!details || typeof details.rule !== 'string') return '';
  const named = (text: string) => new RegExp(`\\b${text}\\b`).test(message);
  const parts: string[] = [];
  if (typeof details.edit_index === 'number' && !named(`edit ${details.edit_index}`)) parts.push(`edit ${details.edit_index}`);
  // Lines are counted from 1 for people; details.line_index is the plan's 0-based index.
  if (typeof details.line_index === 'number' && !named(`line ${details.line_index + 1}`)) parts.push(`line ${details.line_index + 1}`);
  if (typeof details.proposer === 'string') parts.push(`proposed by the ${details.proposer}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function exitStatus(error: OclifLikeError): number {
  if (error instanceof GobstopperError) return error.exit;
  const oclifExit = error.oclif?.exit;
  if (typeof oclifExit === 'number') return oclifExit === 0 ? 0 : oclifExit === 2 ? 2 : 1;
  return 1;
}

export function toEnvelope(error: OclifLikeError): ErrorEnvelope {
  if (error instanceof GobstopperError) {
    return { ok: false, error: { code: error.code, message: oneLine(error.message), ...(error.details ? { details: error.details } : {}) } };
  }
  if (error.oclif?.exit === 2) return { ok: false, error: { code: 'usage', message: plainUsage(oneLine(error.message)) } };
  const code = typeof error.code === 'string' && /^[A-Z_a-z0-9]+$/.test(error.code) ? error.code.toLowerCase() : 'internal';
  return { ok: false, error: { code, message: oneLine(filesystemMessage(error) ?? (error.message || String(error))) } };
}

/**
 * oclif's parse errors in the words the rest of the CLI uses: no "The following error occurred:"
 * preamble, flags named with their dashes, one problem after another.
 */
export function plainUsage(text: string, argv: readonly string[] = process.argv.slice(2)): string {
  return text
    .replace(/^The following errors? occurred:\s*/, '')
    .split(PROBLEM_SEPARATOR)
    .map((problem) =>
      problem
        .replace(/Missing required flag ([a-z0-9-]+)\s*/g, 'missing required flag --$1; ')
        // oclif takes digits only: " 3" is refused although the echo below shows it trimmed.
        .replace(/^Parsing (--[a-z0-9-]+) Expected an integer but received:\s*$/, '$1 must be a whole number, digits only (got an empty value)')
        .replace(/^Parsing (--[a-z0-9-]+) Expected an integer but received: (.*)$/, (_, flag: string, shown: string) => {
          // oclif echoes the value trimmed; the value as typed shows why " 5" was refused.
          const raw = rawFlagValue(argv, flag);
          return `${flag} must be a whole number, digits only (got ${raw !== undefined && raw !== shown ? JSON.stringify(raw) : shown})`;
        })
        // A bound, in the words of the digits-only message above: "--trigger must be at least 1 (got 0)".
        .replace(/^Parsing (--[a-z0-9-]+) Expected an integer greater than or equal to (-?\d+) but received: (.*)$/, '$1 must be a whole number of at least $2 (got $3)')
        .replace(/^Parsing (--[a-z0-9-]+) Expected an integer less than or equal to (-?\d+) but received: (.*)$/, '$1 must be a whole number of at most $2 (got $3)')
        // A value outside a flag's choices, in the words of the bounds above, with the choice probably meant.
        .replace(/^(?:Parsing --[a-z0-9-]+ )?Expected (--[a-z0-9-]+)=(.*) to be one of: (.*)$/, (_, flag: string, got: string, choices: string) => {
          const meant = nearestName(got.toLowerCase(), choices.split(', '));
          return `${flag} must be one of ${choices} (got ${got === '' ? 'an empty value' : got}${meant ? `; did you mean ${meant}?` : ''})`;
        })
        .replace(/^Parsing (--[a-z0-9-]+) /, '$1: ')
        .replace(/^All of the following must be provided when using (--[a-z0-9-]+): (.*)$/, '$1 needs $2')
        // oclif refuses two exclusive flags once from each side, echoing a value ("--all=true") that
        // has nothing to do with the refusal: one clause a pair, in a fixed order, says it.
        .replace(/^(--[a-z0-9-]+)(?:=.*)? cannot also be provided when using (--[a-z0-9-]+)$/, (_, a: string, b: string) => `${[a, b].sort().join(' and ')} cannot be used together`)
        .replace(/;\s*$/, ''),
    )
    .filter((problem, i, all) => all.indexOf(problem) === i)
    .join(PROBLEM_SEPARATOR);
}

/** The value `flag` was given on the command line as typed (`--flag value` or `--flag=value`); the last one wins. */
function rawFlagValue(argv: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  argv.forEach((arg, i) => {
    if (arg === flag && i + 1 < argv.length) value = argv[i + 1];
    else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
  });
  return value;
}

/** Between the problems of one oclif parse error that lists several. */
const PROBLEM_SEPARATOR = '; ';

function oneLine(message: string): string {
  // oclif spreads parse errors over several lines ("Missing 1 required arg:\nsession  Session id…",
  // then notes and a help hint); fold the error itself into one line and drop the rest.
  const all = message
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trim());
  const end = all.findIndex((l) => /^(See more help with|Note:)/i.test(l));
  const lines = (end === -1 ? all : all.slice(0, end)).filter((l) => l.length > 0);
  // An argument listed under "Missing 1 required arg:" is "name  description", the description
  // wrapped over more lines: each becomes "name (description)".
  let folded = lines;
  if (/^Missing \d+ required args?:$/.test(lines[0] ?? '')) {
    const args: string[] = [];
    for (const l of lines.slice(1)) {
      const named = /^(\S+)\s{2,}(.+)$/.exec(l);
      if (named || args.length === 0) args.push(named ? `${named[1]} (${named[2]}` : l);
      else args[args.length - 1] += ` ${l}`;
    }
    folded = [lines[0]!, ...args.map((a) => (a.includes(' (') ? `${a})` : a))];
  }
  // "The following errors occurred:" lists one problem a line; the lines stay apart as clauses.
  const listed = /^The following errors? occurred:$/.test(folded[0] ?? '');
  const text = (listed ? `${folded[0]} ${folded.slice(1).join(PROBLEM_SEPARATOR)}` : folded.join(' ')).replace(/\s+/g, ' ');
  return text.length === 0 ? 'unknown error' : text.length > 600 ? `${text.slice(0, 599)}…` : text;
}
