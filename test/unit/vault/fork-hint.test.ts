import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GobstopperError } from '../../../kernel/errors.js';
import { markReceiptCompleted, operationId, writePendingReceipt, type OperationReceipt } from '../../../kernel/publish/receipt.js';
import { ensureVault } from '../../../kernel/vault/layout.js';
import { forkHintFor } from '../../../kernel/vault/fork-hint.js';
import { showSnapshot } from '../../../kernel/vault/show.js';
import { makeVaultHome, type VaultHome } from './helpers.js';

describe('the hint for a session that is a published fork', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  async function published(output: string, source: string, kind: OperationReceipt['kind'], completed = true): Promise<void> {
    const identity = { kind, provider: 'claude_code', source_path: join(home.sessions, `${source}.jsonl`), source_sha256: 'a'.repeat(64), inputs_sha256: output.padEnd(64, '0').replace(/[^0-9a-f]/g, '0') };
    const receipt: OperationReceipt = {
      schema_version: 3,
      operation: operationId(identity),
      ...identity,
      source_session_id: source,
      output_session_id: output,
      path: join(home.sessions, `${output}.jsonl`),
      output_sha256: 'c'.repeat(64),
      bytes_before: 100,
      bytes_after: 50,
      reclaimed_bytes: 50,
      snapshot_sha256: 'a'.repeat(64),
      snapshot_manifest_sha256: 'd'.repeat(64),
      output_manifest_sha256: 'e'.repeat(64),
      strategy: kind === 'compact' ? 'elide' : kind,
      resume_command: `claude --resume ${output}`,
      completed: false,
      ts: 1,
    };
    await writePendingReceipt(home.layout, receipt);
    if (completed) await markReceiptCompleted(home.layout, receipt);
  }

  const cause = (selector: string) => new GobstopperError('session_not_archived', `no archived session matches '${selector}'`);

  it('names the one fork a prefix selects, lists several rather than guessing, and ignores unfinished publications', async () => {
    await ensureVault(home.layout);
    await published('b3376bbb-0000-4000-8000-000000000001', '7d3f1c2a-0000-4000-8000-000000000000', 'compact');
    await published('bd2e4e23-0000-4000-8000-000000000002', '7d3f1c2a-0000-4000-8000-000000000000', 'restore');
    await published('c0ffee00-0000-4000-8000-000000000003', '7d3f1c2a-0000-4000-8000-000000000000', 'fork', false);

    const one = await forkHintFor(home.layout, 'b33', cause('b33'));
    expect(one?.message).toBe(
      'b3376bbb-0000-4000-8000-000000000001 has not been archived itself: it is a compacted fork gobstopper published from 7d3f1c2a-0000-4000-8000-000000000000; gobstopper history 7d3f1c2a-0000-4000-8000-000000000000 lists that session\'s archived states, and gobstopper undo b3376bbb-0000-4000-8000-000000000001 restores the one it was made from',
    );
    expect(one?.details).toEqual({ source_session_id: '7d3f1c2a-0000-4000-8000-000000000000' });

    const several = await forkHintFor(home.layout, 'b', cause('b'));
    expect(several?.message).toBe("no archived session matches 'b'; 'b' matches 2 forks gobstopper published, b3376bbb (from 7d3f1c2a), bd2e4e23 (from 7d3f1c2a): give more of the id");
    expect(several?.code).toBe('session_not_archived');

    // By path too; a publication that never completed is no fork.
    expect((await forkHintFor(home.layout, join(home.sessions, 'bd2e4e23-0000-4000-8000-000000000002.jsonl'), cause('x')))?.message).toContain('it is a restore gobstopper published from 7d3f1c2a');
    expect(await forkHintFor(home.layout, 'c0ffee', cause('c0ffee'))).toBeNull();
    expect(await forkHintFor(home.layout, 'zz', cause('zz'))).toBeNull();
  });

  it('show: a fork the prefix names comes before a snapshot it also names, and an ambiguous snapshot prefix says so', async () => {
    await ensureVault(home.layout);
    await published('abcd1234-0000-4000-8000-000000000001', '7d3f1c2a-0000-4000-8000-000000000000', 'compact');
    // Only their names are read to resolve a prefix.
    for (const tail of ['1', '2']) writeFileSync(join(home.layout.manifests, 'abcd'.padEnd(63, '0') + tail), '{}');
    await expect(showSnapshot(home.layout, 'abcd')).rejects.toMatchObject({ code: 'session_not_archived', message: expect.stringContaining('abcd1234-0000-4000-8000-000000000001 has not been archived itself') });
    await expect(showSnapshot(home.layout, 'abcd0')).rejects.toMatchObject({ code: 'ambiguous_sha', message: expect.stringContaining('matches 2 snapshots') });
    await expect(showSnapshot(home.layout, 'fedc')).rejects.toMatchObject({ code: 'session_not_archived', message: "nothing archived matches 'fedc': no archived session nor snapshot has that prefix (gobstopper vault lists them; apply and snapshot archive a session)" });
  });
});
