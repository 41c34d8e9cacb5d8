/**
 * Process groups of what gobstopper runs (plugins, legacy commands, rehearsed clients). Each starts
 * detached as the leader of its own group, so killing `-pid` also reaches anything it spawned. Groups still alive when gobstopper exits are
 * killed on the way out (execa's own cleanup skips detached children), and so are they when it is
 * interrupted: a detached group never sees the terminal's Ctrl-C, and a signal's default action
 * ends the process without an 'exit' event.
 */
import { exitOnStopSignals } from './exit-cleanup.js';

/** Each live group's leader, with what else to stop along with it (see trackGroup). */
const liveGroups = new Map<number, (() => void) | undefined>();
let exitHookInstalled = false;

function killAll(): void {
  for (const [group, alsoStop] of liveGroups) {
    killGroup(group);
    try {
      alsoStop?.();
    } catch {
      // What cannot be stopped must not keep the other groups from being killed.
    }
  }
}

/**
 * `alsoStop` (synchronous: it runs in the 'exit' hook) stops what the group started out of the
 * group's reach, where the caller can find it.
 */
export function trackGroup(pid: number, alsoStop?: () => void): void {
  liveGroups.set(pid, alsoStop);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', killAll);
    exitOnStopSignals();
  }
}

export function untrackGroup(pid: number): void {
  liveGroups.delete(pid);
}

/** SIGKILL to the whole group; a group that is already gone is fine. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
