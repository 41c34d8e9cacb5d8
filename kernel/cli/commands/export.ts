import { Args, Flags } from '@oclif/core';
import type { ExportCommandResult } from '../../../schemas/generated/types.js';
import { usageError } from '../../errors.js';
import { exportSnapshot } from '../../services/export.js';
import { formatCount, printableText } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';

export default class Export extends BaseCommand<ExportCommandResult | null> {
  static override summary = 'Write the exact bytes of an archived state to a new file or a pipe, whatever they hold.';
  static override description =
    '<target> names an archived state as undo takes one: a session (its newest archived state, passing over pre-undo ones), a fork made by apply (the source it was made from), or a snapshot id (16 or more hex characters); with --sha, that snapshot of the session. ' +
    'Unlike undo, which publishes only a state that would resume, export writes any archived state, a damaged one included (a line that is not JSON, a torn last line, a record over the limits), so that a transcript snapshotted before a repair that went wrong can be put back by hand. ' +
    'The bytes are read back from the vault and checked chunk by chunk and against the snapshot\'s sha256. ' +
    '--output names a new file (never overwritten; created with mode 0600 under a hidden name and linked into place when whole). ' +
    'Without --output the bytes go to stdout, which must not be a terminal; --json needs --output.';
  static override examples = [
    '<%= config.bin %> export 7d3f --output ~/before-repair.jsonl',
    '<%= config.bin %> export 9b1c04e7…(64 hex) > restored.jsonl',
    '<%= config.bin %> export 7d3f --sha 9b1c04 --output copy.jsonl --json',
  ];
  static override args = { target: Args.string({ description: 'Session id or prefix, fork id, transcript path, or snapshot id.', required: true }) };
  static override flags = {
    sha: Flags.string({ summary: 'Export this snapshot (full id or unique prefix) of the session; a snapshot of another session is refused.' }),
    output: Flags.string({ char: 'o', summary: 'A new file to write the bytes to (never overwritten).', helpValue: '<new file>' }),
  };

  async run(): Promise<ExportCommandResult | null> {
    const { args, flags } = await this.parse(Export);
    if (flags.output === undefined) {
      if (this.jsonEnabled()) throw usageError('output_required', 'export --json prints its answer on stdout, so the bytes need a file: add --output <new file>');
      if (process.stdout.isTTY) throw usageError('output_required', 'export writes transcript bytes, not text for a terminal: add --output <new file>, or send stdout to a file or a pipe');
      await exportSnapshot(process.env, args.target, { sha: flags.sha, write: writeToStdout }).catch((error: unknown) => {
        // A reader that closed the pipe (`| head`) took what it wanted; that is not a failure.
        if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
      });
      return null;
    }
    const result = await exportSnapshot(process.env, args.target, { sha: flags.sha, output: flags.output });
    const e = result.snapshot;
    this.say(`exported snapshot ${e.sha256.slice(0, 16)} (${formatCount(result.bytes)} bytes, archived with label '${e.strategy}') of ${e.provider} ${e.session_id}`);
    this.say(`wrote ${printableText(result.output!)}`);
    return { ...result, output: result.output! };
  }
}

/** Resolves once stdout is done with the chunk, whose buffer the vault reader then reuses. */
function writeToStdout(chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())));
}
