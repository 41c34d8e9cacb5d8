import { Args, Flags } from '@oclif/core';
import { withRuntime } from '../../services/runtime.js';
import { undo, type UndoResult } from '../../services/undo.js';
import { printableText } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { resumeLines } from '../render/resume-lines.js';
import { homeFlags, providerHomes } from '../session-flags.js';

export default class Undo extends BaseCommand<UndoResult> {
  static override summary = 'Restore an archived snapshot into a new fork (never over an existing file).';
  static override description = `<target> is a session (its newest archived state is restored, passing over pre-undo ones: the file as an earlier undo found it, which --sha restores), a fork made by apply (the source it was made from is restored), a snapshot id from gobstopper history (16 or more hex characters, as show takes one; a receipt's snapshot_sha256 names its snapshot too), or a published fork's own retained snapshot (a receipt's output_manifest_sha256, which recall prints: the fork is restored). With --sha the snapshot must be one of <target>'s. The restored bytes get a new session id and are published beside the original; the current file, if it still exists, is archived first (as pre-undo) unless those bytes are in the vault already, and the id of its snapshot is printed. A snapshot whose index line was lost (a damaged index repaired by deleting lines) is restored when a receipt in the vault names it and records exactly the bytes it holds (under --json, named_by_operation says which); once the restore is published (or an earlier one is returned), that state's index line is written back as snapshot writes one, so history lists it and undo <session> can pick it again (under --json, indexed_again: true; if that write fails the restore still stands, a warning says why and index_line_not_written carries it). Undoing the same snapshot again returns the copy already restored while it is unchanged (under --json, reused: true) and publishes nothing. A state no client would resume (one with verify errors, a sub-agent's transcript, a composite) is refused; gobstopper export writes its bytes as they are. On a terminal a status line shows which step is running.`;
  static override examples = ['<%= config.bin %> undo 7d3f', '<%= config.bin %> undo 7d3f --sha 9b1c04', '<%= config.bin %> undo 9b1c04e7…(64 hex)'];
  static override args = { target: Args.string({ description: 'Session id or prefix, fork id, transcript path, or snapshot id.', required: true }) };
  static override flags = { sha: Flags.string({ summary: 'Restore this snapshot (full id or unique prefix) of the session; a snapshot of another session is refused.' }), ...homeFlags };

  async run(): Promise<UndoResult> {
    const { args, flags } = await this.parse(Undo);
    const status = this.statusLine();
    status.show('undo: restoring the snapshot…');
    const result = await withRuntime({ homes: providerHomes(flags) }, (rt) => undo(rt, args.target, { sha: flags.sha, onStep: (step) => status.show(`undo: ${step} the restored copy…`) })).finally(() => status.clear());
    const e = result.restored;
    // The label is the archiving's (the strategy an apply was about to run, 'snapshot', 'pre-undo'), not
    // a description of the bytes, which are the session as it was before any of it.
    this.say(`restored snapshot ${e.sha256.slice(0, 16)} (${e.bytes.toLocaleString('en-US')} bytes, archived with label '${e.strategy}') of ${e.provider} ${e.session_id}`);
    if (result.named_by_operation) this.say(`the vault index has no line for it; the receipt of operation ${result.named_by_operation.slice(0, 16)} names it as a state of ${printableText(e.path)}`);
    if (result.indexed_again) this.say(`indexed again: its line is back in the vault index (gobstopper history ${e.session_id} lists it)`);
    if (result.index_line_not_written) this.warning(`the restore is published, but its line could not be written back to the vault index: ${result.index_line_not_written}; run the same undo again to write it`);
    // apply publishes forks, so the session named is often unchanged since its snapshot.
    if (result.pre_undo_snapshot === e.sha256) this.say(`${printableText(e.path)} is unchanged since that snapshot`);
    else if (result.pre_undo_snapshot) this.say(`the current file is archived as ${result.pre_undo_snapshot}`);
    this.say(result.reused ? `already restored, unchanged since: ${printableText(result.receipt.path)}` : `restored copy ${printableText(result.receipt.path)}`);
    this.sayResume(resumeLines('resume', result.receipt));
    return result;
  }
}
