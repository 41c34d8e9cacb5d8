/**
 * What this process leaves behind when it ends however it ends: a stop signal (Ctrl-C, a kill, a
 * closed terminal) exits with the status a shell expects, which runs the 'exit' hooks that a
 * signal's default action would skip; private temporary files and directories registered here are
 * removed by one of those hooks, so an interrupted eval or rehearsal leaves no copy of a session in
 * /tmp, and an interrupted apply no staged fork or half-written vault file.
 */
import { rmSync } from 'node:fs';
import { constants } from 'node:os';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const temporary = new Set<string>();
let signalsInstalled = false;
let removalInstalled = false;

let announce: ((signal: NodeJS.Signals) => void) | null = null;
let note: string | null = null;

/** Makes SIGINT, SIGTERM and SIGHUP end the process through exit(128 + n), once. */
export function exitOnStopSignals(): void {
  if (signalsInstalled) return;
  signalsInstalled = true;
  for (const signal of STOP_SIGNALS) {
    process.once(signal, () => {
      try {
        announce?.(signal);
      } finally {
        process.exit(128 + constants.signals[signal]);
      }
    });
  }
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
export function noteForStop(text: string | null): void {
  note = text;
}

export function stopNote(): string | null {
  return note;
}

/** Removes the file or directory `path` when the process exits, unless the returned function is called first. */
export function removeOnExit(path: string): () => void {
  temporary.add(path);
  if (!removalInstalled) {
    removalInstalled = true;
    process.on('exit', () => {
      for (const path of temporary) rmSync(path, { recursive: true, force: true });
    });
  }
  exitOnStopSignals();
  return () => void temporary.delete(path);
}

/** The process no longer owns `path` (it was removed, renamed or published): leave it at exit. */
export function keepOnExit(path: string): void {
  temporary.delete(path);
}
