import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { digestHere, digestOffThread } from '../../../sdk/file-digest.js';

const dir = mkdtempSync(join(tmpdir(), 'sdk-digest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a file digest on another thread', () => {
  const bytes = Buffer.concat([Buffer.alloc(3 * 1024 * 1024 + 17, 0x61), Buffer.from('{"end":true}\n')]);
  const path = join(dir, 'file.jsonl');
  writeFileSync(path, bytes);
  const expected = { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };

  it('is the sha256 and size of the bytes, as on this thread', async () => {
    expect(await digestOffThread(path).done).toEqual(expected);
    expect(await digestHere(path)).toEqual(expected);
  });

  it('refuses a symbolic link and a missing file, and stops when cancelled', async () => {
    const link = join(dir, 'link.jsonl');
    symlinkSync(path, link);
    await expect(digestOffThread(link).done).rejects.toThrow(/ELOOP|symbolic/i);
    await expect(digestOffThread(join(dir, 'missing.jsonl')).done).rejects.toThrow(/ENOENT/);
    const pending = digestOffThread(path);
    pending.cancel();
    await expect(pending.done).rejects.toThrow();
  });
});
