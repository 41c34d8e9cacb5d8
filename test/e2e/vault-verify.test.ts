/**
 * `vault --verify` as a user runs it (the built CLI) on a vault written by `apply` and `snapshot`:
 * a healthy vault passes, and damage of each kind is named on the snapshot it hits, while the
 * check leaves every file of the vault as it found it.
 */
import { appendFileSync, chmodSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as V from '../../schemas/generated/validators.js';
import type { VaultVerifyCommandOutput } from '../../schemas/generated/types.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome, listFiles, sha256File } from '../helpers/demo-home.js';

type Home = ReturnType<typeof demoHome>;

const manifestChunks = (vault: string, sha: string): string[] => (JSON.parse(readFileSync(join(vault, 'manifests', sha), 'utf8')) as { chunks: string[] }).chunks;

/** Every file under the vault with its mode, size and digest: what a read-only check must leave alone. */
function vaultFiles(vault: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const file of listFiles(vault)) {
    const st = statSync(file);
    files[relative(vault, file)] = `${(st.mode & 0o777).toString(8)} ${st.size} ${sha256File(file)}`;
  }
  return files;
}

/** `vault [args] --verify --json` in `home`, its answer held to the schema. */
async function verifyJsonIn(home: Home, ...args: string[]): Promise<{ code: number | null; result: VaultVerifyCommandOutput }> {
  const run = await runJson<VaultVerifyCommandOutput>(['vault', ...args, '--verify'], home.env);
  expect(V.validateVaultVerifyCommandOutput(run.json), JSON.stringify(V.validateVaultVerifyCommandOutput.errors)).toBe(true);
  return { code: run.code, result: run.json };
}

/** A client writes one more turn, then the session goes idle. */
function addTurn(path: string): void {
  appendFileSync(path, readFileSync(path, 'utf8').split('\n')[1] + '\n');
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(path, hourAgo, hourAgo);
}

describe('vault --verify (built CLI)', () => {
  let home: Home;
  let vault: string;
  let claudeSource: string;
  let published: string;
  let codexOld: string;
  let codexNew: string;
  let unindexed: string;

  const verifyJson = (...args: string[]) => verifyJsonIn(home, ...args);

  beforeAll(async () => {
    home = demoHome();
    vault = join(home.dataHome, 'gobstopper', 'vault');
    expect((await runJson(['apply', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    expect((await runJson(['snapshot', DEMO_CODEX_ID], home.env)).code).toBe(0);
    addTurn(home.codexSession);
    expect((await runJson(['snapshot', DEMO_CODEX_ID], home.env)).code).toBe(0);
    // A snapshot stopped after its manifest and before its index line: stored, but no line names it.
    addTurn(home.codexSession);
    expect((await runJson(['snapshot', DEMO_CODEX_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'vault.before_index' } })).code).not.toBe(0);

    const listed = (await runJson<Array<{ sha256: string; provider: string }>>(['vault'], home.env)).json;
    claudeSource = listed.find((e) => e.provider === 'claude_code')!.sha256;
    [codexNew, codexOld] = listed.filter((e) => e.provider === 'codex').map((e) => e.sha256) as [string, string];
    const receipts = listFiles(join(vault, 'operations')).filter((f) => f.endsWith('.json'));
    published = (JSON.parse(readFileSync(receipts[0]!, 'utf8')) as { output_manifest_sha256: string }).output_manifest_sha256;
    const stored = listFiles(join(vault, 'manifests')).map((f) => relative(join(vault, 'manifests'), f));
    unindexed = stored.find((sha) => ![claudeSource, published, codexOld, codexNew].includes(sha))!;
    expect(stored).toHaveLength(5);
  });
  afterAll(() => home?.cleanup());

  it('passes a healthy vault, counting each snapshot once, split as the listing counts them, and naming the one without an index line', async () => {
    const listing = await runCli(['vault'], home.env);
    expect(listing.stdout).toMatch(/^3 snapshot\(s\)/m);
    const human = await runCli(['vault', '--verify'], home.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).not.toMatch(/^damaged /m);
    expect(human.stdout).toContain(`1 stored snapshot has no index line`);
    expect(human.stdout).toContain(unindexed.slice(0, 16));
    // The 3 the listing shows, the fork's own bytes apply kept, and the one without a line.
    expect(human.stdout.trimEnd().split('\n').at(-1)).toBe("5 stored snapshots read back (3 listed, 1 a fork's retained copy, 1 unindexed): 0 damaged; 1 receipt read: 0 damaged");
    // Piped: no progress line.
    expect(human.stderr).toBe('');

    const { code, result } = await verifyJson();
    expect(code).toBe(0);
    expect(result).toEqual({ verified: 5, listed: 3, retained: 1, damaged: [], unindexed: 1, unindexed_snapshots: [unindexed], index_problem: null, receipts: 1, damaged_receipts: [], damaged_card_files: [] });
    // A transcript limit lowered since they were archived bounds what a parse holds, not what this
    // check reads a chunk at a time: the snapshots are as intact as before, not damaged.
    const lowered = await runCli(['vault', '--verify'], home.env, { extraEnv: { GOBSTOPPER_MAX_TRANSCRIPT_BYTES: '1024' } });
    expect(lowered.code, lowered.stdout).toBe(0);
    expect(lowered.stdout).not.toMatch(/^damaged /m);
    expect(lowered.stdout).toContain(': 0 damaged\n');
  });

  it('names each damaged snapshot with its problem, exits 1, and leaves every file of the vault as it was', async () => {
    const missing = manifestChunks(vault, claudeSource)[0]!;
    unlinkSync(join(vault, 'chunks', missing));
    const overwritten = manifestChunks(vault, codexOld)[0]!;
    const chunkFile = join(vault, 'chunks', overwritten);
    const bytes = readFileSync(chunkFile);
    bytes[0] = bytes[0]! ^ 0x20;
    writeFileSync(chunkFile, bytes);
    truncateSync(join(vault, 'manifests', unindexed), 20);
    // Their chunks are their own: the damage reaches no other snapshot.
    for (const sha of [published, codexNew]) expect(manifestChunks(vault, sha)).not.toContain(missing);
    for (const sha of [published, codexNew]) expect(manifestChunks(vault, sha)).not.toContain(overwritten);
    const before = vaultFiles(vault);

    const human = await runCli(['vault', '--verify'], home.env);
    expect(human.code).toBe(1);
    const damagedLines = human.stdout.split('\n').filter((l) => l.startsWith('damaged '));
    expect(damagedLines).toEqual([
      `damaged ${codexOld.slice(0, 16)} (codex ${DEMO_CODEX_ID}): chunk ${overwritten} is damaged: chunk bytes do not hash to its name`,
      `damaged ${claudeSource.slice(0, 16)} (claude_code ${DEMO_CLAUDE_ID}): missing chunk ${missing}`,
      `damaged ${unindexed.slice(0, 16)} (no index line): manifest unreadable: manifest bytes do not hash to its name`,
    ]);
    expect(human.stdout).toContain("5 stored snapshots read back (3 listed, 1 a fork's retained copy, 1 unindexed): 3 damaged");
    for (const healthy of [published, codexNew]) expect(human.stdout).not.toContain(healthy.slice(0, 16));

    const { code, result } = await verifyJson();
    expect(code).toBe(1);
    expect(result.verified).toBe(5);
    expect(result.unindexed_snapshots).toEqual([unindexed]);
    expect(result.damaged.map((d) => [d.sha256, d.provider, d.session_id, d.indexed, d.problem.code])).toEqual([
      [codexOld, 'codex', DEMO_CODEX_ID, true, 'chunk_damaged'],
      [claudeSource, 'claude_code', DEMO_CLAUDE_ID, true, 'chunk_missing'],
      [unindexed, null, null, false, 'manifest_unreadable'],
    ]);

    // Nothing written, nothing added: no lock, no custody hold.
    expect(vaultFiles(vault)).toEqual(before);
  });

  it('with a session checks only that session\'s indexed snapshots', async () => {
    const codex = await verifyJson(DEMO_CODEX_ID.slice(0, 8));
    expect(codex.code).toBe(1);
    expect(codex.result).toMatchObject({ verified: 2, listed: 2, retained: 0, unindexed: 0 });
    expect(codex.result.damaged.map((d) => d.sha256)).toEqual([codexOld]);

    const human = await runCli(['vault', home.claudeSession, '--verify'], home.env);
    expect(human.code).toBe(1);
    expect(human.stdout.split('\n').filter((l) => l.startsWith('damaged '))).toEqual([`damaged ${claudeSource.slice(0, 16)} (claude_code ${DEMO_CLAUDE_ID}): missing chunk ${manifestChunks(vault, claudeSource)[0]}`]);
    expect(human.stdout).toContain('1 stored snapshot read back (1 listed): 1 damaged');

    const none = await runJson(['vault', 'ffffffff', '--verify'], home.env);
    expect(none.code).toBe(1);
    expect(none.json).toMatchObject({ ok: false, error: { code: 'session_not_archived' } });
  });

  it('a damaged index is named with its repair, and every stored snapshot is still read back', async () => {
    const index = join(vault, 'index.jsonl');
    const lines = readFileSync(index, 'utf8');
    appendFileSync(index, 'not json\n');
    const before = vaultFiles(vault);
    const broken = lines.split('\n').length;

    const human = await runCli(['vault', '--verify'], home.env);
    expect(human.code).toBe(1);
    expect(human.stdout.split('\n')[0]).toBe(
      `index unreadable, so every stored snapshot was read back as one no index line names: vault damaged: ${index}: line ${broken} is not JSON; repair required: fix or delete the named line in ${index} (snapshots stay in manifests/; only the history line is lost, and undo <snapshot-id> writes it back when a receipt names that snapshot)`,
    );
    // The damage found by the earlier check is still found, now on snapshots no line names.
    expect(human.stdout).toContain("5 stored snapshots read back (0 listed, 1 a fork's retained copy, 4 unindexed): 3 damaged");

    const { code, result } = await verifyJson();
    expect(code).toBe(1);
    expect(result.index_problem).toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`line ${broken} is not JSON`) });
    expect(result).toMatchObject({ verified: 5, listed: 0, retained: 1, unindexed: 4 });
    expect(result.damaged.map((d) => [d.sha256, d.indexed, d.problem.code]).sort()).toEqual(
      [
        [codexOld, false, 'chunk_damaged'],
        [claudeSource, false, 'chunk_missing'],
        [unindexed, false, 'manifest_unreadable'],
      ].sort(),
    );
    // With a session the index must be read to know its snapshots: refused, as every reader refuses it.
    const one = await runJson(['vault', DEMO_CODEX_ID.slice(0, 8), '--verify'], home.env);
    expect(one.json).toMatchObject({ ok: false, error: { code: 'vault_damaged' } });
    expect(vaultFiles(vault)).toEqual(before);
    writeFileSync(index, lines);
  });
});

describe('vault --verify reads every operation receipt (built CLI)', () => {
  interface Receipt {
    operation: string;
    source_session_id: string;
    output_session_id: string;
    snapshot_manifest_sha256: string;
    output_manifest_sha256: string;
  }
  let home: Home;
  let vault: string;
  let claude: Receipt;
  let claudeFile: string;
  let healthy: VaultVerifyCommandOutput;

  const verifyJson = (...args: string[]) => verifyJsonIn(home, ...args);

  /** Runs `check` with the Claude fork's receipt damaged by `damage`, then puts the receipt back. */
  async function withDamagedReceipt(damage: () => void, check: () => Promise<void>): Promise<void> {
    const bytes = readFileSync(claudeFile);
    damage();
    try {
      await check();
    } finally {
      rmSync(claudeFile, { force: true });
      writeFileSync(claudeFile, bytes, { mode: 0o600 });
      chmodSync(claudeFile, 0o600);
    }
  }

  /** The human line and the JSON entry for the damaged Claude receipt, and what the refusing prune says. */
  async function expectDamagedReceipt(code: string, problem: string, sessionId: string | null): Promise<{ human: string; message: string }> {
    const before = vaultFiles(vault);
    const run = await runCli(['vault', '--verify'], home.env);
    expect(run.code, run.stdout).toBe(1);
    const lines = run.stdout.split('\n').filter((l) => l.startsWith('damaged receipt '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`damaged receipt ${claude.operation.slice(0, 16)} (${sessionId === null ? 'session unknown' : `session ${sessionId}`}): `);
    expect(lines[0]).toContain(claudeFile);
    expect(lines[0]).toContain(problem);
    expect(run.stdout).toMatch(/; 2 receipts read: 1 damaged\n/);

    const { code: exit, result } = await verifyJson();
    expect(exit).toBe(1);
    expect(result.receipts).toBe(2);
    expect(result.damaged_receipts).toEqual([{ file: claudeFile, operation: claude.operation, session_id: sessionId, problem: { code, message: expect.stringContaining(problem) } }]);
    const message = result.damaged_receipts[0]!.problem.message;
    expect(lines[0]!.endsWith(`: ${message}`)).toBe(true);
    // Read-only: nothing written, no lock taken.
    expect(vaultFiles(vault)).toEqual(before);
    return { human: run.stdout, message };
  }

  /** A receipt that cannot be read: prune refuses it in the very words the check used. */
  async function expectPruneRefuses(message: string): Promise<void> {
    const prune = await runJson(['prune'], home.env);
    expect(prune.code).not.toBe(0);
    expect(prune.json).toMatchObject({ ok: false, error: { message } });
  }

  beforeAll(async () => {
    home = demoHome();
    vault = join(home.dataHome, 'gobstopper', 'vault');
    expect((await runJson(['apply', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    expect((await runJson(['apply', DEMO_CODEX_ID], home.env)).code).toBe(0);
    const receipts = listFiles(join(vault, 'operations'))
      .filter((f) => f.endsWith('.json'))
      .map((file) => ({ file, receipt: JSON.parse(readFileSync(file, 'utf8')) as Receipt }));
    expect(receipts).toHaveLength(2);
    const claudeEntry = receipts.find((r) => r.receipt.source_session_id === DEMO_CLAUDE_ID)!;
    claude = claudeEntry.receipt;
    claudeFile = claudeEntry.file;
  });
  afterAll(() => home?.cleanup());

  it('a healthy vault: both receipts read, exit 0, the forks\' copies counted as retained', async () => {
    const run = await runCli(['vault', '--verify'], home.env);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).not.toMatch(/^damaged /m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe("4 stored snapshots read back (2 listed, 2 forks' retained copies): 0 damaged; 2 receipts read: 0 damaged");
    const { code, result } = await verifyJson();
    expect(code).toBe(0);
    healthy = result;
    expect(result).toEqual({ verified: 4, listed: 2, retained: 2, damaged: [], unindexed: 0, unindexed_snapshots: [], index_problem: null, receipts: 2, damaged_receipts: [], damaged_card_files: [] });
    // One session: its own receipt only.
    expect((await verifyJson(DEMO_CODEX_ID.slice(0, 8))).result).toMatchObject({ verified: 1, receipts: 1, damaged_receipts: [] });
  });

  it('a receipt that is not JSON is damage: named with its repair, its fork\'s copy not called a failed apply\'s candidate', async () => {
    await withDamagedReceipt(
      () => writeFileSync(claudeFile, 'garbage\n'),
      async () => {
        const { human, message } = await expectDamagedReceipt('vault_damaged', 'receipt is not JSON; repair required: move ', null);
        expect(message).toBe(`vault damaged: ${claudeFile}: receipt is not JSON; repair required: move ${claudeFile} aside to start this operation over (its snapshots stay in the vault; a fork it already published is then named as the next file to move aside)`);
        // Its fork's copy is no longer known as one: counted unindexed, and the line says why it may be.
        expect(human).toContain("1 stored snapshot has no index line (a failed apply's candidate, a line removed from a damaged index, or a fork's retained copy named by a receipt that cannot be read)");
        expect(human).toContain("4 stored snapshots read back (2 listed, 1 a fork's retained copy, 1 unindexed): 0 damaged; 2 receipts read: 1 damaged");
        const { result } = await verifyJson();
        expect(result).toMatchObject({ verified: 4, listed: 2, retained: 1, unindexed: 1, unindexed_snapshots: [claude.output_manifest_sha256], damaged: [] });
        await expectPruneRefuses(message);

        // For one session: a receipt whose session cannot be told is checked whatever the session, and that is said.
        const one = await runCli(['vault', DEMO_CODEX_ID.slice(0, 8), '--verify'], home.env);
        expect(one.code).toBe(1);
        expect(one.stdout).toContain(`damaged receipt ${claude.operation.slice(0, 16)} (session unknown): ${message}`);
        expect(one.stdout).toContain('a receipt that cannot be read is checked whatever the session: which session it belongs to cannot be told');
        expect(one.stdout).toContain('1 stored snapshot read back (1 listed): 0 damaged; 2 receipts read: 1 damaged');
      },
    );
  });

  it('a receipt with a wrong-typed field is damage', async () => {
    await withDamagedReceipt(
      () => writeFileSync(claudeFile, JSON.stringify({ ...(JSON.parse(readFileSync(claudeFile, 'utf8')) as object), bytes_before: 'many' }, null, 2)),
      async () => {
        const { message } = await expectDamagedReceipt('vault_damaged', 'receipt is invalid (/bytes_before must be integer)', null);
        await expectPruneRefuses(message);
      },
    );
  });

  it('a receipt readable by others is damage (the readers refuse it as insecure)', async () => {
    await withDamagedReceipt(
      () => chmodSync(claudeFile, 0o644),
      async () => {
        const { message } = await expectDamagedReceipt('vault_insecure', `${claudeFile}: has mode 0644, readable by others; run chmod 600 ${claudeFile}`, null);
        await expectPruneRefuses(message);
      },
    );
  });

  it('a symlink in place of a receipt is damage', async () => {
    const elsewhere = join(home.root, 'receipt-copy.json');
    await withDamagedReceipt(
      () => {
        renameSync(claudeFile, elsewhere);
        symlinkSync(elsewhere, claudeFile);
      },
      async () => {
        const { message } = await expectDamagedReceipt('vault_insecure', `${claudeFile}: is a symbolic link; replace the link with a copy of the file it points to`, null);
        await expectPruneRefuses(message);
      },
    );
  });

  it('a receipt naming a snapshot manifests/ does not hold is damage, said with which one', async () => {
    const manifest = join(vault, 'manifests', claude.snapshot_manifest_sha256);
    const aside = join(home.root, 'manifest-aside');
    renameSync(manifest, aside);
    try {
      await expectDamagedReceipt('manifest_missing', `its snapshot_manifest_sha256 ${claude.snapshot_manifest_sha256} names a snapshot manifests/ does not hold; repair required: restore ${manifest} from a backup`, DEMO_CLAUDE_ID);
      // The index line naming the same snapshot is damage of its own.
      const { result } = await verifyJson();
      expect(result.damaged.map((d) => [d.sha256, d.problem.code])).toEqual([[claude.snapshot_manifest_sha256, 'manifest_missing']]);
      // The receipt is readable, so its session is known: checked for its own session, not another's.
      const own = await verifyJson(DEMO_CLAUDE_ID.slice(0, 8));
      expect(own.code).toBe(1);
      expect(own.result.damaged_receipts.map((d) => [d.operation, d.problem.code])).toEqual([[claude.operation, 'manifest_missing']]);
      const other = await verifyJson(DEMO_CODEX_ID.slice(0, 8));
      expect(other.code).toBe(0);
      expect(other.result).toMatchObject({ receipts: 1, damaged_receipts: [] });
    } finally {
      renameSync(aside, manifest);
    }
    // Everything put back: as healthy as before.
    expect((await verifyJson()).result).toEqual(healthy);
  });
});

describe('vault --verify counts each snapshot\'s records against its index lines (built CLI)', () => {
  interface Line {
    sha256: string;
    record_count: number;
  }
  let home: Home;
  let vault: string;
  let index: string;
  let clean: string;
  let lines: Line[];

  const verifyJson = (...args: string[]) => verifyJsonIn(home, ...args);

  /** `text` with index line `n` (1-based) saying `count` records; every other byte as it was. */
  function withRecordCount(text: string, n: number, count: number): string {
    const all = text.split('\n');
    const edited = all[n - 1]!.replace(/"record_count":\d+/, `"record_count":${count}`);
    expect(edited).not.toBe(all[n - 1]);
    all[n - 1] = edited;
    return all.join('\n');
  }

  beforeAll(async () => {
    home = demoHome();
    vault = join(home.dataHome, 'gobstopper', 'vault');
    index = join(vault, 'index.jsonl');
    expect((await runJson(['apply', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    expect((await runJson(['snapshot', DEMO_CODEX_ID], home.env)).code).toBe(0);
    addTurn(home.codexSession);
    expect((await runJson(['snapshot', DEMO_CODEX_ID], home.env)).code).toBe(0);
    clean = readFileSync(index, 'utf8');
    lines = clean.trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
    expect(lines).toHaveLength(3);
    // Each line's count is what show counts reading the bytes: the check compares like with like.
    for (const line of lines) expect((await runJson<{ record_count: number }>(['show', line.sha256], home.env)).json.record_count).toBe(line.record_count);
  });
  afterAll(() => home?.cleanup());

  it('a clean vault passes', async () => {
    const run = await runCli(['vault', '--verify'], home.env);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).not.toMatch(/^damaged /m);
    const { code, result } = await verifyJson();
    expect(code).toBe(0);
    expect(result.damaged).toEqual([]);
  });

  it('a line whose record_count is not its snapshot\'s is damage of that line: named with both counts and the repair, exit 1, nothing written', async () => {
    const n = 2;
    const { sha256, record_count: real } = lines[n - 1]!;
    const wrong = real + 7;
    writeFileSync(index, withRecordCount(clean, n, wrong));
    try {
      const before = vaultFiles(vault);
      const message = `record count mismatch: index line ${n} says ${wrong} records, but the snapshot holds ${real} records (its bytes are intact); repair required: set record_count to ${real} on line ${n} of ${index}`;

      const human = await runCli(['vault', '--verify'], home.env);
      expect(human.code, human.stdout).toBe(1);
      expect(human.stdout.split('\n').filter((l) => l.startsWith('damaged '))).toEqual([`damaged ${sha256.slice(0, 16)} (codex ${DEMO_CODEX_ID}): ${message}`]);
      expect(human.stdout).toContain("4 stored snapshots read back (3 listed, 1 a fork's retained copy): 1 damaged");
      // The line says its own repair; show would only count the bytes again.
      expect(human.stdout).not.toContain('gobstopper show <id>');

      const { code, result } = await verifyJson();
      expect(code).toBe(1);
      expect(result.damaged).toEqual([
        { sha256, session_id: DEMO_CODEX_ID, provider: 'codex', indexed: true, problem: { code: 'record_count_mismatch', message }, record_counts: { counted: real, index_lines: [{ line: n, record_count: wrong }] } },
      ]);
      expect(result).toMatchObject({ verified: 4, listed: 3, retained: 1, unindexed: 0, index_problem: null, damaged_receipts: [] });

      // One session: the line keeps its number in the whole file.
      const codex = await verifyJson(DEMO_CODEX_ID.slice(0, 8));
      expect(codex.code).toBe(1);
      expect(codex.result.damaged).toEqual(result.damaged);
      expect((await verifyJson(DEMO_CLAUDE_ID.slice(0, 8))).code).toBe(0);

      // Read-only: every file byte for byte as it was, the edited index too.
      expect(vaultFiles(vault)).toEqual(before);
    } finally {
      writeFileSync(index, clean);
    }
    // Put right, it passes again.
    expect((await verifyJson()).code).toBe(0);
  });
});
