/**
 * Bounded record content for plugins that declared `read_content` (host/read_items). The kernel
 * reads physical lines by index without knowing their format, bound to the planned source hash.
 */
import type { HostReadItemsParams, HostReadItemsResult } from '../../schemas/generated/types.js';
import { readJsonl } from '../../sdk/jsonl.js';
import { maxRecords, maxTranscriptBytes } from '../../sdk/limits.js';
import { clipUtf8Bytes } from '../../sdk/utf8.js';
import { GobstopperError } from '../errors.js';

const DEFAULT_ITEM_BYTES = 16 * 1024;

export async function readSourceRecords(path: string, expectedSha256: string, params: HostReadItemsParams): Promise<HostReadItemsResult> {
  const wanted = new Set(params.line_indexes);
  const cap = params.max_bytes_per_item ?? DEFAULT_ITEM_BYTES;
  const found = new Map<number, { content: string; truncated: boolean }>();
  const summary = await readJsonl(path, { maxBytes: maxTranscriptBytes(), maxRecords: maxRecords() }, (record) => {
    if (!wanted.has(record.index)) return;
    const cut = clipUtf8Bytes(record.bytes, cap);
    found.set(record.index, { content: cut.toString('utf8'), truncated: cut.length < record.bytes.length });
  });
  if (summary.sha256 !== expectedSha256) throw new GobstopperError('source_changed', `${path} changed after it was read; run the command again`);
  const missing = params.line_indexes.filter((i) => !found.has(i));
  if (missing.length) throw new GobstopperError('unknown_record', `no record ${missing[0]} in ${path}`);
  return { items: params.line_indexes.map((i) => ({ line_index: i, ...found.get(i)! })), content_trust: 'untrusted_archived_data' };
}
