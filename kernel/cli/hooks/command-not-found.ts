/**
 * `gobstopper explain extra` reaches oclif as a command named `explain:extra`. Left to itself,
 * oclif answers that with its own multi-line error that ignores `--json`; this hook answers as the
 * commands do: one line on stderr, or one JSON object on stdout, and exit status 2. A typo gets the
 * nearest command, `-h` the help, and a flag put before the command says where flags go.
 */
import { loadHelpClass, type Hook, type Interfaces } from '@oclif/core';
import { usageError } from '../../errors.js';
import { toEnvelope } from '../base-command.js';
import { terminalSafe } from '../../text/human.js';
import { terminalSafeJson } from '../../text/json-output.js';
import { didYouMean, unknownCommandWords } from '../unknown-command.js';

const commandNotFound: Hook<'command_not_found'> = async function (options) {
  const { config } = options;
  if (options.id === '-h') {
    const HelpClass = await loadHelpClass(config);
    await new HelpClass(config).showHelp(options.argv ?? []);
    return;
  }
  const words = options.id.split(':');
  // The longest leading words that name a command: the rest are arguments it does not take.
  let known = 0;
  for (let n = words.length - 1; n > 0 && known === 0; n -= 1) if (config.findCommand(words.slice(0, n).join(':'))) known = n;
  const error =
    known > 0
      ? usageError('usage', `Unexpected argument: ${words.slice(known).join(' ')} (gobstopper ${words.slice(0, known).join(' ')} --help lists what it takes)`)
      : options.id.startsWith('-')
        ? usageError('usage', `'${options.id}' is a flag: flags go after the command, as in gobstopper detect --json (gobstopper --help lists the commands)`)
        : unknownCommand(config, words);
  process.exitCode = error.exit;
  // `gobstopper --json detect` reaches here with --json as the id: the script asked for JSON all the same.
  if ([options.id, ...(options.argv ?? [])].includes('--json')) process.stdout.write(terminalSafeJson(toEnvelope(error)) + '\n');
  else process.stderr.write(terminalSafe(`gobstopper: ${error.message}`) + '\n');
};

function unknownCommand(config: Interfaces.Config, words: string[]) {
  const { typed, suggestion } = unknownCommandWords(config, words);
  return usageError('unknown_command', `unknown command '${typed}'${didYouMean(suggestion)}; gobstopper --help lists the commands`);
}

export default commandNotFound;
