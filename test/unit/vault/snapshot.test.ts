import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendLostIndexEntry, readIndex } from '../../../kernel/vault/index-file.js';
import { reconstructSnapshot } from '../../../kernel/vault/reconstruct.js';
import { snapshotFile, snapshotSettled } from '../../../kernel/vault/snapshot.js';
import { CHUNK_BYTES } from '../../../kernel/vault/limits.js';
import { claudeSession, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function reconstruct(home: VaultHome, sha: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  await reconstructSnapshot(home.layout, sha, (chunk) => {
    parts.push(Buffer.from(chunk));
  });
  return Buffer.concat(parts);
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('vault snapshots', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  it('snapshot reads a file its client is appending to again, and archives one whole reading of it', async () => {
    const path = writeSession(home.sessions, 's-live.jsonl', jsonl(claudeSession('s-live', 3)));
    const record = jsonl(claudeSession('s-live', 1)).split('\n')[0] + '\n';
    let reads = 0;
    // The client appends a record while each of the first two reads is going on.
    const appending = (step: string) => {
      if (step === 'vault.after_read' && ++reads <= 2) appendFileSync(path, record);
    };
    const { entry } = await snapshotSettled(home.layout, { path, sessionId: 's-live', provider: 'claude_code', strategy: 'snapshot', fault: appending }, [1, 1]);
    expect(reads).toBe(3);
    const now = readFileSync(path);
    expect(entry).toMatchObject({ bytes: now.length, source_sha256: sha256(now) });
    expect((await reconstruct(home, entry.sha256)).equals(now)).toBe(true);
    expect(await readIndex(home.layout)).toEqual([entry]);

    // A client that never pauses: a clear refusal after the last try, and nothing indexed.
    const busy = writeSession(home.sessions, 's-busy.jsonl', jsonl(claudeSession('s-busy', 3)));
    const always = (step: string) => {
      if (step === 'vault.after_read') appendFileSync(busy, record);
    };
    await expect(snapshotSettled(home.layout, { path: busy, sessionId: 's-busy', provider: 'claude_code', strategy: 'snapshot', fault: always }, [1, 1])).rejects.toMatchObject({
      code: 'source_changed',
      message: `${busy} changed while it was read, 3 times in a row: its client is writing to it; nothing was recorded, try again when it is idle`,
    });
    expect(await readIndex(home.layout)).toEqual([entry]);
  });

  it('stores exact bytes as a v3 manifest with private modes and indexes them', async () => {
    const content = jsonl(claudeSession('s-1', 5));
    const path = writeSession(home.sessions, 's-1.jsonl', content);
    const { entry, stored } = await snapshotFile(home.layout, { path, sessionId: 's-1', provider: 'claude_code', strategy: 'snapshot', ts: 1_700_000_000 });

    expect(entry).toEqual({
      ts: 1_700_000_000,
      sha256: stored.manifestSha256,
      path,
      session_id: 's-1',
      provider: 'claude_code',
      bytes: Buffer.byteLength(content),
      record_count: 15,
      strategy: 'snapshot',
      source_sha256: sha256(content),
    });
    const manifestBytes = readFileSync(join(home.layout.manifests, stored.manifestSha256));
    expect(sha256(manifestBytes)).toBe(stored.manifestSha256);
    expect(manifestBytes.toString()).toBe(JSON.stringify({ schema_version: 3, source_sha256: sha256(content), bytes: Buffer.byteLength(content), chunks: [sha256(content)] }));
    expect((await reconstruct(home, stored.manifestSha256)).toString()).toBe(content);
    expect(await readIndex(home.layout)).toEqual([entry]);

    for (const dir of [home.layout.root, home.layout.chunks, home.layout.manifests, home.layout.operations, home.layout.pins]) expect(mode(dir)).toBe(0o700);
    expect(mode(home.layout.index)).toBe(0o600);
    expect(mode(join(home.layout.manifests, stored.manifestSha256))).toBe(0o600);
    for (const chunk of readdirSync(home.layout.chunks)) expect(mode(join(home.layout.chunks, chunk))).toBe(0o600);
  });

  it('does not index a state again while it is still the newest of its stream under the same label', async () => {
    const content = jsonl(claudeSession('s-2', 3));
    const path = writeSession(home.sessions, 's-2.jsonl', content);
    const snap = (strategy: string, ts: number) => snapshotFile(home.layout, { path, sessionId: 's-2', provider: 'claude_code', strategy, ts });
    const first = (await snap('snapshot', 100)).entry;
    // The same bytes again (a repeated snapshot, an apply retried after a failure): one line, the first.
    expect((await snap('snapshot', 200)).entry).toEqual(first);
    expect(await readIndex(home.layout)).toEqual([first]);
    // Another label is another fact about the same bytes.
    const compacted = (await snap('elide', 300)).entry;
    // A state that comes back after another one is a new point in the history.
    appendFileSync(path, jsonl(claudeSession('s-2', 1)));
    const grown = (await snap('snapshot', 400)).entry;
    writeFileSync(path, content);
    const back = (await snap('snapshot', 500)).entry;
    expect((await readIndex(home.layout)).map((e) => [e.ts, e.strategy])).toEqual([
      [100, 'snapshot'],
      [300, 'elide'],
      [400, 'snapshot'],
      [500, 'snapshot'],
    ]);
    expect(compacted.sha256).toBe(first.sha256);
    expect(back.sha256).toBe(first.sha256);
    expect(grown.sha256).not.toBe(first.sha256);
  });

  it('writes a lost line back only while no line of its stream names that snapshot, wherever it stands', async () => {
    const path = writeSession(home.sessions, 's-3.jsonl', jsonl(claudeSession('s-3', 3)));
    const snap = (ts: number) => snapshotFile(home.layout, { path, sessionId: 's-3', provider: 'claude_code', strategy: 'snapshot', ts });
    const first = (await snap(100)).entry;
    appendFileSync(path, jsonl(claudeSession('s-3', 1)));
    const grown = (await snap(200)).entry;
    const lost = { ...first, ts: 150, strategy: 'elide' };
    // Its line is there, older than the stream's newest and under another label: nothing is written.
    expect(await appendLostIndexEntry(home.layout, lost)).toEqual({ entry: first, written: false });
    expect(await readIndex(home.layout)).toEqual([first, grown]);
    // Deleted by hand, it comes back once, at the end.
    writeFileSync(home.layout.index, readFileSync(home.layout.index, 'utf8').split('\n').slice(1).join('\n'));
    expect(await appendLostIndexEntry(home.layout, lost)).toEqual({ entry: lost, written: true });
    const indexed = readFileSync(home.layout.index);
    expect(await readIndex(home.layout)).toEqual([grown, lost]);
    expect(await appendLostIndexEntry(home.layout, lost)).toEqual({ entry: lost, written: false });
    expect(readFileSync(home.layout.index)).toEqual(indexed);
  });

  it('counts an unterminated last line as a record', async () => {
    const path = writeSession(home.sessions, 'torn.jsonl', '{"a":1}\n{"b":2}\n{"c":');
    const { entry } = await snapshotFile(home.layout, { path, sessionId: 'torn', provider: 'claude_code', strategy: 'snapshot' });
    expect(entry.record_count).toBe(3);
  });

  it('cuts sources at every 1 MiB and reuses every unchanged chunk of an appended version', async () => {
    const line = JSON.stringify({ type: 'user', message: { content: 'y'.repeat(1000) } }) + '\n';
    const base = line.repeat(Math.ceil((5 * CHUNK_BYTES + 12345) / line.length));
    const path = writeSession(home.sessions, 'grow.jsonl', base);
    const first = await snapshotFile(home.layout, { path, sessionId: 'grow', provider: 'codex', strategy: 'snapshot' });
    expect(first.stored.chunkCount).toBe(Math.ceil(Buffer.byteLength(base) / CHUNK_BYTES));

    const again = await snapshotFile(home.layout, { path, sessionId: 'grow', provider: 'codex', strategy: 'snapshot' });
    expect(again.stored.manifestSha256).toBe(first.stored.manifestSha256);
    expect(again.stored.newChunkBytes).toBe(0);

    appendFileSync(path, line.repeat(Math.ceil(CHUNK_BYTES / line.length)));
    const appended = await snapshotFile(home.layout, { path, sessionId: 'grow', provider: 'codex', strategy: 'snapshot' });
    expect(appended.stored.manifestSha256).not.toBe(first.stored.manifestSha256);
    expect(appended.stored.newChunkBytes).toBeLessThanOrEqual(2 * CHUNK_BYTES);
    expect(appended.stored.newChunks).toBe(2);
    expect((await reconstruct(home, appended.stored.manifestSha256)).equals(readFileSync(path))).toBe(true);
    expect((await reconstruct(home, first.stored.manifestSha256)).toString()).toBe(base);
    expect((await readIndex(home.layout)).map((e) => e.sha256)).toEqual([first.stored.manifestSha256, appended.stored.manifestSha256]);
  });

  it('archives and reads back a source large enough to hash on a second thread', async () => {
    const line = JSON.stringify({ type: 'tool', out: 'z'.repeat(4000) }) + '\n';
    const content = line.repeat(Math.ceil((40 * CHUNK_BYTES) / line.length));
    const path = writeSession(home.sessions, 'large.jsonl', content);
    const { entry } = await snapshotFile(home.layout, { path, sessionId: 'large', provider: 'codex', strategy: 'snapshot', expectedSourceSha256: sha256(content) });
    expect(entry.source_sha256).toBe(sha256(content));
    expect(sha256(await reconstruct(home, entry.sha256))).toBe(sha256(content));
  });

  it('refuses a source that does not match the planned sha256 and records nothing', async () => {
    const path = writeSession(home.sessions, 'changed.jsonl', '{"a":1}\n');
    await expect(
      snapshotFile(home.layout, { path, sessionId: 'c', provider: 'codex', strategy: 'snapshot', expectedSourceSha256: sha256('{"a":0}\n') }),
    ).rejects.toMatchObject({ code: 'source_changed', message: expect.stringContaining('changed after it was read') });
    expect(await readIndex(home.layout)).toEqual([]);
    expect(readdirSync(home.layout.manifests)).toEqual([]);
  });

  it('accepts a source bound to its sha256', async () => {
    const content = '{"a":1}\n';
    const path = writeSession(home.sessions, 'bound.jsonl', content);
    const { entry } = await snapshotFile(home.layout, { path, sessionId: 'b', provider: 'codex', strategy: 'snapshot', expectedSourceSha256: sha256(content) });
    expect(entry.source_sha256).toBe(sha256(content));
  });

  it('refuses symlinks, directories and FIFOs as sources', async () => {
    const real = writeSession(home.sessions, 'real.jsonl', '{"a":1}\n');
    const link = join(home.sessions, 'link.jsonl');
    symlinkSync(real, link);
    await expect(snapshotFile(home.layout, { path: link, sessionId: 'l', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({ code: 'symlink_refused' });
    const dir = join(home.sessions, 'dir.jsonl');
    mkdirSync(dir);
    await expect(snapshotFile(home.layout, { path: dir, sessionId: 'd', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({ code: 'not_regular_file' });
    const fifo = join(home.sessions, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    await expect(snapshotFile(home.layout, { path: fifo, sessionId: 'f', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({ code: 'not_regular_file' });
    expect(await readIndex(home.layout)).toEqual([]);
  });

  it('refuses a source over the transcript limit', async () => {
    const path = writeSession(home.sessions, 'big.jsonl', 'x'.repeat(2048));
    await expect(
      snapshotFile(home.layout, { path, sessionId: 'big', provider: 'codex', strategy: 'snapshot', env: { ...home.env, GOBSTOPPER_MAX_TRANSCRIPT_BYTES: '1024' } }),
    ).rejects.toMatchObject({ code: 'transcript_too_large', message: expect.stringContaining('over the 1024-byte transcript limit (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)') });
    expect(existsSync(home.layout.root)).toBe(false);
  });

  it('refuses bad metadata before storing any bytes', async () => {
    const path = writeSession(home.sessions, 'meta.jsonl', '{"a":1}\n');
    await expect(snapshotFile(home.layout, { path, sessionId: '', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({ code: 'invalid_entry' });
    await expect(snapshotFile(home.layout, { path, sessionId: 'x'.repeat(257), provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({ code: 'invalid_entry' });
    await expect(snapshotFile(home.layout, { path, sessionId: 'ok', provider: 'codex', strategy: 'bad label' })).rejects.toMatchObject({ code: 'invalid_entry' });
    expect(existsSync(home.layout.root)).toBe(false);
  });

  it('refuses a vault directory others can read, and a vault that is a symlink', async () => {
    const path = writeSession(home.sessions, 's.jsonl', '{"a":1}\n');
    await snapshotFile(home.layout, { path, sessionId: 's', provider: 'codex', strategy: 'snapshot' });
    chmodSync(home.layout.chunks, 0o755);
    await expect(snapshotFile(home.layout, { path, sessionId: 's', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({
      code: 'vault_insecure',
      message: expect.stringContaining(`chmod 700 ${home.layout.chunks}`),
    });
    chmodSync(home.layout.chunks, 0o700);
    chmodSync(home.layout.index, 0o644);
    await expect(snapshotFile(home.layout, { path, sessionId: 's', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({
      code: 'vault_insecure',
      message: expect.stringContaining(`chmod 600 ${home.layout.index}`),
    });

    const other = makeVaultHome();
    try {
      mkdirSync(join(other.dataHome, 'elsewhere'), { recursive: true });
      mkdirSync(join(other.dataHome, 'gobstopper'), { recursive: true, mode: 0o700 });
      symlinkSync(join(other.dataHome, 'elsewhere'), other.layout.root);
      const p = writeSession(other.sessions, 's.jsonl', '{"a":1}\n');
      await expect(snapshotFile(other.layout, { path: p, sessionId: 's', provider: 'codex', strategy: 'snapshot' })).rejects.toMatchObject({ code: 'vault_insecure' });
    } finally {
      other.cleanup();
    }
  });

  it('stores an empty file as an empty snapshot', async () => {
    const path = writeSession(home.sessions, 'empty.jsonl', '');
    const { entry, stored } = await snapshotFile(home.layout, { path, sessionId: 'e', provider: 'codex', strategy: 'snapshot' });
    expect(entry.bytes).toBe(0);
    expect(entry.record_count).toBe(0);
    expect(stored.chunkCount).toBe(0);
    expect((await reconstruct(home, stored.manifestSha256)).length).toBe(0);
  });

  it('records the canonical path of a file reached through a linked directory', async () => {
    const realDir = join(home.root, 'real-dir');
    mkdirSync(realDir);
    writeFileSync(join(realDir, 's.jsonl'), '{"a":1}\n');
    const linkedDir = join(home.root, 'linked-dir');
    symlinkSync(realDir, linkedDir);
    const { entry } = await snapshotFile(home.layout, { path: join(linkedDir, 's.jsonl'), sessionId: 's', provider: 'codex', strategy: 'snapshot' });
    expect(entry.path).toBe(join(realDir, 's.jsonl'));
  });
});
