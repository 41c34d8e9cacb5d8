/**
 * Legacy userspace presets: `command = "..."` with `trusted_legacy_command = true`. The command runs
 * under `sh -c` in its own process group, reads one JSON object on stdin and prints `{"edits": [...]}`.
 * Its edits then go through exactly the admission every other proposal does. The whole group is
 * killed when the command exits (whatever it left running goes with it), at the deadline, or when
 * output passes the cap, so a stuck or chatty script cannot hang or flood the host. A failure says
 * what the script last wrote to stderr and how its output began, as a plugin's does: those are the
 * words its author needs to fix it.
 */
import type { Edit, TranscriptItem, UsageSample } from '../../schemas/generated/types.js';
import { validateEdit } from '../../schemas/generated/validators.js';
import { GobstopperError } from '../errors.js';
import { checkAgainst } from '../plugins/protocol/schema-check.js';
import { killGroup, trackGroup, untrackGroup } from '../process-group.js';
import { killPipeHolders, stdioLinks } from '../plugins/process/pipe-holders.js';
import { stderrEcho } from '../plugins/process/stderr-echo.js';
import { StderrRing } from '../plugins/process/stderr-ring.js';
import { loadExeca } from '../load-execa.js';

export const LEGACY_COMMAND_TIMEOUT_MS = 30_000;
export const LEGACY_COMMAND_MAX_OUTPUT_BYTES = 1024 * 1024;
/** How long the output pipe is read after the command's group is gone (what it printed is in the pipe already). */
const PIPE_GRACE_MS = 250;
/** What is kept of the command's stderr, as for a plugin's: its last lines name the failure. */
const STDERR_KEPT_BYTES = 64 * 1024;
/** How much of output that is not JSON an error quotes, as for a plugin's line. */
const QUOTED_OUTPUT_CHARS = 80;

export interface LegacyCommandInput {
  session_id: string;
  provider: string;
  items: readonly TranscriptItem[];
  usage: UsageSample;
}

export interface LegacyCommandRequest {
  command: string;
  /** The config table that set the command, e.g. [presets.custom-script]; named in every error. */
  table: string;
  input: LegacyCommandInput;
  timeoutMs?: number;
  maxOutputBytes?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export type LegacyCommandRunner = (request: LegacyCommandRequest) => Promise<Edit[]>;

const failed = (table: string, what: string, details?: Record<string, unknown>, stderrTail = '') =>
  new GobstopperError('legacy_command_failed', `legacy command from ${table} ${what}${stderrTail ? ` (stderr: ${stderrTail})` : ''}`, {
    details: { table, ...details, ...(stderrTail ? { stderr_tail: stderrTail } : {}) },
  });

export const runLegacyCommand: LegacyCommandRunner = async (request) => {
  const timeoutMs = request.timeoutMs ?? LEGACY_COMMAND_TIMEOUT_MS;
  const maxOutputBytes = request.maxOutputBytes ?? LEGACY_COMMAND_MAX_OUTPUT_BYTES;
  const execa = await loadExeca();
  const subprocess = execa('sh', ['-c', request.command], {
    input: JSON.stringify(request.input),
    // Its own process group, tracked: an interrupted plan ends the script and what it started.
    detached: true,
    cleanup: false,
    buffer: false,
    reject: false,
    stdout: 'pipe',
    stderr: 'pipe',
    ...(request.cwd ? { cwd: request.cwd } : {}),
    ...(request.env ? { env: request.env, extendEnv: false } : {}),
  });

  let stopped: 'timeout' | 'overflow' | null = null;
  const pid = subprocess.pid;
  // What the script was given to write to; whatever still holds it once the group is gone was
  // started by the script (pipe-holders.ts).
  const links = pid !== undefined ? stdioLinks(pid) : new Set<string>();
  let escapees = 0;
  const stopEscapees = () => void (escapees += killPipeHolders(links).length);
  if (pid !== undefined) trackGroup(pid, stopEscapees);
  const stopGroup = () => {
    if (pid !== undefined) killGroup(pid);
  };
  const stderr = new StderrRing(STDERR_KEPT_BYTES);
  subprocess.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  // Everything it writes reaches the terminal only when debugging; a failure quotes the last lines.
  if (process.env.GOBSTOPPER_DEBUG) subprocess.stderr?.on('data', stderrEcho(`command of ${request.table}`));
  const chunks: Buffer[] = [];
  let outputBytes = 0;
  subprocess.stdout?.on('data', (chunk: Buffer) => {
    if (stopped) return;
    outputBytes += chunk.length;
    if (outputBytes > maxOutputBytes) {
      stopped = 'overflow';
      stopGroup();
      return;
    }
    chunks.push(chunk);
  });
  // A process that left the group (`setsid sleep 100 &`) survives the group's kill and may hold
  // stdout open, so the pipe would not end until it did: once the group is gone, what is in the
  // pipe is read for a moment, then what still holds it is stopped and the pipe is closed from
  // this end.
  let held = false;
  let cut: NodeJS.Timeout | undefined;
  const closePipeSoon = () => {
    cut ??= setTimeout(() => {
      if (subprocess.stdout && !subprocess.stdout.readableEnded) {
        held = true;
        stopEscapees();
        subprocess.stdout.destroy();
      }
      // Held stderr says nothing about the answer, but the command is not done until it ends.
      if (subprocess.stderr && !subprocess.stderr.readableEnded) {
        stopEscapees();
        subprocess.stderr.destroy();
      }
    }, PIPE_GRACE_MS);
  };
  const deadline = setTimeout(() => {
    stopped ??= 'timeout';
    stopGroup();
    closePipeSoon();
  }, timeoutMs);
  // The answer is complete when the command's own process exits. Something it left in the background
  // (`sleep 60 & echo ...`) may still hold stdout open, and the pipe would not end until it did:
  // the group goes now, and what was printed is read to the end of the pipe.
  let leftRunning = false;
  subprocess.once('exit', () => {
    leftRunning = groupAlive(subprocess.pid);
    stopGroup();
    closePipeSoon();
  });

  let result;
  try {
    result = await subprocess;
  } finally {
    clearTimeout(deadline);
    clearTimeout(cut);
    // Anything the script left running in the background goes with it.
    stopGroup();
    if (pid !== undefined) untrackGroup(pid);
  }

  const tail = stderr.tail();
  if (stopped === 'timeout') throw failed(request.table, `did not finish within ${formatMs(timeoutMs)} and was stopped`, { timeout_ms: timeoutMs }, tail);
  if (stopped === 'overflow') throw failed(request.table, `printed more than ${maxOutputBytes} bytes and was stopped`, { max_output_bytes: maxOutputBytes }, tail);
  if (result.exitCode === undefined && result.signal === undefined && result.failed) {
    throw failed(request.table, `could not be started (${(result as { code?: string }).code ?? 'spawn error'})`);
  }
  if (result.signal) throw failed(request.table, `was killed by ${result.signal}`, undefined, tail);
  if (result.exitCode !== 0) throw failed(request.table, `exited with status ${result.exitCode}`, { exit_code: result.exitCode }, tail);
  const output = Buffer.concat(chunks);
  try {
    return parseLegacyOutput(output, request.table, tail);
  } catch (error) {
    // Output that is not JSON may be an answer cut short: it was to come from what the command left
    // running. A whole JSON document of the wrong shape is the command's own answer, and its error
    // says what to fix.
    if ((!held && !leftRunning) || isJson(output)) throw error;
    const printed = output.length === 0 ? '' : ` (it printed ${describeOutput(output)})`;
    if (held) {
      const fate = escapees > 0 ? 'it was stopped' : 'it could not be found, and was not stopped';
      throw failed(request.table, `exited before printing a complete answer${printed}, and a process it started outside its process group (setsid?) held its output open; ${fate}`, undefined, tail);
    }
    throw failed(request.table, `exited before printing a complete answer${printed} and left processes running, which were stopped: a command is done when its own process exits, so print the answer before it does`, undefined, tail);
  }
};

function isJson(output: Buffer): boolean {
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(output));
    return true;
  } catch {
    return false;
  }
}

/** Its size and how it began, quoted and escaped: a stray print is found by its words. */
function describeOutput(output: Buffer, text = new TextDecoder('utf-8').decode(output)): string {
  return `${output.length} bytes${output.length > 0 ? `, beginning ${quotedStart(text)}` : ''}`;
}

/** Whether anything of the process group `pid` leads is still alive. */
function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Exactly one JSON object with an `edits` array of schema-valid edits. Other top-level keys are
 * ignored. `stderrTail` (what the command last wrote to stderr) goes into every error.
 */
export function parseLegacyOutput(output: Buffer, table: string, stderrTail = ''): Edit[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(output);
  } catch {
    throw failed(table, 'printed output that is not UTF-8', undefined, stderrTail);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's own message is left out; it says only where the JSON broke.
    throw failed(table, `did not print valid JSON (${describeOutput(output, text)})`, undefined, stderrTail);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !Array.isArray((parsed as { edits?: unknown }).edits)) {
    throw failed(table, 'must print one JSON object of the form {"edits": [...]}', undefined, stderrTail);
  }
  const edits = (parsed as { edits: unknown[] }).edits;
  edits.forEach((edit, index) => {
    const violation = checkAgainst(validateEdit, edit);
    if (violation) {
      const op = edit && typeof edit === 'object' ? (edit as { op?: unknown }).op : undefined;
      const opText = typeof op === 'string' && /^[a-z_]{1,32}$/.test(op) ? ` (op '${op}')` : '';
      // The schema's words and place say what to fix; they quote no value of the output (at most the
      // name of a member the edit should not have).
      const where = `${violation.pointer || '/'}: ${violation.message}`;
      throw failed(table, `printed edit ${index}${opText}, which is not a valid elide, inject_digest, provider_compact or cache_edit edit (at ${where})`, { edit_index: index, pointer: violation.pointer }, stderrTail);
    }
  });
  return edits as Edit[];
}

function quotedStart(text: string): string {
  const chars = [...text];
  return `${JSON.stringify(chars.slice(0, QUOTED_OUTPUT_CHARS).join(''))}${chars.length > QUOTED_OUTPUT_CHARS ? '…' : ''}`;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
