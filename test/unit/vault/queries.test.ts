import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chooseSnapshot } from '../../../kernel/services/undo.js';
import { diffSnapshots } from '../../../kernel/vault/diff.js';
import { serializeEntry } from '../../../kernel/vault/index-file.js';
import { listSnapshots, sessionHistory } from '../../../kernel/vault/list.js';
import { showSnapshot } from '../../../kernel/vault/show.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { claudeAssistant, claudeUser, jsonl, makeVaultHome, writeSession, type VaultHome } from './helpers.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('vault, history, show and diff', () => {
  let home: VaultHome;
  beforeEach(() => {
    home = makeVaultHome();
  });
  afterEach(() => home.cleanup());

  async function archive(name: string, sessionId: string, records: unknown[], strategy = 'snapshot', provider = 'claude_code') {
    const path = writeSession(home.sessions, name, jsonl(records));
    return (await snapshotFile(home.layout, { path, sessionId, provider, strategy })).entry;
  }

  it('lists nothing when there is no vault yet', async () => {
    expect(await listSnapshots(home.layout)).toEqual([]);
    await expect(sessionHistory(home.layout, 'abc')).rejects.toMatchObject({ code: 'session_not_archived' });
  });

  it('lists newest first, filters by id prefix or path, and keeps one session per history', async () => {
    const a1 = await archive('aaaa-1.jsonl', 'aaaa-1111', [claudeUser('aaaa-1111', 'one', 'u1')]);
    const b1 = await archive('aaaa-2.jsonl', 'aaaa-2222', [claudeUser('aaaa-2222', 'two', 'u1')]);
    const a2 = await archive('aaaa-1.jsonl', 'aaaa-1111', [claudeUser('aaaa-1111', 'one', 'u1'), claudeAssistant('aaaa-1111', 'more', 'a1')], 'elide');

    expect(await listSnapshots(home.layout)).toEqual([a2, b1, a1]);
    expect(await listSnapshots(home.layout, 'aaaa-1')).toEqual([a2, a1]);
    expect(await listSnapshots(home.layout, a1.path)).toEqual([a2, a1]);
    expect(await sessionHistory(home.layout, 'aaaa-1')).toEqual([a2, a1]);
    // Ids match without regard to case, as plan and verify match them.
    expect(await sessionHistory(home.layout, 'AAAA-1')).toEqual([a2, a1]);
    expect(await sessionHistory(home.layout, a1.path)).toEqual([a2, a1]);
    await expect(sessionHistory(home.layout, 'aaaa')).rejects.toMatchObject({
      code: 'ambiguous_session',
      exit: 2,
      message: expect.stringContaining("'aaaa' matches 2 sessions; use a longer prefix or a path: claude_code aaaa-1111 at "),
      details: { candidates: [expect.objectContaining({ provider: 'claude_code', session_id: 'aaaa-1111' }), expect.objectContaining({ provider: 'claude_code', session_id: 'aaaa-2222' })] },
    });
    await expect(sessionHistory(home.layout, 'zzz')).rejects.toMatchObject({ code: 'session_not_archived' });
    await expect(sessionHistory(home.layout, 'bad\u0001id')).rejects.toMatchObject({ code: 'bad_selector' });
  });

  it('keeps one history for a session whose file moved (the old path is gone), and refuses an id in two files that both exist', async () => {
    const before = await archive('cccc-1.jsonl', 'cccc-1111', [claudeUser('cccc-1111', 'one', 'u1')]);
    // The client moved it (as Codex does into archived_sessions/) and it was archived again there.
    rmSync(before.path);
    const after = await archive('cccc-1-moved.jsonl', 'cccc-1111', [claudeUser('cccc-1111', 'one', 'u1'), claudeAssistant('cccc-1111', 'more', 'a1')]);
    expect(await sessionHistory(home.layout, 'cccc-1111')).toEqual([after, before]);
    // A copy that exists beside it is another session under the same id: only the path tells them apart.
    const copy = await archive('cccc-1-copy.jsonl', 'cccc-1111', [claudeUser('cccc-1111', 'copy', 'u1')]);
    await expect(sessionHistory(home.layout, 'cccc-1111')).rejects.toMatchObject({
      code: 'ambiguous_session',
      details: { candidates: [expect.objectContaining({ path: copy.path }), expect.objectContaining({ path: after.path })] },
    });
    expect(await sessionHistory(home.layout, copy.path)).toEqual([copy]);
  });

  it('shows size, record types and label by sha prefix or by session', async () => {
    const records = [claudeUser('s1', 'q', 'u1'), claudeAssistant('s1', 'a', 'a1'), claudeUser('s1', 'q2', 'u2'), { no_type: true }];
    const entry = await archive('s1.jsonl', 's1', records, 'elide');
    const byPrefix = await showSnapshot(home.layout, entry.sha256.slice(0, 16));
    expect(byPrefix).toEqual({
      sha256: entry.sha256,
      source_sha256: entry.source_sha256,
      bytes: entry.bytes,
      record_count: 4,
      record_types: { user: 2, assistant: 1, unknown: 1 },
      provider: 'claude_code',
      session_id: 's1',
      path: entry.path,
      strategy: 'elide',
      ts: entry.ts,
    });
    expect(await showSnapshot(home.layout, 's1')).toEqual(byPrefix);
    await expect(showSnapshot(home.layout, 'f'.repeat(16))).rejects.toMatchObject({ code: 'snapshot_not_found' });

    // Its manifest moved out of the vault, the index still names it: damage to repair, not "no such snapshot".
    rmSync(join(home.layout.manifests, entry.sha256));
    for (const target of [entry.sha256.slice(0, 16), 's1']) {
      await expect(showSnapshot(home.layout, target)).rejects.toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`a line names snapshot ${entry.sha256.slice(0, 16)} of claude_code s1, which is not in the vault`) });
    }
  });

  it('diffs two snapshots by record hash with per-type counts', async () => {
    const shared = claudeUser('d', 'kept', 'u1');
    const removed = claudeAssistant('d', 'dropped', 'a1');
    const added = claudeAssistant('d', 'new', 'a2');
    const a = await archive('d-a.jsonl', 'd', [shared, removed, { type: 'summary' }]);
    const b = await archive('d-b.jsonl', 'd', [shared, added, added, { type: 'summary' }, 'not an object']);
    const result = await diffSnapshots(home.layout, a.sha256.slice(0, 10), b.sha256);
    expect(result).toEqual({
      sha_a: a.sha256,
      sha_b: b.sha256,
      record_count_a: 3,
      record_count_b: 5,
      // `added` twice in b and never in a: two records added, not one.
      added_count: 3,
      removed_count: 1,
      added: [sha256(JSON.stringify(added)), sha256(JSON.stringify(added)), sha256(JSON.stringify('not an object'))],
      removed: [sha256(JSON.stringify(removed))],
      added_by_type: { assistant: 2, unknown: 1 },
      removed_by_type: { assistant: 1 },
      type_summary_a: { assistant: 1, summary: 1, user: 1 },
      type_summary_b: { assistant: 2, summary: 1, unknown: 1, user: 1 },
    });
    // A record repeated on both sides is matched copy for copy: only the copies one side has beyond
    // the other's count differ, the later ones, and the counts always add up.
    const c = await archive('d-c.jsonl', 'd', [shared, shared, removed, shared]);
    const back = await diffSnapshots(home.layout, b.sha256, c.sha256);
    expect(back).toMatchObject({ added_count: 3, removed_count: 4, added: [sha256(JSON.stringify(shared)), sha256(JSON.stringify(removed)), sha256(JSON.stringify(shared))], added_by_type: { assistant: 1, user: 2 }, removed_by_type: { assistant: 2, summary: 1, unknown: 1 } });
    expect(back.record_count_b - back.added_count).toBe(back.record_count_a - back.removed_count);
    await expect(diffSnapshots(home.layout, 'xyz', b.sha256)).rejects.toMatchObject({ code: 'invalid_sha' });
    // A session id's prefix is no snapshot's: with two sessions under it, both are named, not one of them.
    await archive('dd-1.jsonl', 'ddee0001', [claudeUser('ddee0001', 'one', 'u1')]);
    await archive('dd-2.jsonl', 'ddee0002', [claudeUser('ddee0002', 'two', 'u1')]);
    await expect(diffSnapshots(home.layout, 'ddee0001', b.sha256)).rejects.toMatchObject({ code: 'snapshot_not_found', message: expect.stringContaining('ddee0001 starts the id of archived session ddee0001,') });
    await expect(diffSnapshots(home.layout, 'ddee', b.sha256)).rejects.toMatchObject({
      code: 'snapshot_not_found',
      message: "no snapshot ddee in the vault; ddee starts the ids of 2 archived sessions (ddee0001, ddee0002), and diff compares two snapshots (gobstopper history <session> lists a session's snapshot ids)",
    });
    // One hex character too many is named as such, not as "not hex".
    await expect(diffSnapshots(home.layout, `${b.sha256}0`, b.sha256)).rejects.toMatchObject({ code: 'invalid_sha', message: expect.stringContaining('it has 65 hex characters, a full id has 64') });
    // show and undo take a session or a snapshot: a word too long for an id is not looked up as a session.
    await expect(showSnapshot(home.layout, `${b.sha256}0`)).rejects.toMatchObject({ code: 'invalid_sha', message: expect.stringContaining('it has 65 hex characters, a full id has 64') });
    await expect(chooseSnapshot(home.layout, `${b.sha256}0`)).rejects.toMatchObject({ code: 'invalid_sha', message: expect.stringContaining('it has 65 hex characters') });
  });

  it('refuses an ambiguous snapshot prefix, and one too short to be meant as an id', async () => {
    // 17 snapshots: at least two share a first hex digit.
    const entries = [];
    for (let i = 0; i < 17; i++) entries.push(await archive(`p${i}.jsonl`, `p${i}`, [{ type: 'x', i }]));
    const digits = entries.map((e) => e.sha256[0]!);
    const shared = digits.find((d, i) => digits.indexOf(d) !== i)!;
    await expect(diffSnapshots(home.layout, shared, entries[0]!.sha256)).rejects.toMatchObject({ code: 'invalid_sha', message: expect.stringContaining('at least 4 hex characters') });
    // Two ids sharing four digits are as likely as a vault of hundreds of snapshots makes them.
    for (const tail of ['0', '1']) writeFileSync(join(home.layout.manifests, `abcd${tail.repeat(60)}`), '');
    await expect(diffSnapshots(home.layout, 'abcd', entries[0]!.sha256)).rejects.toMatchObject({
      code: 'ambiguous_sha',
      message: `snapshot prefix abcd matches 2 snapshots (abcd${'0'.repeat(60)}, abcd${'1'.repeat(60)}); ambiguous, use the full SHA-256`,
      details: { candidates: [`abcd${'0'.repeat(60)}`, `abcd${'1'.repeat(60)}`] },
    });
    // Past four, the message names four and counts the rest.
    for (const tail of ['2', '3', '4', '5']) writeFileSync(join(home.layout.manifests, `abcd${tail.repeat(60)}`), '');
    await expect(diffSnapshots(home.layout, 'abcd', entries[0]!.sha256)).rejects.toMatchObject({
      message: `snapshot prefix abcd matches 6 snapshots (${['0', '1', '2', '3'].map((t) => `abcd${t.repeat(60)}`).join(', ')}, and 2 more (--json lists them all)); ambiguous, use the full SHA-256`,
    });
  });

  it("undo's --sha takes a prefix other snapshots share when only one of them is the target's", async () => {
    const own = await archive('q.jsonl', 'q', [claudeUser('q', 'v1', 'u1')]);
    await archive('r.jsonl', 'r', [claudeUser('r', 'v1', 'u1')]);
    const prefix = own.sha256.slice(0, 4);
    writeFileSync(join(home.layout.manifests, `${prefix}${own.sha256[4] === '0' ? '1' : '0'}${'0'.repeat(59)}`), '');
    // Across the vault the prefix names two snapshots; among q's states, one.
    await expect(diffSnapshots(home.layout, prefix, own.sha256)).rejects.toMatchObject({ code: 'ambiguous_sha' });
    expect((await chooseSnapshot(home.layout, 'q', prefix)).sha256).toBe(own.sha256);
    // For a session none of them belongs to, it is still ambiguous.
    await expect(chooseSnapshot(home.layout, 'r', prefix)).rejects.toMatchObject({ code: 'ambiguous_sha' });
  });

  it("undo's --sha names the damage when the only snapshot of the target's a prefix matches is damaged", async () => {
    const own = await archive('q.jsonl', 'q', [claudeUser('q', 'v1', 'u1')]);
    await archive('r.jsonl', 'r', [claudeUser('r', 'v1', 'u1')]);
    const prefix = own.sha256.slice(0, 4);
    const other = `${prefix}${own.sha256[4] === '0' ? '1' : '0'}${'0'.repeat(59)}`;
    writeFileSync(join(home.layout.manifests, other), '');
    const manifest = join(home.layout.manifests, own.sha256);
    chmodSync(manifest, 0o600);
    appendFileSync(manifest, ' ');
    // q's line names the damaged manifest, so that is the state meant: the damage and its repair,
    // not "ambiguous", which would send the user after a full id that fails the same way.
    await expect(chooseSnapshot(home.layout, 'q', prefix)).rejects.toMatchObject({
      code: 'vault_damaged',
      message: expect.stringContaining(`${manifest}: manifest bytes do not hash to its name; repair required: move ${manifest} out of the vault`),
    });
    // r has none of them: still ambiguous.
    await expect(chooseSnapshot(home.layout, 'r', prefix)).rejects.toMatchObject({ code: 'ambiguous_sha' });
  });

  it("undo's --sha stays ambiguous when the prefix matches two of the target's states, one of them damaged", async () => {
    const own = await archive('q.jsonl', 'q', [claudeUser('q', 'v1', 'u1')]);
    const prefix = own.sha256.slice(0, 4);
    const damaged = `${prefix}${own.sha256[4] === '0' ? '1' : '0'}${'0'.repeat(59)}`;
    writeFileSync(join(home.layout.manifests, damaged), '', { mode: 0o600 });
    // A second line of q names it: both are q's, so restoring the intact one may not be what was meant.
    appendFileSync(home.layout.index, serializeEntry({ ...own, sha256: damaged, ts: own.ts + 1 }));
    await expect(chooseSnapshot(home.layout, 'q', prefix)).rejects.toMatchObject({ code: 'ambiguous_sha', details: { candidates: [own.sha256, damaged].sort() } });
    expect((await chooseSnapshot(home.layout, 'q', own.sha256)).sha256).toBe(own.sha256);
  });

  it('treats an edited file archived again as a new state of the same stream', async () => {
    const path = writeSession(home.sessions, 'e.jsonl', jsonl([claudeUser('e', 'v1', 'u1')]));
    await snapshotFile(home.layout, { path, sessionId: 'e', provider: 'claude_code', strategy: 'snapshot' });
    writeFileSync(path, jsonl([claudeUser('e', 'v2', 'u1')]));
    await snapshotFile(home.layout, { path, sessionId: 'e', provider: 'claude_code', strategy: 'pre-undo' });
    expect((await sessionHistory(home.layout, 'e')).map((x) => x.strategy)).toEqual(['pre-undo', 'snapshot']);
  });

  it('undo says how to restore a session that has only pre-undo states, which it does not pick by itself', async () => {
    const path = writeSession(home.sessions, 'p.jsonl', jsonl([claudeUser('p', 'v1', 'u1')]));
    const { entry } = await snapshotFile(home.layout, { path, sessionId: 'p', provider: 'claude_code', strategy: 'pre-undo' });
    await expect(chooseSnapshot(home.layout, 'p')).rejects.toMatchObject({ code: 'nothing_to_undo', message: expect.stringContaining("'p' has only pre-undo snapshots") });
    await expect(chooseSnapshot(home.layout, 'p')).rejects.toMatchObject({ message: expect.stringContaining('pass one with --sha') });
    expect((await chooseSnapshot(home.layout, 'p', entry.sha256)).sha256).toBe(entry.sha256);
  });
});
