/**
 * The worker threads of parallel scans (scan-worker.ts), kept for the life of the process. A task
 * is posted at once to the least busy worker, which runs its tasks one after another in the order
 * they came: a scan posts the whole-file read right behind a range, so the worker goes on to it the
 * moment the range is done instead of waiting for this thread to notice and hand it over (this
 * thread is busy parsing its own range then). A worker is referenced only while it has tasks, so
 * the pool never keeps the process alive on its own.
 */
import { Worker } from 'node:worker_threads';
import type { RangeBatch, RangeEnd, RangeTask } from './range-scan.js';
import type { RenderedRange, RenderRangeTask } from './render-range.js';
import { SCAN_WORKER, type ScanMessage, type ScanRequest } from './scan-worker.js';
import type { WholeRead, WholeReadTask } from './whole-read.js';

interface Job {
  worker: Worker;
  onBatch: (batch: RangeBatch) => void;
  resolve: (answer: RangeEnd | RenderedRange | WholeRead) => void;
  reject: (error: Error) => void;
}

/** A fixed number of workers started from one bundle file. */
export class ScanPool {
  /** Each worker with the number of tasks it was given and has not answered yet. */
  private readonly queued = new Map<Worker, number>();
  private readonly jobs = new Map<number, Job>();
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

  /** Workers running now. */
  get started(): number {
    return this.queued.size;
  }

  /** Starts the workers now, so that a later scan finds them running. */
  start(): void {
    while (this.queued.size < this.size) this.spawn();
  }

  /** Ends the idle workers; busy ones end when their tasks are done. */
  close(): void {
    this.closed = true;
    for (const [worker, count] of this.queued) if (count === 0) void worker.terminate();
  }

  /** Reads `task`'s range on a worker: `onBatch` gets its rows as they are read, in order. */
  readRange(task: RangeTask, onBatch: (batch: RangeBatch) => void): Promise<RangeEnd> {
    const done = this.submit((id) => ({ id, range: task }), onBatch) as Promise<RangeEnd>;
    return done.then((end) => {
      this.parsedBytes += end.bytesRead;
      return end;
    });
  }

  /** Renders `task`'s range on a worker into memory: `onBatch` gets its rows as they are read, in order. */
  renderRange(task: RenderRangeTask, onBatch: (batch: RangeBatch) => void): Promise<RenderedRange> {
    const done = this.submit((id) => ({ id, render: task }), onBatch) as Promise<RenderedRange>;
    return done.then((rendered) => {
      this.parsedBytes += rendered.end.bytesRead;
      return rendered;
    });
  }

  /** Reads a whole file on a worker for its hash and the reader's verdict, after the ranges asked for before. */
  readWhole(task: WholeReadTask): Promise<WholeRead> {
    return this.submit((id) => ({ id, whole: task }), () => {}) as Promise<WholeRead>;
  }

  private submit(request: (id: number) => ScanRequest, onBatch: (batch: RangeBatch) => void): Promise<RangeEnd | RenderedRange | WholeRead> {
    return new Promise((resolve, reject) => {
      const worker = this.leastBusy();
      const id = this.nextId++;
      this.jobs.set(id, { worker, onBatch, resolve, reject });
      this.queued.set(worker, (this.queued.get(worker) ?? 0) + 1);
      // Referenced only while it works for a caller that awaits it.
      worker.ref();
      worker.postMessage(request(id));
    });
  }

  /** An idle worker, a new one while the pool is not full, else the one with the fewest tasks. */
  private leastBusy(): Worker {
    let best: Worker | undefined;
    let fewest = Infinity;
    for (const [worker, count] of this.queued) {
      if (count < fewest) [best, fewest] = [worker, count];
    }
    if (best && fewest === 0) return best;
    if (this.queued.size < this.size) return this.spawn();
    return best!;
  }

  private spawn(): Worker {
    // stdout: true keeps anything a worker might print off the plugin's protocol channel.
    const worker = new Worker(this.file, { workerData: { [SCAN_WORKER]: true }, stdout: true });
    let answered = false;
    this.queued.set(worker, 0);
    worker.unref();
    worker.on('message', (message: ScanMessage) => {
      answered = true;
      const job = this.jobs.get(message.id);
      if ('batch' in message) {
        job?.onBatch(message.batch);
        return;
      }
      this.jobs.delete(message.id);
      this.finished(worker);
      if (!job) return;
      if ('end' in message) job.resolve(message.end);
      else if ('rendered' in message) job.resolve(message.rendered);
      else if ('read' in message) job.resolve(message.read);
      else job.reject(new Error(message.error));
    });
    const lost = (error: Error) => {
      if (!this.queued.delete(worker)) return;
      if (!answered) this.broken = true;
      for (const [id, job] of this.jobs) {
        if (job.worker !== worker) continue;
        this.jobs.delete(id);
        job.reject(error);
      }
      void worker.terminate();
    };
    worker.on('error', (error) => lost(error));
    worker.on('exit', (code) => lost(new Error(`a scan worker exited with code ${code}`)));
    return worker;
  }

  private finished(worker: Worker): void {
    const queued = this.queued.get(worker);
    if (queued === undefined) return;
    const left = queued - 1;
    this.queued.set(worker, left);
    if (left > 0) return;
    worker.unref();
    if (this.closed) void worker.terminate();
  }
}
