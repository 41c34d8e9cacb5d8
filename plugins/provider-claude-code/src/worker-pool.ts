/**
 * The worker threads of parallel scans (scan-worker.ts), kept for the life of the process: each runs
 * one task at a time, requests beyond the idle workers wait for one, and a worker is referenced only
 * while a caller awaits it, so the pool never keeps the process alive on its own.
 */
import { Worker } from 'node:worker_threads';
import type { RangeBatch, RangeEnd, RangeTask } from './range-scan.js';
import { SCAN_WORKER, type ScanMessage, type ScanRequest } from './scan-worker.js';
import type { WholeRead, WholeReadTask } from './whole-read.js';

interface Job {
  onBatch: (batch: RangeBatch) => void;
  resolve: (answer: RangeEnd | WholeRead) => void;
  reject: (error: Error) => void;
}

/** A fixed number of workers started from one bundle file. */
export class ScanPool {
  private readonly idle: Worker[] = [];
  private readonly running = new Map<Worker, Job>();
  private readonly waiting: Array<(worker: Worker) => void> = [];
  private readonly workers = new Set<Worker>();
  private nextId = 0;
  /** A worker failed before it ever answered: this bundle cannot run threads here. */
  broken = false;
  /** Bytes of ranges the workers have parsed: until there are many, their code is not yet optimized. */
  parsedBytes = 0;
  private closed = false;

  constructor(
    readonly file: string,
    readonly size: number,
  ) {}

  /** Starts the workers now, so that a later scan finds them running. */
  start(): void {
    while (this.workers.size < this.size) this.release(this.spawn());
  }

  /** Ends the idle workers; busy ones end when their range is done. */
  close(): void {
    this.closed = true;
    for (const worker of this.idle.splice(0)) void worker.terminate();
  }

  /** Reads `task`'s range on a worker: `onBatch` gets its rows as they are read, in order. */
  readRange(task: RangeTask, onBatch: (batch: RangeBatch) => void): Promise<RangeEnd> {
    const done = this.submit((id) => ({ id, range: task }), onBatch) as Promise<RangeEnd>;
    return done.then((end) => {
      this.parsedBytes += end.bytesRead;
      return end;
    });
  }

  /** Reads a whole file on a worker for its hash and the reader's verdict, after the ranges asked for before. */
  readWhole(task: WholeReadTask): Promise<WholeRead> {
    return this.submit((id) => ({ id, whole: task }), () => {}) as Promise<WholeRead>;
  }

  private submit(request: (id: number) => ScanRequest, onBatch: (batch: RangeBatch) => void): Promise<RangeEnd | WholeRead> {
    return new Promise((resolve, reject) => {
      const start = (worker: Worker) => {
        this.running.set(worker, { onBatch, resolve, reject });
        // Referenced only while it works for a caller that awaits it.
        worker.ref();
        worker.postMessage(request(this.nextId++));
      };
      const worker = this.idle.pop() ?? (this.workers.size < this.size ? this.spawn() : undefined);
      if (worker) start(worker);
      else this.waiting.push(start);
    });
  }

  private spawn(): Worker {
    // stdout: true keeps anything a worker might print off the plugin's protocol channel.
    const worker = new Worker(this.file, { workerData: { [SCAN_WORKER]: true }, stdout: true });
    let answered = false;
    this.workers.add(worker);
    worker.unref();
    worker.on('message', (message: ScanMessage) => {
      answered = true;
      const job = this.running.get(worker);
      if ('batch' in message) {
        job?.onBatch(message.batch);
        return;
      }
      this.running.delete(worker);
      this.release(worker);
      if (!job) return;
      if ('end' in message) job.resolve(message.end);
      else if ('read' in message) job.resolve(message.read);
      else job.reject(new Error(message.error));
    });
    const lost = (error: Error) => {
      if (!this.workers.delete(worker)) return;
      if (!answered) this.broken = true;
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
      const job = this.running.get(worker);
      this.running.delete(worker);
      job?.reject(error);
      void worker.terminate();
      const next = this.waiting.shift();
      if (next) next(this.spawn());
    };
    worker.on('error', (error) => lost(error));
    worker.on('exit', (code) => lost(new Error(`a scan worker exited with code ${code}`)));
    return worker;
  }

  private release(worker: Worker): void {
    worker.unref();
    if (this.closed) {
      void worker.terminate();
      return;
    }
    const next = this.waiting.shift();
    if (next) next(worker);
    else this.idle.push(worker);
  }
}
