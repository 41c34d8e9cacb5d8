import { Args } from '@oclif/core';
import type { VaultCommandOutput } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { listSnapshots, unlistedSnapshots } from '../../vault/list.js';
import { formatBytes, formatCount, formatTs } from '../../vault/human.js';
import { BaseCommand } from '../base-command.js';

export type VaultResult = VaultCommandOutput;

export default class Vault extends BaseCommand<VaultResult> {
  static override summary = 'List archived snapshots, newest first.';
  static override description =
    'Every archived state in the vault (<data>/vault, where <data> is $XDG_DATA_HOME/gobstopper or ~/.local/share/gobstopper), newest first by the order it was archived. ' +
    'Give a session-id prefix or a transcript path to list only that session. The ids shown are prefixes, which show and diff take; search-snapshot and read-snapshot need the full id, which --json prints (and gobstopper history, where the terminal is wide enough).';
  static override examples = ['<%= config.bin %> vault', '<%= config.bin %> vault 0199a2f1', '<%= config.bin %> vault ~/.claude/projects/my-app/0199a2f1-….jsonl --json'];
  static override args = {
    session: Args.string({ description: 'Session-id prefix or transcript path.', required: false }),
  };

  async run(): Promise<VaultResult> {
    const { args } = await this.parse(Vault);
    const layout = vaultLayout(process.env);
    const entries = await listSnapshots(layout, args.session);
    // Only the whole listing can tell what it leaves out; a damaged receipt is left to the commands that read receipts.
    const unlisted = args.session === undefined && !this.jsonEnabled() ? await unlistedSnapshots(layout, entries).catch(() => 0) : 0;
    const sayUnlisted = () => {
      if (unlisted > 0) this.say(`${unlisted} more snapshot(s) have no index line (a failed apply's candidate, or a line removed from a damaged index): gobstopper prune lists their ids, and show takes them.`);
    };
    if (entries.length === 0) {
      this.say(args.session ? `no snapshots of sessions matching '${args.session}'` : `no snapshots in the vault yet (${layout.root})`);
      sayUnlisted();
      return entries;
    }
    const rows = entries.map((e) => [e.sha256.slice(0, 16), e.provider, formatBytes(e.bytes), formatCount(e.record_count), e.strategy, formatTs(e.ts), e.session_id, e.path]);
    this.sayTable(
      [
        { header: 'SHA256' },
        { header: 'PROVIDER', optional: true },
        { header: 'BYTES', align: 'right' },
        { header: 'RECORDS', align: 'right' },
        { header: 'STRATEGY' },
        { header: 'ARCHIVED (UTC)' },
        // Which session a snapshot belongs to outlasts its path: the path goes first when narrow.
        { header: 'SESSION', fit: 'end', minWidth: 13, maxWidth: 38 },
        { header: 'PATH', fit: 'middle', optional: true },
      ],
      rows,
    );
    this.say(`${entries.length} snapshot(s)`);
    sayUnlisted();
    return entries;
  }
}
