/**
 * oclif's help, with the commands of hidden groups left out of the listings. oclif hides a hidden
 * topic but still lists its commands; its own `plugins` installer is hidden so that `gobstopper
 * plugin` (bundles) is the one a reader finds. `gobstopper plugins --help` still answers.
 */
import { CommandHelp, Help, toConfiguredId, type Command, type Interfaces } from '@oclif/core';
import type { HelpCommandEntry } from '../../schemas/generated/types.js';
import { terminalSafeJson } from '../text/json-output.js';
import { terminalSafe } from '../text/human.js';
import { usageError } from '../errors.js';
import { toEnvelope } from './base-command.js';

/** Whether a command belongs to a hidden group (a hidden topic), unless `asked` names that group. */
export function inHiddenGroup(config: Interfaces.Config, commandId: string, asked = ''): boolean {
  const group = commandId.split(':')[0]!;
  return config.topics.some((t) => t.hidden && t.name === group && !asked.startsWith(t.name));
}

/**
 * A command's help text as its --help shows it: oclif's own commands write placeholders
 * (`<%= config.bin %>`, `<%= command.id %>`) that its help fills in, and `help --json` fills them in too.
 */
export function renderedHelpText(command: Command.Loadable, config: Interfaces.Config, text: string): string {
  if (!text.includes('<%')) return text;
  // The id as typed (`plugins install`, not `plugins:install`); filling in placeholders wraps
  // nothing, so the width is only the constructor's due.
  return new CommandHelp({ ...command, id: toConfiguredId(command.id, config) }, config, { maxWidth: 80 }).render(text);
}

/** The summary a command or flag without one gets: the first line of its description. */
export function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0] ?? '';
}

/** Visible commands whose id is `id` or starts with its words, sorted: the listing `help --json` gives. */
export function commandsUnder(config: Interfaces.Config, id: string): HelpCommandEntry[] {
  // A hidden group (oclif's own `plugins`) is listed only when asked for by name.
  return config.commands
    .filter((c) => !c.hidden && !inHiddenGroup(config, c.id, id) && (id === '' || c.id === id || c.id.startsWith(`${id}:`)))
    .map((c) => ({ command: toConfiguredId(c.id, config), summary: renderedHelpText(c, config, c.summary ?? firstLine(c.description)) }))
    .sort((a, b) => a.command.localeCompare(b.command));
}

/** The flags typed after a bare topic (`gobstopper plugin --json`), or null when argv is not one. */
function bareTopicFlags(config: Interfaces.Config, argv: readonly string[]): string[] | null {
  if (argv.length !== 1 || config.findCommand(argv[0]!) || !config.findTopic(argv[0]!)) return null;
  // oclif answers a topic with its help before any command runs, so no command ever sees its flags.
  const typed = process.argv.slice(2);
  return (typed.includes('--') ? typed.slice(0, typed.indexOf('--')) : typed).filter((w) => w.startsWith('-'));
}

const asksForHelp = (flags: readonly string[]) => flags.some((f) => f === '--help' || f === '-h');

/**
 * A flag given to a group of commands (`gobstopper plugin --force`) belongs to one of its commands:
 * it is refused, as a command refuses a flag it does not take, instead of printing the group's help
 * and exiting 0 as if something had run.
 */
function refuseTopicFlags(topic: string, flags: readonly string[]): void {
  const unknown = flags.filter((f) => f !== '--json');
  const error = usageError(
    'usage',
    `Nonexistent flag${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}; '${topic}' is a group of commands, which take the flags (gobstopper ${topic} --help lists them)`,
  );
  process.exitCode = error.exit;
  if (flags.includes('--json')) process.stdout.write(terminalSafeJson(toEnvelope(error)) + '\n');
  else process.stderr.write(terminalSafe(`gobstopper: ${error.message}`) + '\n');
}

/** Whether the words before any `--` are `help` and nothing else (`help --help`, `help help`). */
function asksAboutHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const words = (end === -1 ? argv : argv.slice(0, end)).filter((w) => !w.startsWith('-'));
  return words.length > 0 && words.every((w) => w === 'help');
}

export default class GobstopperHelp extends Help {
  protected override get sortedCommands(): Command.Loadable[] {
    return super.sortedCommands.filter((c) => !inHiddenGroup(this.config, c.id));
  }

  /** A bare topic with --json answers as `help <topic> --json` does: the topic's commands, one JSON object. */
  override async showHelp(argv: string[]): Promise<void> {
    const topicFlags = bareTopicFlags(this.config, argv);
    // `plugin --help --json` asked for the help, as `plan --help --json` does.
    if (topicFlags !== null && !asksForHelp(topicFlags)) {
      if (topicFlags.some((f) => f !== '--json')) {
        refuseTopicFlags(argv[0]!, topicFlags);
        return;
      }
      if (topicFlags.includes('--json')) {
        process.stdout.write(terminalSafeJson({ commands: commandsUnder(this.config, argv[0]!) }, 2) + '\n');
        return;
      }
    }
    // oclif skips the word `help` when it looks for the subject, so `help --help` and `help help`
    // would print the root listing; they ask about the help command, so they get its own help.
    const help = asksAboutHelp(argv) ? this.config.findCommand('help') : undefined;
    if (help) {
      await this.showCommandHelp(help);
      return;
    }
    await super.showHelp(argv);
  }
}
