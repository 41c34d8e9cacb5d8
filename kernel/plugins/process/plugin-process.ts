import { statSync } from 'node:fs';
import type { AdmittedBundle } from '../admission/admit.js';
import { readPrefix } from '../../../sdk/jsonl.js';
import { NdjsonMessageReader, NdjsonMessageWriter } from '../../../sdk/transport/ndjson.js';
import type { ChannelTransport, PeerExit } from '../protocol/plugin-channel.js';
import { PluginFailure } from '../protocol/plugin-failure.js';
import { pluginEnvironment } from './environment.js';
import { killGroup, trackGroup, untrackGroup } from '../../process-group.js';
import { launchFor } from './runtime.js';
import { killPipeHolders, stdioLinks } from './pipe-holders.js';
import { StderrRing } from './stderr-ring.js';
import { stderrEcho } from './stderr-echo.js';
import { MAX_NOTIFICATIONS_WITHOUT_ANSWER } from '../host/plugin-limits.js';
import { loadExeca } from '../../load-execa.js';

export interface SpawnOptions {
  /** The environment declared names are copied from; defaults to this process's. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Largest single message accepted from the plugin. */
  maxOutputBytes: number;
  /** Size of the stderr ring buffer. */
  stderrBytes: number;
}

export interface PluginProcess {
  pid: number;
  stderr: StderrRing;
  transport: ChannelTransport;
}

/** After the plugin exits, how long its last output may take to drain before the group is killed. */
const DRAIN_AFTER_EXIT_MS = 300;
/** Then how long pipes still held open (by something out of the group's reach) are read before they are closed. */
const LET_GO_AFTER_EXIT_MS = 2000;
/** How long a killed group's pipes may take to close before whatever else holds them is looked for. */
const HOLDERS_AFTER_KILL_MS = 200;
/** Then how long to wait for them to close before giving up on reaping. */
const REAP_WAIT_MS = 2000;

/**
 * Starts a bundle's process: cwd = bundle root, only declared environment variables, its own
 * process group, stdin/stdout carrying NDJSON JSON-RPC, stderr into a ring buffer.
 */
export async function spawnPluginProcess(bundle: AdmittedBundle, options: SpawnOptions): Promise<PluginProcess> {
  const { manifest, root } = bundle;
  const execa = await loadExeca();
  const launch = launchFor(manifest, root, options.hostEnv ?? process.env);
  const child = execa(launch.file, launch.args, {
    cwd: root,
    env: pluginEnvironment(manifest.environment, options.hostEnv ?? process.env),
    extendEnv: false,
    detached: true,
    cleanup: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    encoding: 'buffer',
    stripFinalNewline: false,
  });
  const pid = child.pid;
  if (pid === undefined) {
    void child.catch(() => undefined);
    throw new PluginFailure('plugin_spawn_failed', { pluginId: manifest.id, pluginVersion: manifest.version, reason: `could not be started (${launch.file}${whyNotStarted(launch.file)})` });
  }
  const links = stdioLinks(pid);
  const killHolders = () => void killPipeHolders(links);
  trackGroup(pid, killHolders);
  const stderr = new StderrRing(options.stderrBytes);
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
  if ((options.hostEnv ?? process.env).GOBSTOPPER_DEBUG) child.stderr!.on('data', stderrEcho(manifest.id));
  // EPIPE after the plugin died surfaces through the writer; never as an unhandled stream error.
  child.stdin!.on('error', () => undefined);

  let stdoutEnded = false;
  child.stdout!.once('end', () => (stdoutEnded = true));
  child.stdout!.once('close', () => (stdoutEnded = true));
  const reaped = child.then(() => undefined, () => undefined);
  // Something the plugin started in a session of its own (setsid) is out of the group's reach and
  // may hold the pipes open long after the plugin is gone. Such a process is killed when it is
  // found holding them (pipe-holders.ts); where it cannot be found, or it holds them still, they
  // are closed once what was buffered has had time to be read, so this process is not kept alive
  // until that program ends. A call in flight then fails as the plugin's exit.
  const letGoOfPipes = () => {
    for (const pipe of [child.stdout!, child.stderr!, child.stdin!]) pipe.destroy();
  };
  const exited = new Promise<PeerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
      // A leader that exits while something it spawned still holds stdout would otherwise leave
      // the channel waiting forever; give the last lines a moment, then end the group.
      setTimeout(() => {
        if (stdoutEnded) return;
        killGroup(pid);
        killHolders();
        setTimeout(() => {
          if (!stdoutEnded) letGoOfPipes();
        }, LET_GO_AFTER_EXIT_MS).unref();
      }, DRAIN_AFTER_EXIT_MS).unref();
    });
  });

  let terminated: Promise<void> | undefined;
  const terminate = () =>
    (terminated ??= (async () => {
      killGroup(pid);
      const timedOut = Symbol('timed out');
      const within = (ms: number) => Promise.race([reaped, new Promise((r) => setTimeout(() => r(timedOut), ms).unref())]);
      // Pipes still open once the group has had time to die are held from outside it; the scan
      // of /proc is paid only then.
      if ((await within(HOLDERS_AFTER_KILL_MS)) === timedOut) {
        killHolders();
        if ((await within(REAP_WAIT_MS)) === timedOut) letGoOfPipes();
      }
      untrackGroup(pid);
    })());

  const transport: ChannelTransport = {
    reader: new NdjsonMessageReader(child.stdout!, { maxMessageBytes: options.maxOutputBytes, maxNotificationsWithoutAnswer: MAX_NOTIFICATIONS_WITHOUT_ANSWER }),
    writer: new NdjsonMessageWriter(child.stdin!),
    terminate,
    exited,
    stderrTail: () => stderr.tail(),
    stderrText: () => stderr.contents().toString('utf8'),
  };
  return { pid, stderr, transport };
}

/** What stopped a program from starting, as far as the file itself tells. */
function whyNotStarted(file: string): string {
  if (!file.includes('/')) return ': not found on PATH';
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st) return ': no such file';
  if (!st.isFile()) return ': not a regular file';
  if ((st.mode & 0o111) === 0) return `: not executable, mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}`;
  // The kernel then runs the interpreter its first line names, and reports that one missing as
  // though the script were: the script is there, so the interpreter is what to look at.
  const interpreter = shebangInterpreter(file);
  if (interpreter === null || statSync(interpreter, { throwIfNoEntry: false })?.isFile()) return '';
  if (interpreter.endsWith('\r')) return `: its first line ends in a carriage return (Windows line endings), so the interpreter it names is ${JSON.stringify(interpreter)}, which is not there`;
  return `: its first line names the interpreter ${interpreter}, which is not there`;
}

/** The program a script's `#!` line names, or null. */
function shebangInterpreter(file: string): string | null {
  let line: string;
  try {
    line = readPrefix(file, 256).toString('utf8').split('\n', 1)[0]!;
  } catch {
    return null;
  }
  if (!line.startsWith('#!')) return null;
  // Split as the kernel splits it, on spaces and tabs only: a carriage return stays in the name.
  return line.slice(2).replace(/^[ \t]+/, '').split(/[ \t]/, 1)[0] || null;
}
