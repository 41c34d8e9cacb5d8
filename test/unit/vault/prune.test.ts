import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIndex, rewriteIndexLocked, withIndexLock } from '../../../kernel/vault/index-file.js';
import { writePruneJournal } from '../../../kernel/vault/prune-journal.js';
import { writePin } from '../../../kernel/vault/pins.js';
import { pruneVault } from '../../../kernel/vault/prune.js';
import { readSnapshotRecord } from '../../../kernel/vault/read.js';
import { snapshotFile, storeRetained } from '../../../kernel/vault/snapshot.js';
import { operationId, writePendingReceipt, type OperationReceipt } from '../../../kernel/publish/receipt.js';
import { makeVaultHome, writeSession, type VaultHome } from './helpers.js';

function listing(home: VaultHome) {
  return { chunks: readdirSync(home.layout.chunks).sort(), manifests: readdirSync(home.layout.manifests).sort(), index: readFileSync(home.layout.index, 'utf8') };
}

describe('prune', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  /** Archives `versions` distinct states of one session; returns their snapshot ids, oldest first. */
  async function history(sessionId: string, versions: number): Promise<string[]> {
    const shas: string[] = [];
    for (let v = 0; v < versions; v++) {
      const path = writeSession(home.sessions, `${sessionId}.jsonl`, `{"type":"user","session":"${sessionId}","v":${v}}\n`);
      shas.push((await snapshotFile(home.layout, { path, sessionId, provider: 'codex', strategy: 'snapshot' })).entry.sha256);
    }
    return shas;
  }

  it('keeps the newest N per stream, previews without changing anything, then removes the rest', async () => {
    const a = await history('a', 5);
    const b = await history('b', 2);
    const before = listing(home);

    const preview = await pruneVault(home.layout, { keep: 2 });
    expect(preview).toEqual({ streams: 2, kept_entries: 4, dropped_entries: 3, manifests_removed: 3, chunks_removed: 3, bytes_reclaimed: expect.any(Number), unindexed_kept: 0, unindexed_snapshots: [], dry_run: true, keep: 2 });
    expect(preview.bytes_reclaimed).toBeGreaterThan(0);
    expect(listing(home)).toEqual(before);

    const applied = await pruneVault(home.layout, { keep: 2, apply: true });
    expect(applied).toEqual({ ...preview, dry_run: false });
    expect((await readIndex(home.layout)).map((e) => e.sha256)).toEqual([a[3], a[4], b[0], b[1]]);
    for (const gone of a.slice(0, 3)) expect(existsSync(join(home.layout.manifests, gone!))).toBe(false);
    for (const kept of [a[3], a[4], b[0], b[1]]) expect((await readSnapshotRecord(home.layout, { snapshot: kept!, record: 0 })).record_bytes).toBeGreaterThan(0);
    expect(await pruneVault(home.layout, { keep: 2, apply: true })).toMatchObject({ dropped_entries: 0, manifests_removed: 0, chunks_removed: 0 });
  });

  it('counts archived states, not index lines: the same bytes archived again under other labels keep an older state', async () => {
    const [older, newer] = await history('a', 2);
    const path = join(home.sessions, 'a.jsonl');
    // The newest state archived again under alternating labels, as snapshot, fork and apply do.
    for (let i = 0; i < 4; i++) for (const strategy of ['snapshot', 'fork']) await snapshotFile(home.layout, { path, sessionId: 'a', provider: 'codex', strategy });
    const lines = (await readIndex(home.layout)).length;
    expect(lines).toBeGreaterThan(3);

    expect(await pruneVault(home.layout, { keep: 2, apply: true })).toMatchObject({ kept_entries: lines, dropped_entries: 0, manifests_removed: 0 });
    expect((await readSnapshotRecord(home.layout, { snapshot: older!, record: 0 })).record_bytes).toBeGreaterThan(0);

    // With room for one state, every line of the newest stays and the older state goes.
    const applied = await pruneVault(home.layout, { keep: 1, apply: true });
    expect(applied).toMatchObject({ kept_entries: lines - 1, dropped_entries: 1, manifests_removed: 1 });
    expect(new Set((await readIndex(home.layout)).map((e) => e.sha256))).toEqual(new Set([newer]));
    expect(existsSync(join(home.layout.manifests, older!))).toBe(false);
  });

  it('finishes what a prune stopped between rewriting the index and deleting the snapshots', async () => {
    const a = await history('a', 5);
    const dropped = a.slice(0, 3);
    // The state a stopped prune leaves: its journal written, the index rewritten, nothing deleted.
    await writePruneJournal(home.layout, dropped);
    await withIndexLock(home.layout, async () => rewriteIndexLocked(home.layout, (await readIndex(home.layout)).filter((e) => !dropped.includes(e.sha256))));
    const again = await pruneVault(home.layout, { keep: 2, apply: true });
    expect(again).toMatchObject({ dropped_entries: 0, manifests_removed: 3, unindexed_kept: 0 });
    for (const gone of dropped) expect(existsSync(join(home.layout.manifests, gone))).toBe(false);
    expect(existsSync(home.layout.pruneJournal)).toBe(false);
    // Without a journal, a snapshot with no line is kept: its line may have been lost.
    const b = await history('b', 2);
    await withIndexLock(home.layout, async () => rewriteIndexLocked(home.layout, (await readIndex(home.layout)).filter((e) => e.sha256 !== b[0])));
    expect(await pruneVault(home.layout, { keep: 2, apply: true })).toMatchObject({ manifests_removed: 0, unindexed_kept: 1, unindexed_snapshots: [b[0]] });
  });

  it('removes what runs killed midway left in operations and staging, and nothing of a live run', async () => {
    await history('a', 1);
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const ops = home.layout.operations;
    mkdirSync(ops, { recursive: true, mode: 0o700 });
    const staging = join(home.dataHome, 'gobstopper', 'staging');
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const holder = (pid: number) => JSON.stringify({ pid, host: hostname(), ts: Date.now() }) + '\n';
    const files = {
      deadLock: [join(ops, `${'a'.repeat(64)}.lock`), holder(dead)],
      liveLock: [join(ops, `${'b'.repeat(64)}.lock`), holder(process.pid)],
      deadTemp: [join(ops, `.tmp-${dead}-0123456789abcdef`), ''],
      liveTemp: [join(ops, `.tmp-${process.pid}-0123456789abcdef`), ''],
      deadStage: [join(staging, `stage-${dead}-0123456789abcdef.jsonl`), '{}\n'],
    } as const;
    for (const [path, text] of Object.values(files)) writeFileSync(path, text, { mode: 0o600 });
    // A preview removes nothing.
    await pruneVault(home.layout, { keep: 1 }, home.env);
    for (const [path] of Object.values(files)) expect(existsSync(path), path).toBe(true);
    await pruneVault(home.layout, { keep: 1, apply: true }, home.env);
    expect(Object.fromEntries(Object.entries(files).map(([k, [path]]) => [k, existsSync(path)]))).toEqual({ deadLock: false, liveLock: true, deadTemp: false, liveTemp: true, deadStage: false });
  });

  it('a journal that is not what prune writes makes nothing go', async () => {
    const a = await history('a', 2);
    await withIndexLock(home.layout, async () => rewriteIndexLocked(home.layout, (await readIndex(home.layout)).filter((e) => e.sha256 !== a[0])));
    writeFileSync(home.layout.pruneJournal, JSON.stringify({ dropped: a[0] }));
    expect(await pruneVault(home.layout, { keep: 2, apply: true })).toMatchObject({ manifests_removed: 0, unindexed_kept: 1 });
  });

  it('keeps what a receipt or a pin references, even past the newest N', async () => {
    const a = await history('a', 4);
    const outputPath = writeSession(home.sessions, 'out.jsonl', '{"type":"user","fork":true}\n');
    // A pending receipt whose source is unchanged since: a rerun would finish it, so it still counts.
    const source = join(home.sessions, 'a.jsonl');
    const sourceSha256 = createHash('sha256').update(readFileSync(source)).digest('hex');
    const sourceBytes = statSync(source).size;
    const output = await storeRetained(home.layout, outputPath, {}, async (stored) => {
      const identity = { kind: 'compact' as const, provider: 'codex', source_path: source, source_sha256: sourceSha256, inputs_sha256: 'b'.repeat(64) };
      const receipt: OperationReceipt = {
        schema_version: 3,
        operation: operationId(identity),
        ...identity,
        source_session_id: 'a',
        output_session_id: 'fork-1',
        path: join(home.sessions, 'fork.jsonl'),
        output_sha256: stored.sourceSha256,
        bytes_before: sourceBytes,
        bytes_after: stored.bytes,
        reclaimed_bytes: Math.max(0, sourceBytes - stored.bytes),
        snapshot_sha256: sourceSha256,
        snapshot_manifest_sha256: a[0]!,
        output_manifest_sha256: stored.manifestSha256,
        strategy: 'elide',
        resume_command: 'codex resume fork-1',
        completed: false,
        ts: 1,
      };
      await writePendingReceipt(home.layout, receipt);
      return stored.manifestSha256;
    });
    await writePin(home.layout, 'native-test', a[1]!);

    const result = await pruneVault(home.layout, { keep: 1, apply: true });
    expect(result).toMatchObject({ kept_entries: 3, dropped_entries: 1, manifests_removed: 1 });
    expect((await readIndex(home.layout)).map((e) => e.sha256)).toEqual([a[0], a[1], a[3]]);
    expect(existsSync(join(home.layout.manifests, output))).toBe(true);
    expect(existsSync(join(home.layout.manifests, a[2]!))).toBe(false);
  });

  it('stops before changing anything when a manifest is damaged', async () => {
    const a = await history('a', 3);
    writeFileSync(join(home.layout.manifests, a[0]!), '{"schema_version":3}');
    const before = listing(home);
    await expect(pruneVault(home.layout, { keep: 1, apply: true })).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(a[0]!) });
    expect(listing(home)).toEqual(before);
  });

  it('a missing snapshot whose session file is unchanged: the advice to archive it again is the repair', async () => {
    const path = writeSession(home.sessions, 's.jsonl', '{"type":"user","v":1}\n');
    const { sha256 } = (await snapshotFile(home.layout, { path, sessionId: 's', provider: 'codex', strategy: 'snapshot' })).entry;
    rmSync(join(home.layout.manifests, sha256));
    await expect(pruneVault(home.layout, { keep: 1 })).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`run gobstopper snapshot ${path} to write it again`) });
    await snapshotFile(home.layout, { path, sessionId: 's', provider: 'codex', strategy: 'snapshot' });
    await expect(pruneVault(home.layout, { keep: 1 })).resolves.toMatchObject({ dry_run: true });
  });

  it('reads the kept states of a stream it takes a state from: a chunk damaged in place stops it, and the older copy stays', async () => {
    const a = await history('a', 2);
    const manifest = JSON.parse(readFileSync(join(home.layout.manifests, a[1]!), 'utf8')) as { chunks: string[] };
    const chunk = join(home.layout.chunks, manifest.chunks[0]);
    // One byte flipped in place: the size is right, the content is not.
    const bytes = readFileSync(chunk);
    bytes[0] = bytes[0] === 0x41 ? 0x42 : 0x41;
    writeFileSync(chunk, bytes);
    const before = listing(home);
    for (const apply of [false, true]) {
      await expect(pruneVault(home.layout, { keep: 1, apply })).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`${chunk}: chunk bytes do not hash to its name`) });
    }
    expect(listing(home)).toEqual(before);
    expect((await readSnapshotRecord(home.layout, { snapshot: a[0]!, record: 0 })).record_bytes).toBeGreaterThan(0);
  });

  /** The file of the first chunk of snapshot `sha`. */
  function firstChunk(sha: string): string {
    const manifest = JSON.parse(readFileSync(join(home.layout.manifests, sha), 'utf8')) as { chunks: string[] };
    return join(home.layout.chunks, manifest.chunks[0]!);
  }

  it('a damaged kept chunk whose session file still holds it: moving it aside and archiving that file again is the way out', async () => {
    const a = await history('a', 2);
    const path = join(home.sessions, 'a.jsonl');
    const chunk = firstChunk(a[1]!);
    writeFileSync(chunk, readFileSync(chunk).fill(0x20));
    const damaged = `${chunk}: chunk bytes do not hash to its name; repair required: move it out of the vault, then run gobstopper snapshot ${path} to write it again (that file still holds its bytes)`;
    await expect(pruneVault(home.layout, { keep: 1 })).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(damaged), details: { rewrite_from: path } });
    // Moved aside, the same chunk is missing: the advice still leads to the file, not back to a backup only.
    rmSync(chunk);
    await expect(pruneVault(home.layout, { keep: 1 })).rejects.toMatchObject({ message: expect.stringContaining(`chunk is missing; repair required: run gobstopper snapshot ${path} to write it again`) });
    await snapshotFile(home.layout, { path, sessionId: 'a', provider: 'codex', strategy: 'snapshot' });
    await expect(pruneVault(home.layout, { keep: 1, apply: true })).resolves.toMatchObject({ manifests_removed: 1 });
  });

  it('a kept chunk no file holds any more: names the lost snapshot and how to drop it, and dropping it lets prune run', async () => {
    const a = await history('a', 2);
    const path = join(home.sessions, 'a.jsonl');
    const chunk = firstChunk(a[1]!);
    rmSync(chunk);
    // Appended to since: the bytes are still at the start of the file, but archiving it cuts a longer chunk.
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"type":"user","v":2}\n`);
    const before = listing(home);
    const lost = `chunk is missing; repair required: restore it from a backup; no archived file holds its bytes any more, so without one snapshot ${a[1]!.slice(0, 16)}… of codex a cannot be recovered: to drop it, delete its lines from index.jsonl, move manifests/${a[1]!.slice(0, 16)}… out of the vault, then prune again`;
    const refusal = { code: 'vault_damaged', message: expect.stringContaining(lost), details: { lost_snapshots: [a[1]], receipts: [], manifests: [join(home.layout.manifests, a[1]!)] } };
    for (const apply of [false, true]) await expect(pruneVault(home.layout, { keep: 1, apply })).rejects.toMatchObject(refusal);
    expect(listing(home)).toEqual(before);
    await withIndexLock(home.layout, async () => rewriteIndexLocked(home.layout, (await readIndex(home.layout)).filter((e) => e.sha256 !== a[1])));
    rmSync(join(home.layout.manifests, a[1]!));
    await expect(pruneVault(home.layout, { keep: 1, apply: true })).resolves.toMatchObject({ kept_entries: 1, manifests_removed: 0 });
  });

  it('a kept snapshot whose manifest is gone and whose file changed since: how to drop it', async () => {
    const a = await history('a', 2);
    rmSync(join(home.layout.manifests, a[0]!));
    // a[0] is kept by the newest-N rule only with keep 2.
    await expect(pruneVault(home.layout, { keep: 2 })).rejects.toMatchObject({
      message: expect.stringContaining(`without either, snapshot ${a[0]!.slice(0, 16)}… of codex a cannot be recovered: to drop it, delete its lines from index.jsonl, then prune again`),
    });
    await withIndexLock(home.layout, async () => rewriteIndexLocked(home.layout, (await readIndex(home.layout)).filter((e) => e.sha256 !== a[0])));
    await expect(pruneVault(home.layout, { keep: 2, apply: true })).resolves.toMatchObject({ kept_entries: 1 });
  });

  it('a preview takes no lock and removes nothing, not even the holds of dead snapshotters', async () => {
    await history('a', 3);
    const deadHold = join(home.layout.custody, '.tmp-hold-999999-abc.json');
    writeFileSync(deadHold, JSON.stringify({ pid: 999_999_999, host: hostname() }) + '\n', { mode: 0o600 });
    const before = { ...listing(home), custody: readdirSync(home.layout.custody).sort(), vault: readdirSync(home.layout.root).sort() };
    expect(await pruneVault(home.layout, { keep: 1 })).toMatchObject({ dry_run: true, dropped_entries: 2 });
    expect({ ...listing(home), custody: readdirSync(home.layout.custody).sort(), vault: readdirSync(home.layout.root).sort() }).toEqual(before);
    // Applying clears it: its process is gone.
    await pruneVault(home.layout, { keep: 1, apply: true });
    expect(existsSync(deadHold)).toBe(false);
  });

  it('stops before changing anything when a receipt is damaged', async () => {
    await history('b', 3);
    writeFileSync(join(home.layout.operations, `${'c'.repeat(64)}.json`), '{"schema_version":3}', { mode: 0o600 });
    const before = listing(home);
    await expect(pruneVault(home.layout, { keep: 1, apply: true })).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining('c'.repeat(64)) });
    expect(listing(home)).toEqual(before);
  });

  it('refuses a keep below 1 and does nothing on an empty vault', async () => {
    await expect(pruneVault(home.layout, { keep: 0 })).rejects.toMatchObject({ code: 'invalid_keep' });
    expect(await pruneVault(home.layout, {})).toMatchObject({ streams: 0, dropped_entries: 0, dry_run: true, keep: 10 });
  });
});
