/**
 * Process groups of running plugins. Each plugin starts detached as the leader of its own group,
 * so killing `-pid` also reaches anything it spawned. Groups still alive when gobstopper exits are
 * killed on the way out (execa's own cleanup skips detached children).
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

export function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) killGroup(group);
    });
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
