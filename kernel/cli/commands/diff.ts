import { Args } from '@oclif/core';
import type { DiffCommandOutput, DiffPublication } from '../../../schemas/generated/types.js';
import { listReceipts } from '../../publish/receipt.js';
import { diffSnapshots } from '../../vault/diff.js';
import { vaultLayout, type VaultLayout } from '../../vault/layout.js';
import { formatCount } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';

export type DiffResult = DiffCommandOutput;

const SHOWN_HASHES = 10;

const MADE_BY: Record<string, string> = { compact: 'apply', fork: 'fork', restore: 'undo' };

/**
 * Whether one snapshot is what gobstopper published from the other: a fork, a compaction or a
 * restore gives every record its new session id, which is why nearly every record differs. Null
 * for any other pair.
 */
async function publicationOf(layout: VaultLayout, a: string, b: string): Promise<DiffPublication | null> {
  const receipts = await listReceipts(layout).catch(() => []);
  for (const r of receipts) {
    const forward = r.snapshot_manifest_sha256 === a && r.output_manifest_sha256 === b;
    if (!forward && !(r.snapshot_manifest_sha256 === b && r.output_manifest_sha256 === a)) continue;
    return { published: forward ? 'b' : 'a', kind: r.kind, strategy: r.strategy, record_session_id: r.output_session_id };
  }
  return null;
}

function publicationNote(p: DiffPublication): string {
  const from = p.published === 'b' ? 'a' : 'b';
  const what = p.kind === 'compact' ? `${MADE_BY[p.kind]} (${p.strategy})` : MADE_BY[p.kind];
  return `note: ${p.published} is what ${what} published from ${from} under the session id ${p.record_session_id}, which every record carries: records that differ only by it count as added and removed`;
}

export default class Diff extends BaseCommand<DiffResult> {
  static override summary = 'Records added and removed between two snapshots.';
  static override description =
    'Splits both verified snapshots into physical records, hashes each, and reports the records of <b> not in <a> (added) and of <a> not in <b> (removed), with counts by top-level record type. ' +
    'Records are matched one for one: a record repeated more often on one side counts once per extra copy. ' +
    'When one is what apply, fork or undo published from the other, it says so (publication with --json): every record of that one carries the new session id, so nearly every record counts as added and removed. ' +
    'Snapshot ids may be unique hex prefixes of at least 4 characters.';
  static override examples = ['<%= config.bin %> diff 3f9c0a5e 8b21d7c0', '<%= config.bin %> diff 3f9c0a5e 8b21d7c0 --json'];
  static override args = {
    a: Args.string({ description: 'Older snapshot id or prefix.', required: true }),
    b: Args.string({ description: 'Newer snapshot id or prefix.', required: true }),
  };

  async run(): Promise<DiffResult> {
    const { args } = await this.parse(Diff);
    const layout = vaultLayout(process.env);
    const compared = await diffSnapshots(layout, args.a, args.b);
    const result: DiffResult = { ...compared, publication: await publicationOf(layout, compared.sha_a, compared.sha_b) };
    this.say(`a ${result.sha_a}  ${formatCount(result.record_count_a)} records`);
    this.say(`b ${result.sha_b}  ${formatCount(result.record_count_b)} records`);
    this.say(`added ${formatCount(result.added_count)}, removed ${formatCount(result.removed_count)} (records matched one for one by sha256)`);
    if (result.publication) this.say(publicationNote(result.publication));
    this.say('');
    const types = [...new Set([...Object.keys(result.type_summary_a), ...Object.keys(result.type_summary_b)])].sort();
    const rows = types.map((t) => [
      t,
      formatCount(result.type_summary_a[t] ?? 0),
      formatCount(result.type_summary_b[t] ?? 0),
      formatCount(result.added_by_type[t] ?? 0),
      formatCount(result.removed_by_type[t] ?? 0),
    ]);
    this.sayTable([{ header: 'TYPE', fit: 'end' }, { header: 'A', align: 'right' }, { header: 'B', align: 'right' }, { header: 'ADDED', align: 'right' }, { header: 'REMOVED', align: 'right' }], rows);
    for (const [label, hashes] of [['added', result.added], ['removed', result.removed]] as const) {
      if (hashes.length === 0) continue;
      this.say('');
      this.say(`${label} records (sha256)${hashes.length > SHOWN_HASHES ? `, first ${SHOWN_HASHES} of ${hashes.length}` : ''}:`);
      for (const h of hashes.slice(0, SHOWN_HASHES)) this.say(`  ${h}`);
    }
    return result;
  }
}
