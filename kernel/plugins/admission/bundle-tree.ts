import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { filePointer } from './bundle-path.js';
import { AdmissionError, BundleLimits, MANIFEST_FILE } from './rules.js';

export interface TreeFile {
  path: string;
  size: number;
}

export interface BundleTree {
  /** The regular files found (the manifest at the root excepted), keyed by bundle-relative path. */
  files: Map<string, TreeFile>;
  /** Bundle-relative paths of the directories below the root, in the order visited. */
  directories: string[];
}

/**
 * Walks the bundle directory without following anything: every entry must be a directory or a
 * declared regular file, with no links, within the entry and depth caps.
 */
export function walkBundle(root: string, declared: ReadonlySet<string>, bundle: string): BundleTree {
  const found = new Map<string, TreeFile>();
  const directories: string[] = [];
  let entries = 0;
  const visit = (dirRel: string, depth: number): void => {
    const names = readdirSync(dirRel === '' ? root : join(root, dirRel)).sort();
    for (const name of names) {
      entries += 1;
      if (entries > BundleLimits.directoryEntries) {
        throw new AdmissionError('too_many_entries', `bundle ${bundle} has more than ${BundleLimits.directoryEntries} directory entries`, { bundle });
      }
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      if (depth + 1 > BundleLimits.depth) {
        throw new AdmissionError('too_deep', `bundle ${bundle}: ${rel} is nested deeper than ${BundleLimits.depth} levels`, { bundle, file: rel });
      }
      const stat = lstatSync(join(root, rel));
      if (stat.isSymbolicLink()) {
        throw new AdmissionError('symlink_refused', `bundle ${bundle}: ${rel} is a symbolic link; bundles may not contain links`, { bundle, file: rel });
      }
      if (stat.isDirectory()) {
        if (declared.has(rel)) throw new AdmissionError('file_not_regular', `bundle ${bundle}: ${rel} is a directory, not a file`, { bundle, file: rel, pointer: filePointer(rel) });
        directories.push(rel);
        visit(rel, depth + 1);
        continue;
      }
      if (!stat.isFile()) {
        throw new AdmissionError('file_not_regular', `bundle ${bundle}: ${rel} is not a regular file`, { bundle, file: rel });
      }
      if (rel === MANIFEST_FILE) continue;
      if (!declared.has(rel)) {
        // Python leaves bytecode beside a module run by hand; the host runs it with -B and never does.
        const leftover = rel.split('/').includes('__pycache__') ? ' (Python bytecode left by running the bundle by hand: delete the __pycache__ directory)' : '';
        throw new AdmissionError('file_undeclared', `bundle ${bundle}: ${rel} is not declared in the manifest's files${leftover}`, { bundle, file: rel, pointer: filePointer(rel) });
      }
      found.set(rel, { path: rel, size: stat.size });
    }
  };
  visit('', 0);
  return { files: found, directories };
}
