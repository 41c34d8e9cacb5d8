import { Args, Flags } from '@oclif/core';
import type { VaultCommandOutput, VaultVerifyCommandOutput } from '../../../schemas/generated/types.js';
import { vaultLayout, type VaultLayout } from '../../vault/layout.js';
import { GobstopperError } from '../../errors.js';
import { wrapText } from '../../text/wrap.js';
import { forkHintFor } from '../../vault/fork-hint.js';
import { verifyVault, type VerifyProgress } from '../../vault/integrity.js';
import { distinctStates, REARCHIVED_NOTE, listSnapshots, unlistedSnapshots } from '../../vault/list.js';
import { formatBytes, formatCount, formatTs } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { labelMeaning } from '../render/label-help.js';

export type VaultResult = VaultCommandOutput | VaultVerifyCommandOutput;

export default class Vault extends BaseCommand<VaultResult> {
  static override summary = 'List archived snapshots, newest first.';
  static override description =
    'Every archived state in the vault (<data>/vault, where <data> is $XDG_DATA_HOME/gobstopper or ~/.local/share/gobstopper), newest first by the order it was archived. ' +
    'Give a session-id prefix or a transcript path to list only that session. The ids are shown whole where the terminal is wide enough and cut to a prefix where it is not (show, diff and undo take a prefix); search-snapshot and read-snapshot need the full id, which --json always prints. ' + labelMeaning('The LABEL column') + ' ' +
    'With --verify, every snapshot the listing shows is read back as undo would read it, and without a session so is every stored snapshot no index line names: the manifest, every chunk against its name, and the whole against the size and digest the manifest records; the records are counted on the way, and each index line\'s record_count must be that count. ' +
    'Every operation receipt (<data>/vault/operations/<operation>.json) is read as prune, apply and undo read it, and the snapshots it names must be stored; with a session, only the receipts of that session and every one that cannot be read (its session cannot be told). ' +
    'Each damaged snapshot gets a line saying what is wrong (the first problem met; a wrong record_count names the index lines, both counts and the repair), and each damaged receipt a line naming its file, the first problem and the repair, as the commands that refuse it say them; then how many snapshots were read back (those listed, forks\' retained copies, unindexed) and how many are damaged, and how many receipts were read and how many are damaged; it exits 1 when any is damaged (gobstopper show <id> names the snapshot file to repair). A fork\'s retained copy named only by a receipt that cannot be read is counted as unindexed. An index that cannot be read is said first, with its repair, and every stored snapshot is still read back (as unindexed); that exits 1 too. ' +
    'The check writes nothing and takes no lock, so it runs on a read-only or copied vault; a snapshot a prune removes while it runs is left out.';
  static override examples = [
    '<%= config.bin %> vault',
    '<%= config.bin %> vault 0199a2f1',
    '<%= config.bin %> vault ~/.claude/projects/my-app/0199a2f1-….jsonl --json',
    '<%= config.bin %> vault --verify',
    '<%= config.bin %> vault 0199a2f1 --verify --json',
  ];
  static override args = {
    session: Args.string({ description: 'Session-id prefix or transcript path.', required: false }),
  };
  static override flags = {
    verify: Flags.boolean({ description: 'Read every snapshot and receipt back (only the session\'s with SESSION) and report the damaged ones instead of listing them.', default: false }),
  };

  async run(): Promise<VaultResult> {
    const { args, flags } = await this.parse(Vault);
    const layout = vaultLayout(process.env);
    if (flags.verify) return this.verify(layout, args.session);
    const entries = await listSnapshots(layout, args.session);
    // Only the whole listing can tell what it leaves out; a damaged receipt is left to the commands that read receipts.
    const unlisted = args.session === undefined && !this.jsonEnabled() ? await unlistedSnapshots(layout, entries).catch(() => []) : [];
    if (entries.length === 0) {
      if (unlisted.length > 0) this.say('the vault index lists no snapshots');
      else if (args.session === undefined) this.say(`no snapshots in the vault yet (${layout.root})`);
      else {
        const cause = new GobstopperError('session_not_archived', `no snapshots of sessions matching '${args.session}'`);
        this.say((await forkHintFor(layout, args.session, cause))?.message ?? cause.message);
      }
      this.sayUnlisted(unlisted);
      return entries;
    }
    const rows = entries.map((e) => [e.sha256, e.provider, formatBytes(e.bytes), formatCount(e.record_count), e.strategy, formatTs(e.ts), e.session_id, e.path]);
    this.sayTable(
      [
        // As history prints it: whole where there is room (search-snapshot and read-snapshot take
        // nothing shorter), 16 characters or more (show, diff and undo) on a narrow terminal.
        { header: 'SHA256', fit: 'end', minWidth: 17 },
        { header: 'PROVIDER', optional: true },
        { header: 'BYTES', align: 'right' },
        { header: 'RECORDS', align: 'right' },
        { header: 'LABEL' },
        { header: 'ARCHIVED (UTC)' },
        // Which session a snapshot belongs to outlasts its path: the path goes first when narrow.
        { header: 'SESSION', fit: 'end', minWidth: 13, maxWidth: 38 },
        { header: 'PATH', fit: 'middle', optional: true },
      ],
      rows,
    );
    const states = distinctStates(entries);
    this.say(states === entries.length ? `${states} snapshot(s)` : `${states} snapshot(s) in ${entries.length} archivings (${REARCHIVED_NOTE})`);
    this.sayUnlisted(unlisted);
    return entries;
  }

  private async verify(layout: VaultLayout, session: string | undefined): Promise<VaultVerifyCommandOutput> {
    const status = this.statusLine();
    let result: VaultVerifyCommandOutput;
    try {
      result = await verifyVault(layout, { session, onProgress: (p) => status.show(progressText(p)) });
    } finally {
      status.clear();
    }
    if (result.index_problem) {
      this.sayProse(`index unreadable, so every stored snapshot was read back as one no index line names: ${result.index_problem.message}`);
      process.exitCode = 1;
    }
    for (const d of result.damaged) {
      const whose = d.session_id === null ? 'no index line' : `${d.provider} ${d.session_id}`;
      this.say(`damaged ${d.sha256.slice(0, 16)} (${whose}): ${d.problem.message}`);
    }
    for (const d of result.damaged_receipts) {
      if (d.operation === null) this.say(`damaged receipts directory: ${d.problem.message}`);
      else this.say(`damaged receipt ${d.operation.slice(0, 16)} (${d.session_id === null ? 'session unknown' : `session ${d.session_id}`}): ${d.problem.message}`);
    }
    const unknown = result.damaged_receipts.filter((d) => d.session_id === null);
    if (session !== undefined && unknown.length > 0) {
      this.sayProse(`${unknown.length === 1 ? 'a receipt that cannot be read is' : 'receipts that cannot be read are'} checked whatever the session: which session ${unknown.length === 1 ? 'it belongs' : 'they belong'} to cannot be told`);
    }
    for (const d of result.damaged_card_files) this.say(`damaged card file: ${d.problem.message}`);
    this.sayUnlisted(result.unindexed_snapshots, unknown.length > 0);
    this.say(`${readBack(result)}: ${result.damaged.length} damaged${receiptsRead(result)}`);
    if (result.damaged.length > 0) {
      // A wrong record_count's line already says its repair; show reads the bytes and agrees with them.
      if (result.damaged.some((d) => d.problem.code !== 'record_count_mismatch')) this.say('gobstopper show <id> names the file to repair and how');
      process.exitCode = 1;
    }
    if (result.damaged_receipts.length > 0) {
      this.sayProse('prune refuses while a receipt is damaged, as undo and a new run of its operation do when they read it; each damaged receipt\'s line says the repair');
      process.exitCode = 1;
    }
    if (result.damaged_card_files.length > 0) {
      this.sayProse('recall reads a snapshot itself where its card file cannot be used, so no card is lost, and then writes the card file again; deleting a damaged card file is always safe');
      process.exitCode = 1;
    }
    return result;
  }

  /**
   * Names the stored snapshots the index does not list (show takes these ids; undo needs an index
   * line to know the session). A receipt that cannot be read may name one as its fork's copy.
   */
  private sayUnlisted(ids: readonly string[], receiptUnreadable = false): void {
    if (ids.length === 0) return;
    const shown = ids.slice(0, 8).map((sha) => sha.slice(0, 16)).join(', ');
    const more = ids.length > 8 ? `, and ${ids.length - 8} more (gobstopper prune lists those no receipt names)` : '';
    const what = ids.length === 1 ? 'stored snapshot has no index line' : 'stored snapshots have no index line';
    for (const line of wrapText(`${ids.length} ${what} (${receiptUnreadable ? "a failed apply's candidate, a line removed from a damaged index, or a fork's retained copy named by a receipt that cannot be read" : "a failed apply's candidate, or a line removed from a damaged index"}); show takes their ids: ${shown}${more}`, this.tableWidth())) this.say(line);
  }
}

/**
 * What was read back, split the way the user sees the vault: the listing counts only the snapshots
 * an index line names, so a total that also holds forks' copies and unindexed ones says which.
 */
function readBack(result: VaultVerifyCommandOutput): string {
  const parts = [`${result.listed} listed`];
  if (result.retained > 0) parts.push(result.retained === 1 ? "1 a fork's retained copy" : `${result.retained} forks' retained copies`);
  if (result.unindexed > 0) parts.push(`${result.unindexed} unindexed`);
  return `${result.verified} stored ${result.verified === 1 ? 'snapshot' : 'snapshots'} read back (${parts.join(', ')})`;
}

/** How many receipts were read and how many are damaged; nothing for a vault without any. */
function receiptsRead(result: VaultVerifyCommandOutput): string {
  if (result.damaged_receipts.some((d) => d.operation === null)) return '; the receipts could not be listed';
  if (result.receipts === 0) return '';
  return `; ${result.receipts} ${result.receipts === 1 ? 'receipt' : 'receipts'} read: ${result.damaged_receipts.length} damaged`;
}

function progressText(p: VerifyProgress): string {
  const bytes = p.bytes > 0 ? `: ${formatBytes(p.read)} of ${formatBytes(p.bytes)}` : '';
  return `verifying snapshot ${p.done + 1} of ${p.total} (${p.sha256.slice(0, 16)})${bytes}`;
}
