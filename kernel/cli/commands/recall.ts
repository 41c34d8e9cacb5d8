import { Flags } from '@oclif/core';
import type { RecallCommandOutput, RecallRow } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { compactedForksOf } from '../../vault/compacted-forks.js';
import { DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, recallCards, type RecallRequest } from '../../vault/recall.js';
import { formatCount, formatTs, printableText, shorten } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';

export type RecallResult = RecallCommandOutput;

/** Field values are cut to fit `width` when the output has one (a terminal or COLUMNS), else to 200 characters. */
function describeRow(row: RecallRow, ranked: boolean, width: number | undefined): string[] {
  const d = row.digest;
  // Without a query every card scores 0: the score says nothing then.
  const score = ranked ? `, score ${row.score}` : '';
  const lines = [`${row.provider} ${row.session_id}`, `  record ${row.record_index}, archived ${formatTs(row.ts)} UTC${score}`];
  const add = (label: string, value: string | null | undefined) => {
    const room = width === undefined ? 200 : Math.max(20, width - label.length - 4);
    if (value) lines.push(`  ${label}: ${shorten(printableText(value), room)}`);
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
    'A card archived in several states of a session is listed once, from its newest snapshot. ' +
    "A compaction's card is in the fork it published, under the fork's id: --session with the compacted session's id finds none, and then names the forks that hold some. " +
    "Archiving a snapshot records its cards in a card file, which recall reads instead of the snapshot; a snapshot archived before card files existed (or whose card file was deleted) is read whole once, and recall then writes its card file.";
  static override examples = ['<%= config.bin %> recall --query parser', '<%= config.bin %> recall --query "rate limit" --limit 5 --json', '<%= config.bin %> recall --sha 3f9c0a5e'];
  static override flags = {
    query: Flags.string({ description: 'A phrase to rank cards by, matched as one literal string (case-insensitive); cards without it are dropped.' }),
    limit: Flags.integer({ description: `Cards to show (1-${MAX_RECALL_LIMIT}).`, default: DEFAULT_RECALL_LIMIT }),
    session: Flags.string({ description: 'Only sessions whose id starts with this.' }),
    sha: Flags.string({ description: 'Only this snapshot: its full id or a unique prefix of at least 4 hex characters (history and vault list them).' }),
  };

  async run(): Promise<RecallResult> {
    const { flags } = await this.parse(Recall);
    const request = { query: flags.query, limit: flags.limit, session: flags.session, sha: flags.sha };
    const { cards: rows, found } = await recallCards(vaultLayout(process.env), request, process.env, (w) => this.warning(w));
    if (rows.length === 0) {
      const scope = flags.sha !== undefined ? ` in snapshot ${flags.sha}` : flags.session === undefined ? '' : ` of sessions starting with '${flags.session}'`;
      const none = flags.sha !== undefined ? `snapshot ${flags.sha} holds no state-card digest` : `no state-card digests found in the vault${scope}`;
      this.say(flags.query === undefined ? none : `no state-card digest${scope} mentions '${flags.query}'`);
      if (flags.session !== undefined && flags.sha === undefined) await this.pointToForks(flags.session, request);
      return rows;
    }
    this.say(`found ${formatCount(found)} state-card digest(s)` + (found > rows.length ? `, first ${rows.length} listed` : ''));
    const width = this.tableWidth();
    for (const row of rows) {
      this.say('');
      for (const line of describeRow(row, flags.query !== undefined, width)) this.say(line);
    }
    return rows;
  }

  /**
   * A compaction's card is in the fork it published, under the fork's id: asked for the compacted
   * session, say which of its forks hold matching cards and how to list them.
   */
  private async pointToForks(session: string, request: RecallRequest): Promise<void> {
    const layout = vaultLayout(process.env);
    const holding: Array<{ fork: string; found: number }> = [];
    for (const fork of await compactedForksOf(layout, session)) {
      const { found } = await recallCards(layout, { ...request, session: fork, limit: 1 }, process.env);
      if (found > 0) holding.push({ fork, found });
    }
    if (holding.length === 0) return;
    const more = holding.length > 3 ? ` (the first 3 of ${holding.length} listed)` : '';
    this.sayProse(`compacting it put state cards in the forks it published, which hold them under their own ids${more}:`);
    // Each on a line of its own: a command to copy must not be wrapped.
    for (const { fork, found } of holding.slice(0, 3)) this.say(`  gobstopper recall --session ${fork}   # ${formatCount(found)} ${request.query === undefined ? '' : 'matching '}card(s)`);
  }
}
