import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishNoClobber } from '../../../kernel/publish/publish.js';
import { createStagingFile, flushStaging } from '../../../kernel/publish/staging.js';
import { stagingDir } from '../../../kernel/paths.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('publishNoClobber', () => {
  let home: TempHome;
  let store: string;
  beforeEach(() => {
    home = makeTempHome('gob-publish-');
    store = join(home.claudeHome, 'projects', 'p');
    mkdirSync(store, { recursive: true });
  });
  afterEach(() => home.cleanup());

  async function staged(content: string): Promise<string> {
    const path = await createStagingFile(home.env);
    writeFileSync(path, content);
    return path;
  }

  it('creates private staging files exclusively in a 0700 staging area', async () => {
    const a = await createStagingFile(home.env);
    const b = await createStagingFile(home.env);
    expect(a).not.toBe(b);
    expect(statSync(stagingDir(home.env)).mode & 0o777).toBe(0o700);
    for (const p of [a, b]) {
      expect(statSync(p).mode & 0o777).toBe(0o600);
      expect(statSync(p).size).toBe(0);
    }
  });

  it('flushes a rendered staging file as it is, and refuses a staging path swapped for a link', async () => {
    const path = await staged('{"a":1}\n');
    await flushStaging(path);
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
    const target = join(home.root, 'elsewhere.jsonl');
    writeFileSync(target, 'x');
    rmSync(path);
    symlinkSync(target, path);
    await expect(flushStaging(path)).rejects.toMatchObject({ code: 'symlink_refused', message: expect.stringMatching(/staging file .* is a symbolic link/) });
    // A FIFO swapped in is refused, not waited on.
    rmSync(path);
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    await expect(flushStaging(path)).rejects.toMatchObject({ code: 'not_regular_file' });
  });

  it('sweeps staging files left by processes that died', async () => {
    const first = await createStagingFile(home.env);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const orphan = join(stagingDir(home.env), `stage-${dead}-0123456789abcdef.jsonl`);
    writeFileSync(orphan, 'partial render');
    await createStagingFile(home.env);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(first)).toBe(true);
  });

  it('links the staged bytes into place, checks them, and removes the staging file', async () => {
    const content = '{"type":"user"}\n';
    const staging = await staged(content);
    const target = join(store, 'new-id.jsonl');
    const published = await publishNoClobber(staging, target, { expectedSha256: sha256(content), expectedBytes: content.length });
    expect(published).toEqual({ path: target, sha256: sha256(content), bytes: content.length });
    expect(readFileSync(target, 'utf8')).toBe(content);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(existsSync(staging)).toBe(false);
  });

  it('never replaces an existing file, a symlink or a dangling symlink', async () => {
    const existing = join(store, 'taken.jsonl');
    writeFileSync(existing, 'original\n');
    const staging = await staged('new\n');
    await expect(publishNoClobber(staging, existing)).rejects.toMatchObject({ code: 'target_exists' });
    expect(readFileSync(existing, 'utf8')).toBe('original\n');

    const dangling = join(store, 'dangling.jsonl');
    symlinkSync(join(store, 'nowhere.jsonl'), dangling);
    await expect(publishNoClobber(staging, dangling)).rejects.toMatchObject({ code: 'target_exists', message: expect.stringContaining('symbolic link') });
    expect(existsSync(join(store, 'nowhere.jsonl'))).toBe(false);
    expect(existsSync(staging)).toBe(true);
  });

  it('refuses a parent that is a symlink or missing, and a relative target', async () => {
    const staging = await staged('x\n');
    const linkedDir = join(home.root, 'linked');
    symlinkSync(store, linkedDir);
    await expect(publishNoClobber(staging, join(linkedDir, 'a.jsonl'))).rejects.toMatchObject({ code: 'target_invalid', message: expect.stringContaining('symbolic link') });
    await expect(publishNoClobber(staging, join(store, 'missing', 'a.jsonl'))).rejects.toMatchObject({ code: 'target_invalid' });
    await expect(publishNoClobber(staging, 'relative.jsonl')).rejects.toMatchObject({ code: 'target_invalid' });
    expect(readdirSync(store)).toEqual([]);
  });

  it('refuses staged bytes that changed after verification', async () => {
    const staging = await staged('changed\n');
    const target = join(store, 'a.jsonl');
    await expect(publishNoClobber(staging, target, { expectedSha256: sha256('verified\n') })).rejects.toMatchObject({ code: 'staging_changed' });
    expect(existsSync(target)).toBe(false);
  });

  /** Runs `body` with a store directory on another filesystem than the staging files (tmpfs). */
  async function onAnotherFilesystem(body: (otherStore: string) => Promise<void>): Promise<void> {
    const shm = '/dev/shm';
    if (!existsSync(shm) || statSync(shm).dev === statSync(home.root).dev) {
      console.warn('skipped: no second filesystem (/dev/shm) to publish across');
      return;
    }
    const otherStore = mkdtempSync(join(shm, 'gob-store-'));
    try {
      await body(otherStore);
    } finally {
      rmSync(otherStore, { recursive: true, force: true });
    }
  }

  it('publishes across filesystems by copying beside the target first', async () => {
    await onAnotherFilesystem(async (otherStore) => {
      const content = 'across\n'.repeat(300_000);
      const staging = await staged(content);
      const target = join(otherStore, 'fork.jsonl');
      const published = await publishNoClobber(staging, target, { expectedSha256: sha256(content) });
      expect(published.sha256).toBe(sha256(content));
      expect(readFileSync(target, 'utf8')).toBe(content);
      expect(readdirSync(otherStore)).toEqual(['fork.jsonl']);
      expect(existsSync(staging)).toBe(false);
    });
  });

  it('removes the copy a run that died mid-copy left beside the target, and only such copies', async () => {
    await onAnotherFilesystem(async (otherStore) => {
      // A pid far above pid_max is never alive; this test's own pid is.
      const dead = join(otherStore, '.fork.jsonl.gobstopper-99999999-0123456789abcdef');
      const alive = join(otherStore, `.fork.jsonl.gobstopper-${process.pid}-0123456789abcdef`);
      const other = join(otherStore, '.other.jsonl.gobstopper-99999999-0123456789abcdef');
      for (const f of [dead, alive, other]) writeFileSync(f, 'partial');
      const content = 'across\n'.repeat(1000);
      await publishNoClobber(await staged(content), join(otherStore, 'fork.jsonl'), { expectedSha256: sha256(content) });
      expect(readdirSync(otherStore).sort()).toEqual([alive, other, join(otherStore, 'fork.jsonl')].map((f) => f.slice(otherStore.length + 1)).sort());
    });
  });

  it('leaves nothing partial when the disk fills during a cross-filesystem copy', async () => {
    await onAnotherFilesystem(async (otherStore) => {
      const staging = await staged('x'.repeat(3 * 1024 * 1024));
      let calls = 0;
      const full = async () => {
        calls += 1;
        if (calls === 2) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      };
      // Named on the copy beside the target: the sessions' disk filled, not the vault's.
      await expect(publishNoClobber(staging, join(otherStore, 'fork.jsonl'), { writeAll: full })).rejects.toMatchObject({ code: 'ENOSPC', path: expect.stringMatching(new RegExp(`^${otherStore}/\\.fork\\.jsonl\\.gobstopper-`)) });
      expect(readdirSync(otherStore)).toEqual([]);
    });
  });
});

describe('the resume command people paste', () => {
  it('starts in the directory the provider names, quoting what the shell would split', async () => {
    const { resumeCommandText } = await import('../../../kernel/services/publication.js');
    expect(resumeCommandText(['claude', '--resume', 'abc-1'])).toBe('claude --resume abc-1');
    expect(resumeCommandText(['claude', '--resume', 'abc-1'], '/home/dev/my project')).toBe("cd '/home/dev/my project' && claude --resume abc-1");
    expect(resumeCommandText(['codex', 'resume', 'x'], "/it's")).toBe(`cd '/it'\\''s' && codex resume x`);
  });
});
