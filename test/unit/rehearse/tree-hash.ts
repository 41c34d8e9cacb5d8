import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One digest over every path, type, mode and content under `root`: equal digests, identical trees. */
export function treeHash(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const st = lstatSync(full);
      hash.update(`${relative(root, full)}\0${st.mode}\0`);
      if (st.isDirectory()) walk(full);
      else if (st.isSymbolicLink()) hash.update(readlinkSync(full));
      else hash.update(readFileSync(full));
    }
  };
  walk(root);
  return hash.digest('hex');
}

export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
