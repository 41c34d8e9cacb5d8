/**
 * Runs one job per session over a pool of child processes, so sessions are measured in parallel on
 * every core, and one session that fails, vanishes, hangs or crashes its process is recorded and the
 * rest go on. Jobs and results cross the process boundary by structured clone; each child runs jobs
 * one at a time through `runJob(job)` exported by `jobModule`, and can keep its own warm state
 * (a plugin host, say) between jobs.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { compiledKernelModule } from '../plugins/package-root.js';

export interface JobProgress {
  done: number;
  failed: number;
  running: number;
  total: number;
}

export type JobFailureKind = 'failed' | 'crashed' | 'timeout';

export type JobOutcome<J, R> =
  | { job: J; ok: true; result: R; duration_ms: number }
  | {
      job: J;
      ok: false;
      failure: JobFailureKind;
      error: string;
      code: string | null;
      /** What the job module said went wrong, beside the error's own code (`kind` on what it threw). */
      kind?: string | null;
      duration_ms: number;
    };

export interface ParallelRunOptions<J> {
  jobs: readonly J[];
  /** Absolute path of a module exporting `runJob(job)`; a .ts module runs through tsx. */
  jobModule: string;
  /** Worker processes; defaults to the machine's available parallelism. */
  concurrency?: number;
  /** A job running longer is killed and recorded as `timeout`. */
  jobTimeoutMs?: number;
  onProgress?: (progress: JobProgress) => void;
  env?: NodeJS.ProcessEnv;
}

interface WorkerMessage {
  type: 'ready' | 'result' | 'failure';
  seq?: number;
  result?: unknown;
  error?: string;
  code?: string | null;
  kind?: string | null;
}

function workerEntry(): { path: string; execArgv: string[] } {
  const js = compiledKernelModule(import.meta.url, 'eval/parallel-worker.js');
  if (js !== null) return { path: js, execArgv: [] };
  // Running from TypeScript sources (tests): let tsx load the entry and the job module.
  return { path: fileURLToPath(new URL('./parallel-worker.ts', import.meta.url)), execArgv: ['--import', 'tsx'] };
}

export async function runJobsInParallel<J, R>(options: ParallelRunOptions<J>): Promise<Array<JobOutcome<J, R>>> {
  const total = options.jobs.length;
  const outcomes = new Array<JobOutcome<J, R>>(total);
  if (total === 0) return outcomes;
  const concurrency = Math.max(1, Math.min(options.concurrency ?? availableParallelism(), total));
  const entry = workerEntry();
  const execArgv = entry.execArgv.length || !options.jobModule.endsWith('.ts') ? entry.execArgv : ['--import', 'tsx'];
  let next = 0;
  let done = 0;
  let failed = 0;
  let running = 0;
  const report = () => options.onProgress?.({ done, failed, running, total });

  return new Promise((resolveAll) => {
    let live = 0;
    let startupError: string | null = null;
    const finish = (seq: number, outcome: JobOutcome<J, R>) => {
      outcomes[seq] = outcome;
      done += 1;
      running -= 1;
      if (!outcome.ok) failed += 1;
      report();
    };

    const startWorker = () => {
      live += 1;
      const child: ChildProcess = fork(entry.path, [options.jobModule], {
        execArgv,
        env: options.env ?? process.env,
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      let current: { seq: number; started: number; timer: NodeJS.Timeout | null } | null = null;
      let retired = false;
      let ready = false;

      const dispatch = () => {
        if (next >= total) {
          retired = true;
          child.send({ type: 'stop' });
          return;
        }
        const seq = next++;
        running += 1;
        report();
        const timer =
          options.jobTimeoutMs === undefined
            ? null
            : setTimeout(() => {
                if (current?.seq !== seq) return;
                settle({ job: options.jobs[seq]!, ok: false, failure: 'timeout', error: `job exceeded ${options.jobTimeoutMs} ms`, code: 'timeout', duration_ms: Date.now() - current.started });
                retired = true;
                child.kill('SIGKILL');
              }, options.jobTimeoutMs);
        current = { seq, started: Date.now(), timer };
        child.send({ type: 'job', seq, job: options.jobs[seq] });
      };

      const settle = (outcome: JobOutcome<J, R>) => {
        if (!current) return;
        if (current.timer) clearTimeout(current.timer);
        const seq = current.seq;
        current = null;
        finish(seq, outcome);
      };

      child.on('message', (raw: unknown) => {
        const msg = raw as WorkerMessage;
        if (msg.type === 'ready') {
          ready = true;
          return dispatch();
        }
        if (!current || msg.seq !== current.seq) return;
        const job = options.jobs[current.seq]!;
        const duration_ms = Date.now() - current.started;
        if (msg.type === 'result') settle({ job, ok: true, result: msg.result as R, duration_ms });
        else settle({ job, ok: false, failure: 'failed', error: msg.error ?? 'job failed', code: msg.code ?? null, kind: msg.kind ?? null, duration_ms });
        if (!retired) dispatch();
      });

      child.on('exit', (code, signal) => {
        if (current) {
          const job = options.jobs[current.seq]!;
          settle({ job, ok: false, failure: 'crashed', error: `worker process exited (${signal ?? `code ${code}`}) while running the job`, code: 'crashed', duration_ms: Date.now() - current.started });
        }
        live -= 1;
        if (!ready) {
          // The entry or the job module cannot load: respawning would loop, so the jobs nobody
          // took are recorded as failed with the reason instead.
          startupError ??= `worker process could not start (${signal ?? `code ${code}`})`;
          while (next < total) {
            const seq = next++;
            running += 1;
            finish(seq, { job: options.jobs[seq]!, ok: false, failure: 'crashed', error: startupError, code: 'worker_start_failed', duration_ms: 0 });
          }
        }
        // A crash or a timeout retires the process; the remaining jobs get a fresh one.
        if (next < total) startWorker();
        else if (live === 0) resolveAll(outcomes);
      });

      child.on('error', () => {
        // 'exit' follows and records the job; nothing else to do here.
      });
    };

    report();
    for (let i = 0; i < concurrency; i++) startWorker();
  });
}
