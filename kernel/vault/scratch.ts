/**
 * Reusable read-back buffers. Archiving compares every chunk it writes with what it reads back, and
 * a fresh 1 MiB buffer per chunk had a 128 MiB snapshot touch 128 MiB of new memory, which a
 * virtual machine that hands freed pages back to its host must fault in again each time. A few
 * buffers (8 MiB at most, kept for the process), handed out and taken back, cover the chunks in flight.
 */
import { CHUNK_BYTES } from './limits.js';

/** Buffers kept for reuse: more than the chunks a snapshot has in flight at once. */
const KEPT = 8;
/** Smaller reads (manifests, receipts) allocate as before: pooling them would only waste memory. */
const POOLED_FROM = 64 * 1024;
const POOLED_BYTES = CHUNK_BYTES + 1;

const free: Buffer[] = [];

/** Runs `use` with a buffer of exactly `bytes`; the buffer must not outlive the call. */
export async function withScratch<T>(bytes: number, use: (buffer: Buffer) => Promise<T>): Promise<T> {
  if (bytes < POOLED_FROM || bytes > POOLED_BYTES) return use(Buffer.allocUnsafe(bytes));
  const buffer = free.pop() ?? Buffer.allocUnsafe(POOLED_BYTES);
  try {
    return await use(buffer.subarray(0, bytes));
  } finally {
    if (free.length < KEPT) free.push(buffer);
  }
}
