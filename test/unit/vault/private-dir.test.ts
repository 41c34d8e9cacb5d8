import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensurePrivateDir } from '../../../kernel/vault/private-fs.js';

describe('ensurePrivateDir', () => {
  it('creates every missing parent and the directory itself, private', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gob-private-dir-'));
    try {
      const dir = join(root, 'a', 'b', 'gobstopper', 'vault');
      await ensurePrivateDir(dir);
      expect(statSync(dir).isDirectory()).toBe(true);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      await ensurePrivateDir(dir);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.skipIf(!existsSync('/proc/self'))('fails at once where the system refuses the directory, instead of retrying forever (under /proc)', async () => {
    await expect(ensurePrivateDir('/proc/self/gobstopper/vault')).rejects.toMatchObject({ code: 'ENOENT' });
  }, 5000);
});
