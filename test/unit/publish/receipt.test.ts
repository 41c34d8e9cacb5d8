import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishNoClobber } from '../../../kernel/publish/publish.js';
import { finishOperation, reconcile } from '../../../kernel/publish/reconcile.js';
import {
  canonicalJson,
  deriveOutputSessionId,
  markReceiptCompleted,
  operationId,
  readReceipt,
  receiptPath,
  writePendingReceipt,
  type OperationReceipt,
} from '../../../kernel/publish/receipt.js';
import { createStagingFile } from '../../../kernel/publish/staging.js';
import { snapshotFile, storeRetained } from '../../../kernel/vault/snapshot.js';
import { makeVaultHome, writeSession, type VaultHome } from '../vault/helpers.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('operation identity', () => {
  it('is the sha256 of canonical JSON, independent of key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 'x' }], u: undefined })).toBe('{"a":[{"c":"x","d":2}],"b":1}');
    const identity = { kind: 'compact' as const, provider: 'codex', source_path: '/s.jsonl', source_sha256: 'a'.repeat(64), inputs_sha256: 'b'.repeat(64) };
    const reordered = { inputs_sha256: 'b'.repeat(64), source_sha256: 'a'.repeat(64), source_path: '/s.jsonl', provider: 'codex', kind: 'compact' as const };
    expect(operationId(identity)).toBe(operationId(reordered));
    expect(operationId(identity)).toBe(sha256(canonicalJson(identity)));
    expect(operationId({ ...identity, inputs_sha256: 'c'.repeat(64) })).not.toBe(operationId(identity));
  });

  it('derives a UUID-v4-shaped output session id', () => {
    const id = deriveOutputSessionId('0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
    expect(id).toBe('01234567-89ab-4def-a123-456789abcdef');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('receipts and reconcile', () => {
  let home: VaultHome;
  let store: string;
  let source: string;
  const candidate = '{"type":"user","compacted":true}\n';
  beforeEach(() => {
    home = makeVaultHome();
    store = join(home.root, 'store');
    mkdirSync(store);
    source = writeSession(store, 'source.jsonl', '{"type":"user","text":"' + 'long '.repeat(200) + '"}\n');
  });
  afterEach(() => home.cleanup());

  /** The spine up to a pending receipt: snapshot source, stage + retain the candidate, write the receipt. */
  async function prepare(): Promise<{ receipt: OperationReceipt; staging: string }> {
    const sourceBytes = readFileSync(source);
    const snap = await snapshotFile(home.layout, { path: source, sessionId: 'src', provider: 'codex', strategy: 'elide', expectedSourceSha256: sha256(sourceBytes) });
    const staging = await createStagingFile(home.env);
    writeFileSync(staging, candidate);
    const identity = { kind: 'compact' as const, provider: 'codex', source_path: snap.entry.path, source_sha256: snap.entry.source_sha256, inputs_sha256: sha256('edits') };
    const operation = operationId(identity);
    const receipt = await storeRetained(home.layout, staging, { expectedSourceSha256: sha256(candidate) }, async (out) => {
      const r: OperationReceipt = {
        schema_version: 3,
        operation,
        ...identity,
        source_session_id: 'src',
        output_session_id: deriveOutputSessionId(operation),
        path: join(store, `${deriveOutputSessionId(operation)}.jsonl`),
        output_sha256: out.sourceSha256,
        bytes_before: sourceBytes.length,
        bytes_after: out.bytes,
        reclaimed_bytes: sourceBytes.length - out.bytes,
        snapshot_sha256: snap.entry.source_sha256,
        snapshot_manifest_sha256: snap.entry.sha256,
        output_manifest_sha256: out.manifestSha256,
        strategy: 'elide',
        resume_command: `codex resume ${deriveOutputSessionId(operation)}`,
        completed: false,
        ts: 1_700_000_000,
      };
      await writePendingReceipt(home.layout, r);
      return r;
    });
    return { receipt, staging };
  }

  it('writes a private pending receipt, then replaces it with the completed form', async () => {
    const { receipt, staging } = await prepare();
    const file = receiptPath(home.layout, receipt.operation);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await readReceipt(home.layout, receipt.operation)).toEqual(receipt);
    await expect(writePendingReceipt(home.layout, receipt)).rejects.toMatchObject({ code: 'receipt_exists' });

    await publishNoClobber(staging, receipt.path, { expectedSha256: receipt.output_sha256 });
    const done = await markReceiptCompleted(home.layout, receipt, { now: 1_700_000_100 });
    expect(done).toEqual({ ...receipt, completed: true, ts: 1_700_000_100 });
    expect(await readReceipt(home.layout, receipt.operation)).toEqual(done);
    expect(await reconcile(home.layout, done)).toEqual({ state: 'done' });
    expect(await finishOperation(home.layout, done)).toEqual(done);
  });

  it('republishes the retained output when a run stopped before publication, without the staging file', async () => {
    const { receipt, staging } = await prepare();
    unlinkSync(staging);
    expect(await reconcile(home.layout, receipt)).toEqual({ state: 'republish', gone: false });
    const done = await finishOperation(home.layout, receipt, { env: home.env });
    expect(done.completed).toBe(true);
    expect(readFileSync(receipt.path, 'utf8')).toBe(candidate);
    expect(await readReceipt(home.layout, receipt.operation)).toEqual(done);
  });

  it('confirms an output published just before a crash', async () => {
    const { receipt, staging } = await prepare();
    await publishNoClobber(staging, receipt.path);
    expect(await reconcile(home.layout, receipt)).toEqual({ state: 'confirm' });
    expect((await finishOperation(home.layout, receipt)).completed).toBe(true);
  });

  it('requires repair when something else sits at the output, and publishes a removed completed output again', async () => {
    const { receipt } = await prepare();
    writeFileSync(receipt.path, 'someone else\n');
    const conflict = await reconcile(home.layout, receipt);
    expect(conflict).toMatchObject({ state: 'repair', message: expect.stringContaining(`${receipt.path} no longer begins with the bytes that were published there`) });
    await expect(finishOperation(home.layout, receipt)).rejects.toMatchObject({ code: 'repair_required', message: expect.stringContaining('move that file aside') });
    expect(readFileSync(receipt.path, 'utf8')).toBe('someone else\n');

    unlinkSync(receipt.path);
    const completed = await finishOperation(home.layout, receipt);
    expect(readFileSync(receipt.path).length).toBe(receipt.bytes_after);
    unlinkSync(receipt.path);
    const told: string[] = [];
    expect(await reconcile(home.layout, completed)).toEqual({ state: 'republish', gone: true });
    expect((await finishOperation(home.layout, completed, { onRestored: (r) => told.push(r.path) })).completed).toBe(true);
    expect(told).toEqual([receipt.path]);
    expect(createHash('sha256').update(readFileSync(receipt.path)).digest('hex')).toBe(receipt.output_sha256);
  });

  it('fails closed on a damaged receipt and refuses to write an inconsistent one', async () => {
    const { receipt } = await prepare();
    const file = receiptPath(home.layout, receipt.operation);
    writeFileSync(file, JSON.stringify({ ...receipt, reclaimed_bytes: 1 }));
    await expect(readReceipt(home.layout, receipt.operation)).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`${file}: receipt is invalid (reclaimed_bytes`) });
    writeFileSync(file, '{not json');
    await expect(readReceipt(home.layout, receipt.operation)).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining('not JSON') });

    const other = { ...receipt, inputs_sha256: 'e'.repeat(64) };
    await expect(writePendingReceipt(home.layout, other)).rejects.toMatchObject({ code: 'invalid_receipt', message: expect.stringContaining('operation id') });
    await expect(writePendingReceipt(home.layout, { ...receipt, snapshot_sha256: 'f'.repeat(64) })).rejects.toMatchObject({ code: 'invalid_receipt' });
    await expect(writePendingReceipt(home.layout, { ...receipt, completed: true })).rejects.toMatchObject({ code: 'invalid_receipt' });
  });
});
