import { appendFileSync, readFileSync, readdirSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listSnapshots, sessionHistory } from '../../../kernel/vault/list.js';
import { readSnapshotRecord } from '../../../kernel/vault/read.js';
import { searchSnapshot } from '../../../kernel/vault/search.js';
import { showSnapshot } from '../../../kernel/vault/show.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { chooseSnapshot, chooseCheckedSnapshot as chooseSnapshotChecked } from '../../../kernel/services/undo.js';
import { claudeSession, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

describe('a damaged vault fails closed and names what to repair', () => {
  let home: VaultHome;
  let sha: string;
  let path: string;
  beforeEach(async () => {
    home = makeVaultHome();
    path = writeSession(home.sessions, 'sess-a.jsonl', jsonl(claudeSession('sess-a', 4)));
    sha = (await snapshotFile(home.layout, { path, sessionId: 'sess-a', provider: 'claude_code', strategy: 'snapshot' })).entry.sha256;
  });
  afterEach(() => home.cleanup());

  const indexFailure = (problem: string) => ({ code: 'vault_damaged', message: expect.stringMatching(new RegExp(`${home.layout.index}.*${problem}.*repair required`)) });

  it('an index line that is not JSON stops reads and snapshots', async () => {
    const before = readFileSync(home.layout.index);
    appendFileSync(home.layout.index, 'not json\n');
    await expect(listSnapshots(home.layout)).rejects.toMatchObject(indexFailure('line 2 is not JSON'));
    await expect(sessionHistory(home.layout, 'sess-a')).rejects.toMatchObject(indexFailure('line 2 is not JSON'));
    await expect(snapshotFile(home.layout, { path, sessionId: 'sess-a', provider: 'claude_code', strategy: 'snapshot' })).rejects.toMatchObject(indexFailure('line 2 is not JSON'));
    expect(readFileSync(home.layout.index).subarray(0, before.length).equals(before)).toBe(true);
    expect(readFileSync(home.layout.index).length).toBe(before.length + 'not json\n'.length);
    // The advice says what deleting the line costs, and how undo brings it back.
    await expect(listSnapshots(home.layout)).rejects.toMatchObject({
      message: expect.stringContaining(`fix or delete the named line in ${home.layout.index} (snapshots stay in manifests/; only the history line is lost, and undo <snapshot-id> writes it back when a receipt names that snapshot)`),
    });
  });

  it('an index entry with an unknown field is rejected', async () => {
    const entry = JSON.parse(readFileSync(home.layout.index, 'utf8').trim());
    appendFileSync(home.layout.index, JSON.stringify({ ...entry, extra: 1 }) + '\n');
    await expect(listSnapshots(home.layout)).rejects.toMatchObject(indexFailure('line 2 is not a valid index entry'));
  });

  it('an index entry whose time no date can show is damage, named with its line, not a crash of the listing', async () => {
    const entry = JSON.parse(readFileSync(home.layout.index, 'utf8').trim());
    appendFileSync(home.layout.index, JSON.stringify({ ...entry, ts: 99_999_999_999_999 }) + '\n');
    const before = readFileSync(home.layout.index);
    await expect(listSnapshots(home.layout)).rejects.toMatchObject(indexFailure('line 2 is not a valid index entry \\(/ts must be <= 253402300799\\)'));
    await expect(sessionHistory(home.layout, 'sess-a')).rejects.toMatchObject(indexFailure('line 2 is not a valid index entry'));
    expect(readFileSync(home.layout.index).equals(before)).toBe(true);
  });

  it('an index line over 64 KiB is rejected', async () => {
    appendFileSync(home.layout.index, JSON.stringify({ pad: 'x'.repeat(70_000) }) + '\n');
    await expect(listSnapshots(home.layout)).rejects.toMatchObject(indexFailure('line 2 is longer than 65536 bytes'));
  });

  it('an index past the size limit is refused with advice prune cannot loop on', async () => {
    // Sparse: the size is what counts, and no append of gobstopper's makes an index this large.
    truncateSync(home.layout.index, 128 * 1024 * 1024 + 1);
    const refused = { code: 'vault_damaged', message: expect.stringMatching(/over the 134217728-byte limit.*restore .* from a backup, or delete its oldest lines/) };
    await expect(listSnapshots(home.layout)).rejects.toMatchObject(refused);
    await expect(snapshotFile(home.layout, { path, sessionId: 'sess-a', provider: 'claude_code', strategy: 'snapshot' })).rejects.toMatchObject(refused);
    await expect(listSnapshots(home.layout)).rejects.not.toMatchObject({ message: expect.stringContaining('prune') });
  });

  it('a torn last index line is rejected', async () => {
    appendFileSync(home.layout.index, '{"ts":1');
    await expect(listSnapshots(home.layout)).rejects.toMatchObject(indexFailure('last line is not terminated'));
  });

  it('a whole last index line without its newline is named as such, and the repair keeps it', async () => {
    const text = readFileSync(home.layout.index, 'utf8');
    writeFileSync(home.layout.index, text.slice(0, -1));
    const refused = (await listSnapshots(home.layout).catch((error: unknown) => error)) as Error;
    expect(refused).toMatchObject({ code: 'vault_damaged', message: expect.stringContaining('the last line is a whole entry without its newline') });
    expect(refused.message).toContain(`printf '\\n' >> ${home.layout.index}`);
    expect(refused.message).not.toContain('delete');
    // Following the advice gives the history back whole.
    appendFileSync(home.layout.index, '\n');
    expect((await listSnapshots(home.layout)).map((e) => e.session_id)).toEqual(['sess-a']);
  });

  it('a read that meets an append still being written waits for it instead of calling the index damaged', async () => {
    const line = readFileSync(home.layout.index, 'utf8').trimEnd();
    const other = JSON.stringify({ ...JSON.parse(line), session_id: 'sess-b', path: join(home.sessions, 'b.jsonl') });
    // Another process has written half of its line when this one reads.
    appendFileSync(home.layout.index, other.slice(0, 40));
    const reading = listSnapshots(home.layout);
    setTimeout(() => appendFileSync(home.layout.index, other.slice(40) + '\n'), 10);
    expect((await reading).map((e) => e.session_id)).toEqual(['sess-b', 'sess-a']);
  });

  it('a truncated chunk is named when the snapshot is read', async () => {
    const chunk = readdirSync(home.layout.chunks)[0]!;
    truncateSync(join(home.layout.chunks, chunk), 10);
    const expected = { code: 'vault_damaged', message: expect.stringContaining(join(home.layout.chunks, chunk)) };
    await expect(showSnapshot(home.layout, sha)).rejects.toMatchObject(expected);
    await expect(searchSnapshot(home.layout, sha, 'answer')).rejects.toMatchObject(expected);
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0 })).rejects.toMatchObject(expected);
  });

  it('a chunk with changed bytes is detected by its hash, and is not reused by a new snapshot', async () => {
    const chunk = join(home.layout.chunks, readdirSync(home.layout.chunks)[0]!);
    const bytes = readFileSync(chunk);
    bytes[5] ^= 0x20;
    writeFileSync(chunk, bytes);
    await expect(showSnapshot(home.layout, sha)).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining('do not hash to its name') });
    await expect(snapshotFile(home.layout, { path, sessionId: 'sess-a', provider: 'claude_code', strategy: 'snapshot' })).rejects.toMatchObject({
      code: 'vault_damaged',
      message: expect.stringContaining(chunk),
    });
  });

  it('an index line naming a snapshot that is gone is damage, not an unknown snapshot', async () => {
    const entry = JSON.parse(readFileSync(home.layout.index, 'utf8').trim());
    writeFileSync(home.layout.index, JSON.stringify({ ...entry, sha256: '0'.repeat(63) + '1' }) + '\n');
    await expect(showSnapshot(home.layout, 'sess-a')).rejects.toMatchObject(indexFailure(`a line names snapshot 0000000000000000 of claude_code sess-a, which is not in the vault`));
    await expect(chooseSnapshotChecked(home.layout, 'sess-a')).rejects.toMatchObject(indexFailure('which is not in the vault'));
  });

  it('search-snapshot and read-snapshot of a listed snapshot whose manifest is gone report damage, not an unknown snapshot', async () => {
    const entry = JSON.parse(readFileSync(home.layout.index, 'utf8').trim());
    unlinkSync(join(home.layout.manifests, sha));
    const gone = indexFailure(`a line names snapshot ${sha.slice(0, 16)} of claude_code sess-a, which is not in the vault`);
    await expect(searchSnapshot(home.layout, sha, 'x')).rejects.toMatchObject(gone);
    await expect(readSnapshotRecord(home.layout, { snapshot: sha, record: 0 })).rejects.toMatchObject(gone);
    // By the archived source's digest too, as a receipt names it.
    await expect(searchSnapshot(home.layout, entry.source_sha256, 'x')).rejects.toMatchObject(gone);
  });

  it("a session's index line naming another session's snapshot restores neither", async () => {
    const otherPath = writeSession(home.sessions, 'sess-b.jsonl', jsonl(claudeSession('sess-b', 2)));
    const other = (await snapshotFile(home.layout, { path: otherPath, sessionId: 'sess-b', provider: 'claude_code', strategy: 'snapshot' })).entry.sha256;
    const [a, b] = readFileSync(home.layout.index, 'utf8').trim().split('\n');
    // sess-a's line edited to name sess-b's snapshot.
    writeFileSync(home.layout.index, `${JSON.stringify({ ...JSON.parse(a!), sha256: other })}\n${b}\n`);
    const mismatch = indexFailure(`the line for snapshot ${other.slice(0, 16)} says it archived .* of claude_code sess-a`);
    await expect(chooseSnapshot(home.layout, 'sess-a', other)).rejects.toMatchObject(mismatch);
    await expect(chooseSnapshotChecked(home.layout, 'sess-a')).rejects.toMatchObject(mismatch);
    await expect(showSnapshot(home.layout, 'sess-a')).rejects.toMatchObject(mismatch);
    // sess-b's own line still reads.
    await expect(showSnapshot(home.layout, 'sess-b')).resolves.toMatchObject({ sha256: other, session_id: 'sess-b' });
  });

  it('a missing chunk is named', async () => {
    const chunk = join(home.layout.chunks, readdirSync(home.layout.chunks)[0]!);
    unlinkSync(chunk);
    await expect(showSnapshot(home.layout, sha)).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`${chunk}: chunk is missing`) });
  });

  it('a manifest whose bytes no longer hash to its name is named', async () => {
    const manifest = join(home.layout.manifests, sha);
    const text = readFileSync(manifest, 'utf8').replace('"schema_version":3', '"schema_version": 3');
    writeFileSync(manifest, text);
    const expected = { code: 'vault_damaged', message: expect.stringContaining(`${manifest}: manifest bytes do not hash to its name`) };
    await expect(showSnapshot(home.layout, sha)).rejects.toMatchObject(expected);
    await expect(searchSnapshot(home.layout, sha, 'x')).rejects.toMatchObject(expected);
  });
});
