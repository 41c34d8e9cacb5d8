import { Args } from '@oclif/core';
import type { HistoryCommandOutput } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { distinctStates, REARCHIVED_NOTE, sessionHistory } from '../../vault/list.js';
import { formatBytes, formatCount, formatTs } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { labelMeaning } from '../render/label-help.js';

export type HistoryResult = HistoryCommandOutput;

export default class History extends BaseCommand<HistoryResult> {
  static override summary = 'Every archived state of one session, newest first.';
  static override description =
    'Looks the session up in the vault index by session-id prefix or by transcript path, so sessions whose files are gone still have a history. ' +
    'A prefix that matches several sessions, or an id archived from two files that both exist (a copied project folder), is refused as apply refuses it (exit 2, ambiguous_session), listing each with its path: pass the path. A file that has moved (its old path is gone) keeps one history, found by its id or by its new path. A fork gobstopper published is not archived itself: asked for one, history fails (exit 1; under --json the error is session_not_archived with details.source_session_id) naming the session it was made from, whose history it is. ' + labelMeaning('The LABEL column');
  static override examples = ['<%= config.bin %> history 0199a2f1', '<%= config.bin %> history ~/.codex/sessions/2026/01/31/rollout-….jsonl --json'];
  static override args = {
    session: Args.string({ description: 'Session-id prefix or transcript path.', required: true }),
  };

  async run(): Promise<HistoryResult> {
    const { args } = await this.parse(History);
    const entries = await sessionHistory(vaultLayout(process.env), args.session);
    const first = entries[0]!;
    const states = distinctStates(entries);
    const again = states === entries.length ? '' : `, archived ${entries.length} times (${REARCHIVED_NOTE})`;
    this.say(`${first.session_id} (${first.provider}): ${states} archived state(s)${again}`);
    const rows = entries.map((e) => [e.sha256, formatBytes(e.bytes), formatCount(e.record_count), e.strategy, formatTs(e.ts), e.path]);
    // The full id where there is room (search-snapshot and read-snapshot take nothing shorter; --json
    // always has it); a 16-character prefix, which show, diff and undo take, on a narrow terminal.
    this.sayTable(
      [
        { header: 'SHA256', fit: 'end', minWidth: 17 },
        { header: 'BYTES', align: 'right' },
        { header: 'RECORDS', align: 'right' },
        { header: 'LABEL' },
        { header: 'ARCHIVED (UTC)' },
        { header: 'PATH', fit: 'middle', optional: true },
      ],
      rows,
    );
    return entries;
  }
}
