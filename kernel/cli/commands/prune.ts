import { Flags } from '@oclif/core';
import type { PruneCommandOutput } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { DEFAULT_PRUNE_KEEP } from '../../vault/limits.js';
import { pruneVault } from '../../vault/prune.js';
import { formatBytes } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';

export type PruneResult = PruneCommandOutput;

/** Snapshots without a line listed by id for people; --json lists every one. */
const UNINDEXED_SHOWN = 10;

export default class Prune extends BaseCommand<PruneResult> {
  static override summary = 'Trim the vault (a dry run unless --apply).';
  static override description =
    'Keeps the newest --keep archived states of every (provider, path, session) stream (distinct snapshots: the same bytes archived again under another label are one state, and all of its index lines stay) and every snapshot an operation receipt or a pin references; ' +
    'everything else is dropped from the index, then the snapshots of the dropped entries and the chunks no remaining snapshot uses are deleted. ' +
    'A snapshot with no index line is kept (a lost line is not a pruned one) unless --include-unindexed, or unless an earlier prune that was stopped had dropped it (it is then finished). ' +
    'With --apply, the temporary files, locks and staging copies of runs that were killed midway are removed too, and so is a fork\'s partial copy such a run left beside the sessions. ' +
    'Every manifest is validated and every kept chunk checked first (its size; and read whole and hashed when its stream is losing a state, so no older copy goes while the kept one is damaged), ' +
    'so a damaged vault is reported and left untouched. Without --apply nothing changes and no lock is taken, so a read-only vault can be previewed.';
  static override examples = ['<%= config.bin %> prune', '<%= config.bin %> prune --keep 3 --apply', '<%= config.bin %> prune --json'];
  static override flags = {
    keep: Flags.integer({ description: 'Archived states to keep per stream.', default: DEFAULT_PRUNE_KEEP }),
    apply: Flags.boolean({ description: 'Actually delete (otherwise only report). --yes is taken for it too.', aliases: ['yes'], default: false }),
    'include-unindexed': Flags.boolean({
      description: 'Also delete snapshots that have no index line and that no receipt or pin references: the bytes of a failed apply\'s candidate, a snapshot interrupted before its line. Use it only when you know no index line was lost: prune cannot tell a snapshot whose line was deleted from one that never had a line, and deletes both.',
      default: false,
    }),
  };

  async run(): Promise<PruneResult> {
    const { flags } = await this.parse(Prune);
    const r = await pruneVault(vaultLayout(process.env), { keep: flags.keep, apply: flags.apply, includeUnindexed: flags['include-unindexed'] });
    const verb = r.dry_run ? 'would drop' : 'dropped';
    this.say(
      `${r.dry_run ? 'plan' : 'pruned'}: ${r.streams} stream(s), keeping ${r.kept_entries} index line(s); ${verb} ${r.dropped_entries}, ` +
        `${r.dry_run ? 'would remove' : 'removed'} ${r.manifests_removed} manifest(s) and ${r.chunks_removed} chunk(s), ${formatBytes(r.bytes_reclaimed)}`,
    );
    if (r.unindexed_kept > 0) {
      this.say(
        `kept ${r.unindexed_kept} snapshot(s) that no index line, receipt or pin names (a failed apply's candidate, or a snapshot whose line was lost); ` +
          '`gobstopper show <id>` reads one, `--include-unindexed` deletes them:',
      );
      const shown = r.unindexed_snapshots.slice(0, UNINDEXED_SHOWN);
      for (const id of shown) this.say(`  ${id}`);
      if (r.unindexed_snapshots.length > shown.length) this.say(`  … and ${r.unindexed_snapshots.length - shown.length} more (--json lists them all)`);
    }
    if (r.dry_run) this.say('dry run only: rerun with --apply to delete');
    return r;
  }
}
