/**
 * The whole-source sha256 of a large snapshot, computed on a second thread. Archiving and verified
 * reading both hash every byte twice (each chunk against its name, the whole against
 * source_sha256); running the whole-source digest beside the per-chunk work halves the hashing
 * time on a machine with a spare core. Chunk buffers are shared (SharedArrayBuffer), never copied,
 * and a buffer may be refilled only after `update` for it has resolved.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { MIB } from '../../sdk/limits.js';

/** Below this the thread's start-up (~20 ms) costs more than it saves. */
export const PARALLEL_HASH_MIN_BYTES = 32 * MIB;

export interface StreamingSha256 {
  /** Resolves once `chunk`'s bytes have been consumed and its buffer may be reused. */
  update(chunk: Buffer): Promise<void>;
  digest(): Promise<string>;
  /** Releases the thread; safe to call more than once and after a failure. */
  close(): Promise<void>;
}

/** A buffer the hashing thread can read in place. */
export function sharedBuffer(bytes: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(bytes));
}

function inThread(): StreamingSha256 {
  const hash = createHash('sha256');
  return {
    update: (chunk) => {
      hash.update(chunk);
      return Promise.resolve();
    },
    digest: () => Promise.resolve(hash.digest('hex')),
    close: () => Promise.resolve(),
  };
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hash = createHash('sha256');
parentPort.on('message', (m) => {
  if (m.type === 'update') {
    hash.update(new Uint8Array(m.buffer, m.offset, m.length));
    parentPort.postMessage({ type: 'ack', id: m.id });
  } else {
    parentPort.postMessage({ type: 'digest', hex: hash.digest('hex') });
  }
});
`;

function onWorker(): StreamingSha256 {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  worker.unref();
  const waiting = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  let digestWaiter: { resolve: (hex: string) => void; reject: (e: unknown) => void } | null = null;
  let failure: unknown = null;
  let nextId = 0;
  let closed = false;
  const failAll = (error: unknown) => {
    failure ??= error;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
    digestWaiter?.reject(failure);
    digestWaiter = null;
  };
  worker.on('message', (m: { type: 'ack'; id: number } | { type: 'digest'; hex: string }) => {
    if (m.type === 'ack') {
      waiting.get(m.id)?.resolve();
      waiting.delete(m.id);
    } else {
      digestWaiter?.resolve(m.hex);
      digestWaiter = null;
    }
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => {
    if (!closed) failAll(new Error(`the hashing thread stopped (exit ${code})`));
  });
  return {
    update(chunk) {
      if (closed) failure ??= new Error('the hashing thread stopped (closed)');
      if (failure) return Promise.reject(failure);
      if (!(chunk.buffer instanceof SharedArrayBuffer)) {
        // Not shareable: hash a copy rather than fail.
        const copy = sharedBuffer(chunk.length);
        chunk.copy(copy);
        chunk = copy;
      }
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ type: 'update', id, buffer: chunk.buffer, offset: chunk.byteOffset, length: chunk.length });
      });
    },
    digest() {
      if (closed) failure ??= new Error('the hashing thread stopped (closed)');
      if (failure) return Promise.reject(failure);
      return new Promise<string>((resolve, reject) => {
        digestWaiter = { resolve, reject };
        worker.postMessage({ type: 'digest' });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await worker.terminate();
    },
  };
}

/** A whole-stream sha256: on its own thread when the stream is large, in this thread otherwise. */
export function streamingSha256(expectedBytes: number, parallelFrom = PARALLEL_HASH_MIN_BYTES): StreamingSha256 {
  return expectedBytes >= parallelFrom ? onWorker() : inThread();
}
