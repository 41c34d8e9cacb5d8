/** Temporary directories holding config files, for loader and resolver tests. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface ConfigDir {
  root: string;
  write(relativePath: string, text: string | Buffer): string;
  cleanup(): void;
}

export function makeConfigDir(): ConfigDir {
  const root = mkdtempSync(join(tmpdir(), 'gob-config-'));
  return {
    root,
    write(relativePath, text) {
      const path = join(root, relativePath);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
