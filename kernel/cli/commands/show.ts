import { Args } from '@oclif/core';
import type { ShowCommandOutput } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { showSnapshot } from '../../vault/show.js';
import { formatBytes, formatCount, formatPairs, formatTs } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { labelMeaning } from '../render/label-help.js';

export type ShowResult = ShowCommandOutput;

/** The session a snapshot belongs to; a retained output is the published session, named by its operation. */
function sessionLine(result: ShowResult): string {
  if (result.output_of_operation) return `${result.session_id} (the published output of operation ${result.output_of_operation.slice(0, 16)}; retained, not indexed)`;
  if (result.source_of_operation) return `${result.session_id} (named by the receipt of operation ${result.source_of_operation.slice(0, 16)}; its index line is gone, and undo ${result.sha256} writes it back)`;
  return result.session_id ?? '- (not indexed)';
}

export default class Show extends BaseCommand<ShowResult> {
  static override summary = 'Size, record types and label of one snapshot.';
  static override description =
    'A hex string of 16 or more characters is a snapshot id or unique prefix; anything else selects a session (id prefix or path) and shows its newest snapshot, and a shorter hex prefix (4+) that names no session is taken as a snapshot prefix. ' +
    'The snapshot is verified chunk by chunk before anything is reported. A published fork\'s retained copy, which is not indexed, is described by the receipt of the operation that published it (--json: output_of_operation), and a source state whose index line was lost by the receipt of the operation that archived it (--json: source_of_operation). ' +
    labelMeaning('The label line');
  static override examples = ['<%= config.bin %> show 3f9c0a5e1b7d2c44', '<%= config.bin %> show 0199a2f1-… --json'];
  static override args = {
    target: Args.string({ description: 'Snapshot id or prefix (16+ hex characters; 4+ when no session starts with it), or a session id, prefix or transcript path.', required: true }),
  };

  async run(): Promise<ShowResult> {
    const { args } = await this.parse(Show);
    const result = await showSnapshot(vaultLayout(process.env), args.target);
    for (const line of formatPairs([
      ['snapshot', result.sha256],
      ['source sha256', result.source_sha256],
      ['size', `${formatBytes(result.bytes)} (${formatCount(result.bytes)} bytes)`],
      ['records', formatCount(result.record_count)],
      ['provider', result.provider ?? '-'],
      ['session', sessionLine(result)],
      ['label', result.strategy ?? '-'],
      ['archived', result.ts === null ? '-' : `${formatTs(result.ts)} UTC`],
      ['path', result.path ?? '-'],
    ]))
      this.say(line);
    this.say('');
    const rows = Object.entries(result.record_types).map(([type, count]) => [type, formatCount(count)]);
    this.sayTable([{ header: 'TYPE', fit: 'end' }, { header: 'RECORDS', align: 'right' }], rows);
    return result;
  }
}
