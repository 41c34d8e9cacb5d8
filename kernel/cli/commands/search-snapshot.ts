import { Args, Flags } from '@oclif/core';
import type { SearchSnapshotCommandOutput } from '../../../schemas/generated/types.js';
import { vaultLayout } from '../../vault/layout.js';
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS, searchSnapshot } from '../../vault/search.js';
import { formatCount } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';

export type SearchSnapshotResult = SearchSnapshotCommandOutput;

export default class SearchSnapshot extends BaseCommand<SearchSnapshotResult> {
  static override summary = 'Find which records of a snapshot contain a literal string (references only).';
  static override description =
    'Case-sensitive literal match over every decoded JSON string value of every record, at any depth (so tool outputs and replacement_history count). ' +
    'Reports record indexes, record hashes and match counts, never content and never the query; read a record with read-snapshot. ' +
    'Records that are not UTF-8 JSON are counted as unsearchable. Needs the full 64-hex snapshot id.';
  static override examples = [
    '<%= config.bin %> search-snapshot 3f9c0a5e…(64 hex) --query "ECONNREFUSED"',
    '<%= config.bin %> search-snapshot 3f9c0a5e…(64 hex) --query "src/parser.ts" --limit 50 --json',
  ];
  static override args = {
    sha: Args.string({ description: "Full 64-hex snapshot id (or the digest of the archived bytes: a receipt's snapshot_sha256 or output_sha256, show's source sha256); vault --json and history --json print it.", required: true }),
  };
  static override flags = {
    query: Flags.string({ description: 'Literal to find (1-1024 UTF-8 bytes, case-sensitive).', required: true }),
    limit: Flags.integer({ description: `Matching records to list (1-${MAX_SEARCH_RESULTS}).`, default: DEFAULT_SEARCH_RESULTS }),
  };

  async run(): Promise<SearchSnapshotResult> {
    const { args, flags } = await this.parse(SearchSnapshot);
    const result = await searchSnapshot(vaultLayout(process.env), args.sha, flags.query, flags.limit);
    this.say(
      `${formatCount(result.total_matches)} match(es) in ${formatCount(result.matched_records)} record(s)` +
        (result.truncated ? `, first ${result.matches.length} listed` : '') +
        (result.unsearchable_records > 0 ? `; ${formatCount(result.unsearchable_records)} record(s) are not JSON and were not searched` : ''),
    );
    if (result.matches.length > 0) {
      // Records count from 0 (read-snapshot --record); lines from 1, as plan and verify print them.
      const rows = result.matches.map((m) => [String(m.record_index), String(m.record_index + 1), formatCount(m.match_count), formatCount(m.record_bytes), m.record_sha256]);
      // The record hash only tells records apart (read-snapshot takes the index), so on a narrow
      // terminal it gives up width; --json keeps it whole.
      this.sayTable(
        [{ header: 'RECORD', align: 'right' }, { header: 'LINE', align: 'right' }, { header: 'MATCHES', align: 'right' }, { header: 'BYTES', align: 'right' }, { header: 'RECORD SHA256', fit: 'middle', minWidth: 16 }],
        rows,
      );
      this.say(`read one: gobstopper read-snapshot ${result.snapshot_sha256} --record ${result.matches[0]!.record_index}`);
    }
    return result;
  }
}
