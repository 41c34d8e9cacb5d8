/**
 * A file's sha256 computed on another thread, so a provider can parse the file on its own thread
 * meanwhile instead of hashing every chunk between lines. The two reads are separate: the caller
 * binds them with a stat taken before both and after both (same file, size and mtime) and by the
 * byte count each saw, as a parallel scan does.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants as fsConstants, createReadStream, openSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface FileDigest {
  sha256: string;
  bytes: number;
}

export interface PendingDigest {
  done: Promise<FileDigest>;
  /** Stops the read; `done` then rejects. For a caller whose own read failed. */
  cancel(): void;
}

// Plain CommonJS for an eval'd worker: the provider's bundle needs no second entry point for it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { constants, createReadStream, openSync } = require('node:fs');
try {
  const fd = openSync(workerData.path, constants.O_RDONLY | constants.O_NOFOLLOW);
  const hash = createHash('sha256');
  let bytes = 0;
  createReadStream(workerData.path, { fd, highWaterMark: 1024 * 1024 })
    .on('data', (chunk) => { hash.update(chunk); bytes += chunk.length; })
    .on('end', () => parentPort.postMessage({ sha256: hash.digest('hex'), bytes }))
    .on('error', (error) => parentPort.postMessage({ error: String(error && error.message || error) }));
} catch (error) {
  parentPort.postMessage({ error: String(error && error.message || error) });
}
`;

/** The same digest on this thread, streaming: what a worker that cannot start is replaced by. */
export async function digestHere(path: string): Promise<FileDigest> {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of createReadStream(path, { fd, highWaterMark: 1024 * 1024, autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Starts hashing `path` (opened without following a link) on a worker thread. */
export function digestOffThread(path: string): PendingDigest {
  let worker: Worker | null = null;
  let cancelled = false;
  const done = new Promise<FileDigest>((resolve, reject) => {
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path } });
    } catch {
      resolve(digestHere(path));
      return;
    }
    let settled = false;
    worker.once('message', (m: { sha256?: string; bytes?: number; error?: string }) => {
      settled = true;
      if (m.error !== undefined) reject(new Error(m.error));
      else resolve({ sha256: m.sha256!, bytes: m.bytes! });
      void worker?.terminate();
    });
    // A worker that dies (or exits) before answering is replaced by a read here, unless the caller gave up.
    const ended = () => {
      if (settled) return;
      settled = true;
      if (cancelled) reject(new Error('cancelled'));
      else resolve(digestHere(path));
    };
    worker.once('error', ended);
    worker.once('exit', ended);
  });
  return {
    done,
    cancel() {
      cancelled = true;
      void (worker as Worker | null)?.terminate();
    },
  };
}
