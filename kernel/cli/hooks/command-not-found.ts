/**
 * `gobstopper explain extra` reaches oclif as a command named `explain:extra`. Left to itself,
 * oclif answers that with its own multi-line error that ignores `--json`; this hook answers as the
 * commands do: one line on stderr, or one JSON object on stdout, and exit status 2.
 */
import type { Hook } from '@oclif/core';
import { usageError } from '../../errors.js';
import { toEnvelope } from '../base-command.js';

const commandNotFound: Hook<'command_not_found'> = async function (options) {
  const words = options.id.split(':');
  // The longest leading words that name a command: the rest are arguments it does not take.
  let known = 0;
  for (let n = words.length - 1; n > 0 && known === 0; n -= 1) if (options.config.findCommand(words.slice(0, n).join(':'))) known = n;
  const error =
    known > 0
      ? usageError('usage', `Unexpected argument: ${words.slice(known).join(' ')} (gobstopper ${words.slice(0, known).join(' ')} --help lists what it takes)`)
      : usageError('unknown_command', `unknown command '${words.join(' ')}'; gobstopper --help lists the commands`);
  process.exitCode = error.exit;
  if ((options.argv ?? []).includes('--json')) process.stdout.write(JSON.stringify(toEnvelope(error)) + '\n');
  else process.stderr.write(`gobstopper: ${error.message}\n`);
};

export default commandNotFound;
