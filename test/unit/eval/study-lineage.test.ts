import { describe, expect, it } from 'vitest';
import type { OperationReceipt, TranscriptItem } from '../../../schemas/generated/types.js';
import { againstLineage, type LineageSide } from '../../../kernel/eval/study-lineage.js';

const sha = (c: string) => c.repeat(64);
const item = (uuid: string | null): TranscriptItem => ({ line_index: 0, kind: 'user', est_tokens: 1, label: 'user', uuid });
const side = (session_id: string, shaChar: string, uuid: string | null = null, vault_id: string | null = null): LineageSide => ({ session_id, sha256: sha(shaChar), vault_id, items: [item(uuid)] });
const receipt = (from: { id: string; sha: string }, to: { id: string; sha: string; manifest?: string }, completed = true) =>
  ({ operation: `${from.id}>${to.id}`, source_session_id: from.id, source_sha256: sha(from.sha), output_session_id: to.id, output_sha256: sha(to.sha), output_manifest_sha256: sha(to.manifest ?? 'f'), completed }) as OperationReceipt;

describe('againstLineage', () => {
  const source = side('S', 'a', 'u-1');

  it('accepts the session itself and files sharing its first record', () => {
    expect(againstLineage(source, side('S', 'b'), [])).toBe('same_session');
    expect(againstLineage(source, side('renamed', 'b', 'u-1'), [])).toBe('shared_records');
  });

  it('accepts a fork of a fork when completed receipts chain back to the session, by id, bytes or vault id', () => {
    const chain = [receipt({ id: 'S', sha: 'a' }, { id: 'F1', sha: 'c' }), receipt({ id: 'F1', sha: 'c' }, { id: 'F2', sha: 'd', manifest: 'e' })];
    expect(againstLineage(source, side('F2', '9'), chain)).toBe('receipt');
    expect(againstLineage(source, side('copy', 'd'), chain)).toBe('receipt');
    expect(againstLineage(source, side('snapshot-x', '9', null, sha('e')), chain)).toBe('receipt');
  });

  it('refuses another session, and a fork whose receipt never completed', () => {
    expect(againstLineage(source, side('O', 'b', 'u-9'), [receipt({ id: 'O2', sha: '1' }, { id: 'O', sha: 'b' })])).toBeNull();
    expect(againstLineage(source, side('F1', 'c'), [receipt({ id: 'S', sha: 'a' }, { id: 'F1', sha: 'c' }, false)])).toBeNull();
  });
});
