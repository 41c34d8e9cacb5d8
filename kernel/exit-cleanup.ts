/**
 * What this process leaves behind when it ends however it ends: a stop signal (Ctrl-C, a kill, a
 * closed terminal) exits with the status a shell expects, which runs the 'exit' hooks that a
 * signal's default action would skip; private temporary files and directories registered here are
 * removed by one of those hooks, so an interrupted eval or rehearsal leaves no copy of a session in
 * /tmp, and an interrupted apply no staged fork or half-written vault file.
 */
import { rmSync } from 'node:fs';
import { constants } from 'node:os';
import { GobstopperError } from './errors.js';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How long a stop waits for file creations already handed to the thread pool. */
const CREATION_SETTLE_MS = 2_000;
const temporary = new Set<string>();
const creating = new Set<Promise<unknown>>();
let stopping = false;
let signalsInstalled = false;
let removalInstalled = false;

let announce: ((signal: NodeJS.Signals) => void) | null = null;
let note: string | null | (() => string | null) = null;
const completed: string[] = [];

/** Makes SIGINT, SIGTERM and SIGHUP end the process through exit(128 + n), once. */
export function exitOnStopSignals(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const signal of STOP_SIGNALS) {
    process.once(signal, () => {
      stopping = true;
      const status = 128 + constants.signals[signal];
      // Told only once the creations in flight have landed: what the stop reports as done (a
      // published fork) must be what is on disk when the process ends.
      const end = () => {
        try {
          announce?.(signal);
        } finally {
          process.exit(status);
        }
      };
      if (creating.size === 0) end();
      else void creationsSettled().finally(end);
    });
  }
}

/**
 * An open(O_CREAT) already in the thread pool completes even after the exit hooks have run, so a
 * stop that exited at once could remove a temp file's name before the file exists and leave it
 * behind. The stop waits for those creations (bounded), and no new one starts once it has begun.
 */
async function creationsSettled(): Promise<void> {
  // One wait is enough: once stopping, no creation starts, so the set only shrinks.
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((resolve) => (timer = setTimeout(resolve, CREATION_SETTLE_MS)));
  await Promise.race([Promise.allSettled([...creating]), deadline]);
  clearTimeout(timer);
}

/**
 * Runs `create`, a call that creates a file or directory the exit hooks are to remove (or one a
 * stop reports, such as a fork's link), so that a stop signal waits for it to land before removing
 * or reporting. Refused once a stop has begun.
 */
export async function creatingFile<T>(create: () => Promise<T>): Promise<T> {
  if (stopping) throw new GobstopperError('interrupted', 'stopping: no new files are created');
  const pending = create();
  creating.add(pending);
  try {
    return await pending;
  } finally {
    creating.delete(pending);
  }
}

/** A stop signal has begun ending the process: what still runs meanwhile must not speak. */
export function isStopping(): boolean {
  return stopping;
}

/** What to tell the user when a stop signal ends the process (the CLI says it was interrupted). */
export function onStopSignal(say: (signal: NodeJS.Signals) => void): void {
  announce = say;
  exitOnStopSignals();
}

/**
 * What a stop signal should add to "interrupted": work that is already done although the command
 * did not finish (a published fork), so the user does not take the interrupt for "nothing happened".
 */
export function noteForStop(text: string | null | (() => string | null)): void {
  note = text;
}

/**
 * Work a command finished earlier in the same run, kept apart from the note of the step under way:
 * a watch publishes a fork for one session and goes on to the next, whose own note replaces the
 * last; what it published before must still be told if a stop comes before the pass is reported.
 */
export function noteCompletedForStop(text: string): void {
  completed.push(text);
}

/** The completed work noted so far has been reported (a watch printed its pass): a stop no longer tells it. */
export function forgetCompletedForStop(): void {
  completed.length = 0;
}

/**
 * What a stop adds: the completed work, oldest first, then the step under way (a function asked
 * only when a stop comes, since what is done may depend on that moment).
 */
export function stopNote(): string | null {
  const current = typeof note === 'function' ? note() : note;
  const all = current === null ? completed : [...completed, current];
  return all.length > 0 ? all.join('; ') : null;
}

/** Removes the file or directory `path` when the process exits, unless the returned function is called first. */
export function removeOnExit(path: string): () => void {
  temporary.add(path);
  if (!removalInstalled) {
    removalInstalled = true;
    process.on('exit', () => {
      for (const path of temporary) {
        try {
          rmSync(path, { recursive: true, force: true });
        } catch {
          // One that cannot go (EACCES, EIO) must not keep the rest from going, nor turn the exit
          // status into an uncaught error's; it is left as a killed run's would be.
        }
      }
    });
  }
  exitOnStopSignals();
  return () => void temporary.delete(path);
}

/** The process no longer owns `path` (it was removed, renamed or published): leave it at exit. */
export function keepOnExit(path: string): void {
  temporary.delete(path);
}
