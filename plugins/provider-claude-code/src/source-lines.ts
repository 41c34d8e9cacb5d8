/**
 * The lines of a source that a render from its kept parse read and hashed, kept for the next
 * render of the same file that does not fork. `eval` renders one candidate per strategy from one
 * private copy of the session, and each render read and hashed all of it again (a third of a
 * render's time). A later render takes the lines instead while the file is still the one they were
 * read from: same device, inode, size, modification and change time. Any write to the file moves
 * its change time, so a file that changed is read (and refused) as always.
 *
 * Forks never keep or take lines: `apply` renders its fork reading the source it publishes from.
 */
import type { Stats } from 'node:fs';
import { MIB } from '../../../sdk/limits.js';
import type { Analysis } from './analysis.js';

/** Sources larger than this are read for every render: their lines would cost more memory than reading costs time. */
export const MAX_KEPT_SOURCE_BYTES = 64 * MIB;

export interface SourceLines {
  path: string;
  /** The file as it was stat-ed before the lines were read. */
  stat: Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>;
  /** Each line's bytes, without its newline. */
  lines: Buffer[];
  /** false when the file does not end with a newline. */
  lastTerminated: boolean;
}

const kept = new WeakMap<Analysis, SourceLines>();
let taken = 0;

/** Keeps what a render of `parsed`'s bytes read and hashed; dropped with the kept parse. */
export function keepSourceLines(parsed: Analysis, lines: SourceLines): void {
  kept.set(parsed, lines);
}

/** The lines of `parsed`'s bytes when `path`, stat-ed as `now`, is still the file they were read from. */
export function sourceLinesOf(parsed: Analysis, path: string, now: Stats): SourceLines | null {
  const lines = kept.get(parsed);
  if (lines === undefined || lines.path !== path) return null;
  const then = lines.stat;
  const same = now.dev === then.dev && now.ino === then.ino && now.size === then.size && now.mtimeMs === then.mtimeMs && now.ctimeMs === then.ctimeMs;
  if (!same) return null;
  taken += 1;
  return lines;
}

/** How many renders took kept lines instead of reading the file. */
export function sourceLinesTaken(): number {
  return taken;
}
