import { Args, Flags } from '@oclif/core';
import { withRuntime } from '../../services/runtime.js';
import { snapshotSession } from '../../services/snapshot.js';
import { formatCount, formatTs } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { homeFlags, providerHomes } from '../session-flags.js';

type SnapshotResult = Awaited<ReturnType<typeof snapshotSession>>;

export default class Snapshot extends BaseCommand<SnapshotResult> {
  static override summary = 'Archive a session into the vault without compacting it.';
  static override description = `Stores the exact bytes of the transcript as deduplicated 1 MiB chunks (an appended session reuses every unchanged chunk), reads them back to check, and records the snapshot in the vault index. Nothing else is written. Bytes the session's newest archived state already holds under the same label add no line: it says already archived (under --json, already_archived: true) and gives that state's line. The transcript is archived as it is, whatever its lines hold: a damaged one (a line that is not JSON or not UTF-8, a record over GOBSTOPPER_MAX_RECORD_BYTES) is kept byte for byte, so it can be put back after a repair goes wrong (gobstopper export writes it out again; undo publishes only states that would resume); only a file over GOBSTOPPER_MAX_TRANSCRIPT_BYTES is refused. verify says what is wrong with it. A session its client is writing to is read up to three times in all, until one read finds it unchanged from start to end.`;
  static override examples = ['<%= config.bin %> snapshot 7d3f', '<%= config.bin %> snapshot 7d3f --label before-refactor'];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = {
    label: Flags.string({ summary: 'Tag for the index line, shown by vault, history, show and undo (default snapshot; letters, digits, _ . : -).' }),
    ...homeFlags,
  };

  async run(): Promise<SnapshotResult> {
    const { args, flags } = await this.parse(Snapshot);
    const result = await withRuntime({ homes: providerHomes(flags) }, (rt) => snapshotSession(rt, args.session, flags.label));
    const { session, entry } = result;
    // A repeat writes no index line: saying "archived" would send the user looking for one in history.
    if (result.already_archived) this.say(`already archived ${session.provider} ${session.session_id}: ${entry.sha256} (unchanged since ${formatTs(entry.ts)} UTC, label ${entry.strategy}; no new line)`);
    else this.say(`archived ${session.provider} ${session.session_id}: ${entry.sha256}`);
    this.say(`${formatCount(entry.bytes)} bytes, ${formatCount(entry.record_count)} records, ${formatCount(result.new_chunk_bytes)} bytes of new chunks`);
    return result;
  }
}
