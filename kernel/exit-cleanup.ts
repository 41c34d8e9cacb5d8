/**
 * What this process leaves behind when it ends however it ends: a stop signal (Ctrl-C, a kill, a
 * closed terminal) exits with the status a shell expects, which runs the 'exit' hooks that a
 * signal's default action would skip; private temporary directories registered here are removed by
 * one of those hooks, so an interrupted eval or rehearsal leaves no copy of a session in /tmp.
 */
import { rmSync } from 'node:fs';
import { constants } from 'node:os';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const temporary = new Set<string>();
let signalsInstalled = false;
let removalInstalled = false;

let announce: ((signal: NodeJS.Signals) => void) | null = null;

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

/** Removes `dir` when the process exits, unless the returned function is called first. */
export function removeOnExit(dir: string): () => void {
  temporary.add(dir);
  if (!removalInstalled) {
    removalInstalled = true;
    process.on('exit', () => {
      for (const path of temporary) rmSync(path, { recursive: true, force: true });
    });
  }
  exitOnStopSignals();
  return () => void temporary.delete(dir);
}
