/** A transcript read once, whole, and hashed: what a measurement compares every rewrite against. */
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { open } from 'node:fs/promises';
import { maxTranscriptBytes } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';

export interface FrozenSource {
  path: string;
  bytes: Buffer;
  sha256: string;
  mtimeMs: number;
}

/**
 * Reads a transcript once, whole, without following a symlink, within the transcript size limit.
 * A file that vanished keeps the ENOENT code so a bench reports it as gone rather than broken.
 */
export async function freezeSource(path: string, limit = maxTranscriptBytes()): Promise<FrozenSource> {
  let handle;
  try {
    // Without O_NONBLOCK a FIFO's open waits for a writer forever; opened, it is refused below.
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw Object.assign(new Error(`${path} no longer exists`), { code: 'ENOENT' });
    if (code === 'ELOOP') throw new GobstopperError('symlink_refused', `${path} is a symbolic link; pass the real path`);
    throw new GobstopperError('source_unreadable', `cannot read ${path} (${code ?? 'error'})`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new GobstopperError('not_a_transcript', `${path} is not a regular file`);
    if (st.size > limit) throw new GobstopperError('transcript_too_large', `${path} is ${st.size} bytes; at most ${limit} are read (GOBSTOPPER_MAX_TRANSCRIPT_BYTES)`);
    const bytes = await handle.readFile();
    return { path, bytes, sha256: createHash('sha256').update(bytes).digest('hex'), mtimeMs: st.mtimeMs };
  } finally {
    await handle.close();
  }
}
