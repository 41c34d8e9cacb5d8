import { Args, loadHelpClass, toConfiguredId, toStandardizedId, type Command } from '@oclif/core';
import type { HelpCommandResult, HelpFlag } from '../../../schemas/generated/types.js';
import { usageError } from '../../errors.js';
import { BaseCommand } from '../base-command.js';
import { commandsUnder, firstLine, renderedHelpText } from '../help-class.js';
import { didYouMean, unknownCommandWords } from '../unknown-command.js';

export default class Help extends BaseCommand<HelpCommandResult> {
  static override summary = 'Show help for gobstopper or for one command; --json describes the commands for scripts.';
  static override description =
    'With no words, lists every command. With the words of a command (or of a group such as plugin), shows its usage, arguments, flags and examples, the same as <command> --help. ' +
    'With --json the same answer is one JSON object: the commands under those words, and for a command its arguments and flags.';
  static override examples = ['<%= config.bin %> help', '<%= config.bin %> help plugin add', '<%= config.bin %> help plan --json'];
  static override strict = false;
  static override args = { command: Args.string({ description: 'The command (or group) to explain; several words, as typed.', required: false }) };

  async run(): Promise<HelpCommandResult> {
    const { argv } = await this.parse(Help);
    const words = (argv as string[]).filter((w) => !w.startsWith('-'));
    const id = toStandardizedId(words.join(' '), this.config);
    const command = id ? this.config.findCommand(id) : undefined;
    const under = commandsUnder(this.config, id);
    if (id && !command && under.length === 0) {
      const { suggestion } = unknownCommandWords(this.config, words);
      throw usageError('unknown_command', `no command '${words.join(' ')}'${didYouMean(suggestion)}; gobstopper help lists the commands`);
    }
    if (!this.jsonEnabled()) {
      const HelpClass = await loadHelpClass(this.config);
      await new HelpClass(this.config).showHelp(words);
    }
    return command ? { commands: under, ...describe(command, this.config) } : { commands: under };
  }
}

function describe(command: Command.Loadable, config: Parameters<typeof toConfiguredId>[1]): Omit<HelpCommandResult, 'commands'> {
  const rendered = (text: string) => renderedHelpText(command, config, text);
  const flags: HelpFlag[] = Object.entries(command.flags)
    .filter(([, f]) => !f.hidden)
    .map(([name, f]) => {
      const flag: HelpFlag = { name, type: f.type, summary: rendered(f.summary ?? firstLine(f.description)), multiple: f.type === 'option' && Boolean(f.multiple) };
      if (f.char) flag.char = f.char;
      if (f.default !== undefined && typeof f.default !== 'function') flag.default = f.default;
      if (f.type === 'option' && f.options) flag.options = [...f.options];
      return flag;
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    command: toConfiguredId(command.id, config),
    summary: rendered(command.summary ?? firstLine(command.description)),
    description: rendered(command.description ?? ''),
    args: Object.entries(command.args).map(([name, a]) => ({ name, description: a.description ?? '', required: Boolean(a.required) })),
    flags,
    examples: (command.examples ?? []).map((e) => rendered(typeof e === 'string' ? e : e.command)),
  };
}
