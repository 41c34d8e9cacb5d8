import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome, sha256File } from '../helpers/demo-home.js';

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

const vaultOf = (h: Home) => join(h.dataHome, 'gobstopper', 'vault');

/** The one receipt in the vault, and its file. */
function onlyReceipt(h: Home): { file: string; receipt: any } {
  const operations = join(vaultOf(h), 'operations');
  const names = readdirSync(operations).filter((n) => /^[0-9a-f]{64}\.json$/.test(n));
  expect(names).toHaveLength(1);
  const file = join(operations, names[0]!);
  return { file, receipt: JSON.parse(readFileSync(file, 'utf8')) };
}

/** A client writes one more turn, then the session goes idle; `snapshot` archives that state. */
async function changeSource(h: Home): Promise<void> {
  appendFileSync(h.claudeSession, readFileSync(h.claudeSession, 'utf8').split('\n')[1] + '\n');
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(h.claudeSession, hourAgo, hourAgo);
  expect((await runJson(['snapshot', DEMO_CLAUDE_ID], h.env)).code).toBe(0);
}

async function applyKilledAt(h: Home, step: string): Promise<void> {
  const killed = await runCli(['apply', DEMO_CLAUDE_ID, '--json'], h.env, { extraEnv: { GOBSTOPPER_FAULT: `${step}:kill` } });
  expect(killed.signal).toBe('SIGKILL');
}

describe('a pending receipt no run will finish', () => {
  it('leaves no partial copy of its fork beside the sessions once prune --apply settled it', async () => {
    home = demoHome();
    await applyKilledAt(home, 'receipt.after_pending');
    const { receipt } = onlyReceipt(home);
    // What a run killed while copying the fork across file systems leaves beside the sessions.
    const dead = spawnSync('true').pid!;
    const copyOf = (pid: number) => join(dirname(receipt.path), `.${basename(receipt.path)}.gobstopper-${pid}-0123456789abcdef`);
    writeFileSync(copyOf(dead), 'the first megabytes of the fork');
    // A copy still being written by a live run, and a file that is not such a copy, stay.
    writeFileSync(copyOf(process.pid), 'still copying');
    const other = join(dirname(receipt.path), '.notes');
    writeFileSync(other, 'mine');
    await changeSource(home);
    await runJson(['prune'], home.env);
    expect(existsSync(copyOf(dead))).toBe(true);
    expect((await runJson(['prune', '--apply'], home.env)).code).toBe(0);
    expect(existsSync(join(vaultOf(home), 'operations', `${receipt.operation}.json`))).toBe(false);
    expect(existsSync(copyOf(dead))).toBe(false);
    expect(existsSync(copyOf(process.pid))).toBe(true);
    expect(readFileSync(other, 'utf8')).toBe('mine');
  });

  it('is removed by prune --apply once its source changed and its fork was never published, so its snapshot is pruned', async () => {
    home = demoHome();
    await applyKilledAt(home, 'receipt.after_pending');
    const { file, receipt } = onlyReceipt(home);
    expect(receipt.completed).toBe(false);
    expect(existsSync(receipt.path)).toBe(false);
    await changeSource(home);
    const manifests = join(vaultOf(home), 'manifests');
    const snapshot = join(manifests, receipt.snapshot_manifest_sha256);
    const candidate = join(manifests, receipt.output_manifest_sha256);

    // The preview says what --apply will do, and changes nothing.
    const preview = await runJson(['prune', '--keep', '1'], home.env);
    expect(preview.json).toMatchObject({ dropped_entries: 1, manifests_removed: 2, unindexed_kept: 0, dry_run: true });
    expect(existsSync(file) && existsSync(snapshot) && existsSync(candidate)).toBe(true);

    const pruned = await runJson(['prune', '--keep', '1', '--apply'], home.env);
    expect(pruned.code).toBe(0);
    expect(pruned.json).toMatchObject({ dropped_entries: 1, manifests_removed: 2, unindexed_kept: 0, dry_run: false });
    expect(existsSync(file)).toBe(false);
    expect(existsSync(snapshot)).toBe(false);
    expect(existsSync(candidate)).toBe(false);
    expect(readdirSync(join(vaultOf(home), 'operations'))).toEqual([]);
    // The vault is whole, and the session as it is now compacts as usual.
    expect((await runJson(['prune', '--keep', '1'], home.env)).json).toMatchObject({ dropped_entries: 0, manifests_removed: 0 });
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(applied.code).toBe(0);
    expect(applied.json.reused).toBe(false);
  });

  it('is left while its source is unchanged: the next apply finishes it', async () => {
    home = demoHome();
    await applyKilledAt(home, 'receipt.after_pending');
    const { file } = onlyReceipt(home);
    const before = readFileSync(file, 'utf8');
    expect((await runJson(['prune', '--keep', '1', '--apply'], home.env)).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(before);
    const rerun = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(rerun.code).toBe(0);
    expect(rerun.json).toMatchObject({ reused: true, interrupted: true, receipt: { completed: true } });
  });

  it('is completed by prune --apply when its fork was published and only the completion was lost', async () => {
    home = demoHome();
    await applyKilledAt(home, 'publish.after_link');
    const { file, receipt } = onlyReceipt(home);
    expect(receipt.completed).toBe(false);
    expect(sha256File(receipt.path)).toBe(receipt.output_sha256);
    await changeSource(home);
    const pruned = await runJson(['prune', '--keep', '1', '--apply'], home.env);
    expect(pruned.code).toBe(0);
    // The fork stands, so its receipt stays as its way back, now complete, and keeps its snapshot.
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ ...receipt, completed: true, ts: expect.any(Number) });
    expect(pruned.json).toMatchObject({ dropped_entries: 0, manifests_removed: 0 });
    expect(existsSync(join(vaultOf(home), 'manifests', receipt.snapshot_manifest_sha256))).toBe(true);
    expect(sha256File(receipt.path)).toBe(receipt.output_sha256);
  });

  it('is left alone while a run holds its operation lock', async () => {
    home = demoHome();
    await applyKilledAt(home, 'receipt.after_pending');
    const { file, receipt } = onlyReceipt(home);
    await changeSource(home);
    const dist = (path: string) => import(join(import.meta.dirname, '..', '..', 'dist', path));
    const { lockOperation } = (await dist('kernel/publish/receipt.js')) as typeof import('../../kernel/publish/receipt.js');
    const { pruneVault } = (await dist('kernel/vault/prune.js')) as typeof import('../../kernel/vault/prune.js');
    const { vaultLayout } = (await dist('kernel/vault/layout.js')) as typeof import('../../kernel/vault/layout.js');
    const env = { ...process.env, ...home.env };
    const layout = vaultLayout(env);
    const lock = await lockOperation(layout, receipt.operation);
    try {
      await expect(pruneVault(layout, { keep: 1, apply: true }, env)).resolves.toMatchObject({ dropped_entries: 0, manifests_removed: 0 });
      expect(existsSync(file)).toBe(true);
    } finally {
      await lock.release();
    }
    await expect(pruneVault(layout, { keep: 1, apply: true }, env)).resolves.toMatchObject({ dropped_entries: 1, manifests_removed: 2 });
    expect(existsSync(file)).toBe(false);
  });
});
