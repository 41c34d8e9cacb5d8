/**
 * `gobstopper explain extra` reaches oclif as a command named `explain:extra`. Left to itself,
 * oclif answers that with its own multi-line error that ignores `--json`; this hook answers as the
 * commands do: one line on stderr, or one JSON object on stdout, and exit status 2. A typo gets the
 * nearest command, `-h` the help, and a flag put before the command says where flags go.
 */
import { loadHelpClass, toConfiguredId, type Hook, type Interfaces } from '@oclif/core';
import { usageError } from '../../errors.js';
import { toEnvelope } from '../base-command.js';
import { inHiddenGroup } from '../help-class.js';
import { terminalSafe } from '../../text/human.js';
import { terminalSafeJson } from '../../text/json-output.js';
import { editDistance, nearEnough } from '../../text/edit-distance.js';

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
  if ((options.argv ?? []).includes('--json')) process.stdout.write(terminalSafeJson(toEnvelope(error)) + '\n');
  else process.stderr.write(terminalSafe(`gobstopper: ${error.message}`) + '\n');
};

/**
 * The words that were meant as a command, and the nearest one: `aply 7d3f` is the command `aply`
 * (did you mean apply?) with an argument, `plugin lst` a mistyped `plugin list`. Of the leading
 * words, the run nearest to a command wins, the shorter run on a tie, so an argument is never
 * taken for part of the command (`plugin ad .` is `plugin ad`). Without a near command the first
 * word is the unknown one, or the first two after a topic (`plugin nosuch`).
 */
function unknownCommand(config: Interfaces.Config, words: string[]) {
  let best: { typed: string; id: string; distance: number } | null = null;
  for (let n = 1; n <= words.length; n += 1) {
    const typed = words.slice(0, n).join(' ');
    const near = nearestCommand(config, typed);
    if (near && (!best || near.distance < best.distance)) best = { typed, ...near };
  }
  if (best) return usageError('unknown_command', `unknown command '${best.typed}' (did you mean '${best.id}'?); gobstopper --help lists the commands`);
  const named = words.length > 1 && config.topics.some((t) => t.name === words[0]) ? words.slice(0, 2) : words.slice(0, 1);
  return usageError('unknown_command', `unknown command '${named.join(' ')}'; gobstopper --help lists the commands`);
}

/** The visible command nearest to what was typed, when it is near enough to suggest. */
function nearestCommand(config: Interfaces.Config, typed: string): { id: string; distance: number } | null {
  let best: { id: string; distance: number } | null = null;
  for (const command of config.commands) {
    if (command.hidden || inHiddenGroup(config, command.id)) continue;
    const id = toConfiguredId(command.id, config);
    const distance = editDistance(typed, id);
    if (!best || distance < best.distance) best = { id, distance };
  }
  return best && nearEnough(best.distance, best.id) ? best : null;
}

export default commandNotFound;
