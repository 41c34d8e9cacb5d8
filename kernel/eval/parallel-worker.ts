/**
 * Child-process entry of the parallel runner: loads the job module named on argv, then runs the jobs
 * its parent sends, one at a time, replying with the result or a failure flattened to one line.
 */
import { pathToFileURL } from 'node:url';
import { errorMessage } from '../filesystem-message.js';

interface JobModule {
  runJob(job: unknown): unknown;
  /** Optional: release warm state (a plugin host) before the process ends. */
  dispose?(): unknown;
}

const send = (message: unknown) =>
  new Promise<void>((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });

async function main(): Promise<void> {
  const modulePath = process.argv[2];
  if (!modulePath) throw new Error('parallel worker needs a job module path');
  const mod = (await import(pathToFileURL(modulePath).href)) as Partial<JobModule>;
  if (typeof mod.runJob !== 'function') throw new Error(`${modulePath} does not export runJob(job)`);
  const runJob = mod.runJob;
  // The parent is gone (stopped by a signal it could not pass on, or killed): nobody will read a
  // result. Exiting runs the exit hooks, which take this worker's plugin groups and temporary
  // copies with it; waiting for the job would leave them running on their own.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (raw: unknown) => {
    const msg = raw as { type: string; seq?: number; job?: unknown };
    if (msg.type === 'stop') {
      void (async () => {
        try {
          await mod.dispose?.();
        } finally {
          process.exit(0);
        }
      })();
      return;
    }
    if (msg.type !== 'job') return;
    void (async () => {
      try {
        const result = await runJob(msg.job);
        await send({ type: 'result', seq: msg.seq, result });
      } catch (error) {
        const err = error as NodeJS.ErrnoException;
        // Flattened, not cut at the first line: a plugin's stderr tail follows its first line, and
        // the line that says what broke (a traceback's last) is usually the one after it.
        const text = errorMessage(error).replace(/\s+/g, ' ').trim().slice(0, 2048);
        const kind = (error as { kind?: unknown } | null)?.kind;
        await send({ type: 'failure', seq: msg.seq, error: text, code: typeof err?.code === 'string' ? err.code : null, kind: typeof kind === 'string' ? kind : null });
      }
    })();
  });
  await send({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.stderr.write(`gobstopper: parallel worker failed to start: ${(error as Error).message}\n`);
  process.exit(70);
});
