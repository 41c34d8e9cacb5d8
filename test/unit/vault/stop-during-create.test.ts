import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('a stop signal while private files are being created', () => {
  it('leaves none of them behind: the exit waits for creations already under way', () => {
    dir = mkdtempSync(join(tmpdir(), 'gob-stop-create-'));
    for (let round = 0; round < 5; round += 1) {
      const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'stop-during-create-child.ts'), dir, '400'], { encoding: 'utf8' });
      expect(child.status, child.stderr).toBe(143);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it.skipIf(!existsSync('/proc/self/status'))('a path the exit hook cannot remove keeps neither the others nor the exit status', () => {
    dir = mkdtempSync(join(tmpdir(), 'gob-stop-create-'));
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'stop-during-create-child.ts'), dir, '20', 'unremovable'], { encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(143);
    expect(child.stderr).toBe('');
    expect(readdirSync(dir)).toEqual([]);
  });
});
