import { killGroup, trackGroup, untrackGroup } from '../../process-group.js';
import type { ClientLaunch } from './client-launch.js';
import { loadExeca } from '../../load-execa.js';

export interface ClientOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
}

/** Output beyond this is the client misbehaving; the rehearsal needs only its first lines and last error. */
const MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

/**
 * Runs a client as the leader of its own process group and waits for it, bounded by `timeoutMs`.
 * At the deadline, and after any exit, the whole group is killed: clients start helpers (shells,
 * language servers, app-server threads) that must not outlive the rehearsal.
 */
export async function runClientGroup(launch: ClientLaunch, timeoutMs: number): Promise<ClientOutcome> {
  const started = Date.now();
  const execa = await loadExeca();
  const subprocess = execa(launch.command, launch.args, {
    cwd: launch.cwd,
    env: launch.env,
    extendEnv: false,
    stdin: 'ignore',
    detached: true,
    cleanup: false,
    reject: false,
    maxBuffer: MAX_OUTPUT_BYTES,
    stripFinalNewline: false,
  });
  const pid = subprocess.pid;
  // A rehearsal interrupted with the host must not leave a client running against a closed stub.
  if (pid !== undefined) trackGroup(pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (pid !== undefined) killGroup(pid);
  }, timeoutMs);
  try {
    const result = await subprocess;
    return {
      exitCode: typeof result.exitCode === 'number' ? result.exitCode : null,
      signal: result.signal ?? null,
      timedOut,
      durationMs: Date.now() - started,
      stdout: typeof result.stdout === 'string' ? result.stdout : '',
      stderr: typeof result.stderr === 'string' ? result.stderr : String(result.stderr ?? result.shortMessage ?? ''),
    };
  } finally {
    clearTimeout(timer);
    if (pid !== undefined) {
      killGroup(pid);
      untrackGroup(pid);
    }
  }
}
