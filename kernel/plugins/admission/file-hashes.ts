import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { filePointer } from './bundle-path.js';
import { AdmissionError } from './rules.js';

/** What to do about a changed file of a bundle of one's own (an installed copy needs another answer). */
const REPIN_ADVICE = `; if you changed it, pin its sha256 again in the manifest's "files" (gobstopper's examples/plugins/rehash.mjs <bundle-dir> writes them)`;

/**
 * Hashes one declared file and compares it with the manifest's pin. The file is opened without
 * following links, its resolved path must stay inside the bundle root, and it is read at most to
 * the size the walk saw (plus one byte, to notice growth).
 */
export function checkFileHash(root: string, rel: string, expectedSha256: string, expectedSize: number, bundle: string, advice: string = REPIN_ADVICE): void {
  const absolute = join(root, rel);
  const resolved = realpathSync(absolute);
  if (!resolved.startsWith(root + sep)) {
    throw new AdmissionError('path_escape', `bundle ${bundle}: ${rel} resolves outside the bundle`, { bundle, file: rel, pointer: filePointer(rel) });
  }
  const fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const hash = createHash('sha256');
  let total = 0;
  try {
    if (!fstatSync(fd).isFile()) throw new AdmissionError('file_not_regular', `bundle ${bundle}: ${rel} is not a regular file`, { bundle, file: rel });
    const chunk = Buffer.allocUnsafe(Math.min(Math.max(expectedSize + 1, 1), 1 << 20));
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > expectedSize) break;
      hash.update(chunk.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  if (total !== expectedSize || hash.digest('hex') !== expectedSha256) {
    throw new AdmissionError('file_hash_mismatch', `bundle ${bundle}: ${rel} does not match the sha256 pinned in the manifest (changed or damaged)${advice}`, {
      bundle,
      file: rel,
      pointer: filePointer(rel),
    });
  }
}
