import { Flags } from '@oclif/core';
import type { RecallCommandOutput, RecallRow } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, recallCards } from '../../vault/recall.js';
import { formatTs, printableText, shorten } from '../../vault/human.js';
import { BaseCommand } from '../base-command.js';

export type RecallResult = RecallCommandOutput;

function describeRow(row: RecallRow): string[] {
  const d = row.digest;
  const lines = [`${row.provider} ${row.session_id}  record ${row.record_index}  ${formatTs(row.ts)} UTC  score ${row.score}`];
  const add = (label: string, value: string | null | undefined) => {
    if (value) lines.push(`  ${label}: ${shorten(printableText(value), 200)}`);
  };
  add('goal', d.goal);
  add('summary', d.summary);
  add('current', d.current_work);
  for (const [label, list] of [['files', d.files_touched], ['decisions', d.decisions], ['open tasks', d.open_tasks], ['errors', d.errors]] as const) {
    if (list && list.length > 0) add(label, list.join('; '));
  }
  // The full id: read-snapshot takes nothing shorter.
  lines.push(`  read it: gobstopper read-snapshot ${row.snapshot_sha} --record ${row.record_index}`);
  return lines;
}

export default class Recall extends BaseCommand<RecallResult> {
  static override summary = 'Find state-card digests across every archived session.';
  static override description =
    'Looks for state cards (the digests a compaction leaves in a session) in every archived snapshot, whatever the provider. ' +
    'With --query, cards are ranked by case-insensitive occurrences of the query across their fields and cards without it are dropped; ties go to the newest. ' +
    'A card archived in several states of a session is listed once, from its newest snapshot.';
  static override examples = ['<%= config.bin %> recall --query parser', '<%= config.bin %> recall --query "rate limit" --limit 5 --json'];
  static override flags = {
    query: Flags.string({ description: 'words to rank cards by (case-insensitive)' }),
    limit: Flags.integer({ description: `cards to show (1-${MAX_RECALL_LIMIT})`, default: DEFAULT_RECALL_LIMIT }),
    session: Flags.string({ description: 'only sessions whose id starts with this' }),
  };

  async run(): Promise<RecallResult> {
    const { flags } = await this.parse(Recall);
    const rows = await recallCards(vaultLayout(process.env), { query: flags.query, limit: flags.limit, session: flags.session });
    if (rows.length === 0) {
      this.say('no state-card digests found');
      return rows;
    }
    this.say(`found ${rows.length} state-card digest(s)`);
    for (const row of rows) {
      this.say('');
      for (const line of describeRow(row)) this.say(line);
    }
    return rows;
  }
}
