/**
 * `search-snapshot`: which records of one verified snapshot contain a literal string, by index and
 * hash only. Neither content nor the query is echoed, so the answer can be shown to a model or a log
 * without leaking archived text.
 */
import { createHash } from 'node:crypto';
import type { SearchSnapshotCommandOutput, SnapshotSearchMatch } from '../../schemas/generated/types.js';
import { usageError } from '../errors.js';
import { snapshotNotFound } from './errors.js';
import { snapshotIdFor } from './selectors.js';
import { countOccurrences, forEachStringValue, isJsonLine, LiteralPrefilter, parseJsonLine } from './json-text.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { forEachRecord } from './records.js';
import { parseFullSha } from './selectors.js';
import { quotedFlagNumber } from '../text/numbers.js';

export const MAX_QUERY_BYTES = 1024;
export const MAX_SEARCH_RESULTS = 50;
export const DEFAULT_SEARCH_RESULTS = 20;

export type { SearchSnapshotCommandOutput, SnapshotSearchMatch };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function checkQuery(query: string): void {
  const bytes = Buffer.byteLength(query, 'utf8');
  if (bytes < 1 || bytes > MAX_QUERY_BYTES) throw usageError('invalid_query', `--query must be 1-${MAX_QUERY_BYTES} UTF-8 bytes, got ${bytes}`);
  if (LONE_SURROGATE.test(query)) throw usageError('invalid_query', 'query is not valid Unicode text');
}

export function checkLimit(limit: number, max: number, flag = '--limit'): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw usageError('invalid_limit', `${flag} must be a whole number from 1 to ${max}, got ${quotedFlagNumber(limit, 1, max)}`);
}

export async function searchSnapshot(
  layout: VaultLayout,
  snapshot: string,
  query: string,
  limit: number = DEFAULT_SEARCH_RESULTS,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SearchSnapshotCommandOutput> {
  const requested = parseFullSha(snapshot);
  checkQuery(query);
  checkLimit(limit, MAX_SEARCH_RESULTS);
  if (!(await vaultExists(layout))) throw snapshotNotFound(requested);
  const sha = await snapshotIdFor(layout, requested);
  const prefilter = new LiteralPrefilter(query);
  const matches: SnapshotSearchMatch[] = [];
  let matchedRecords = 0;
  let totalMatches = 0;
  let unsearchable = 0;
  const { loaded } = await forEachRecord(
    layout,
    sha,
    ({ index, bytes }) => {
      if (!prefilter.mayMatch(bytes)) {
        if (!isJsonLine(bytes)) unsearchable += 1;
        return;
      }
      const parsed = parseJsonLine(bytes);
      if (parsed === undefined) {
        unsearchable += 1;
        return;
      }
      let count = 0;
      forEachStringValue(parsed, (value) => {
        count += countOccurrences(value, query);
      });
      if (count === 0) return;
      matchedRecords += 1;
      totalMatches += count;
      if (matches.length < limit) {
        matches.push({ record_index: index, record_sha256: createHash('sha256').update(bytes).digest('hex'), record_bytes: bytes.length, match_count: count });
      }
    },
    env,
  );
  return {
    snapshot_sha256: sha,
    source_sha256: loaded.manifest.source_sha256,
    matches,
    matched_records: matchedRecords,
    total_matches: totalMatches,
    unsearchable_records: unsearchable,
    truncated: matchedRecords > matches.length,
  };
}
