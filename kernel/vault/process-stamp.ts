/**
 * Who holds a lock or a custody hold, told apart from a later process that got the same pid. A pid
 * alone is not enough: after a reboot, or once pids wrap, the pid a killed run recorded may belong
 * to an unrelated live process, and a lock judged by its pid would then be held forever. On Linux
 * the kernel's boot id and the process's start time (clock ticks since boot, field 22 of
 * /proc/<pid>/stat) pin the process down; where /proc is missing both are left out and the pid is
 * all there is, as in files written before these fields existed.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ProcessStamp {
  pid: number;
  host: string;
  /** /proc/sys/kernel/random/boot_id when the holder wrote it. */
  boot?: string;
  /** The holder's start time in clock ticks since boot, as /proc/<pid>/stat gives it. */
  start?: string;
}

/** Whether a process with this pid exists (EPERM: it does, and belongs to someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const BOOT_ID = /^[0-9a-f-]{1,64}$/;
const TICKS = /^\d{1,20}$/;

let ownBoot: string | null | undefined;

function bootId(): string | null {
  if (ownBoot === undefined) {
    try {
      const text = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      ownBoot = BOOT_ID.test(text) ? text : null;
    } catch {
      ownBoot = null;
    }
  }
  return ownBoot;
}

/** The start time of `pid`, or null when it cannot be read (no /proc, no such process, not allowed). */
function startTimeOf(pid: number): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
  const start = text.slice(text.lastIndexOf(')') + 2).split(' ')[19];
  return start !== undefined && TICKS.test(start) ? start : null;
}

let own: ProcessStamp | undefined;

/** This process, as a lock or hold records it. */
export function currentStamp(): ProcessStamp {
  if (!own) {
    const boot = bootId();
    const start = startTimeOf(process.pid);
    own = { pid: process.pid, host: hostname(), ...(boot ? { boot } : {}), ...(start ? { start } : {}) };
  }
  return own;
}

/** The optional identity fields of a parsed lock or hold; anything malformed is left out. */
export function stampFields(value: { boot?: unknown; start?: unknown }): Pick<ProcessStamp, 'boot' | 'start'> {
  return {
    ...(typeof value.boot === 'string' && BOOT_ID.test(value.boot) ? { boot: value.boot } : {}),
    ...(typeof value.start === 'string' && TICKS.test(value.start) ? { start: value.start } : {}),
  };
}

/**
 * True when the process `stamp` records is certainly gone: on this host, and either it was started
 * before this host last booted, or its pid is free, or the pid now belongs to a process started at
 * another time. A holder on another host cannot be probed from here, so it is never gone.
 */
export function stampGone(stamp: ProcessStamp): boolean {
  if (stamp.host !== hostname()) return false;
  const boot = bootId();
  if (stamp.boot !== undefined && boot !== null && stamp.boot !== boot) return true;
  if (!processAlive(stamp.pid)) return true;
  if (stamp.start === undefined) return false;
  const start = startTimeOf(stamp.pid);
  return start !== null && start !== stamp.start;
}

/** "process 12", or "process 12 on other-host" when it was taken elsewhere. */
export function holderText(stamp: Pick<ProcessStamp, 'pid' | 'host'>): string {
  return `process ${stamp.pid}${stamp.host === hostname() ? '' : ` on ${stamp.host}`}`;
}

/**
 * What to do about the lock or hold files the `holders` recorded: wait, or remove them when no
 * gobstopper runs. One taken on another host is never removed here (another machine may share the
 * vault), so the message says that host is the one to look at.
 */
export function removalAdvice(holders: readonly (Pick<ProcessStamp, 'host'> | null)[], options: { wait?: string; files?: string } = {}): string {
  const wait = options.wait ?? 'wait for it to finish';
  const files = options.files ?? 'the file';
  const here = hostname();
  const elsewhere = [...new Set(holders.flatMap((h) => (h && h.host !== here ? [h.host] : [])))];
  if (elsewhere.length === 0) return `${wait}, or remove ${files} if no gobstopper process is running`;
  const hosts = elsewhere.join(', ');
  return `it was taken on ${hosts}, which this host cannot check (another machine may share this vault); ${wait}, or remove ${files} if no gobstopper process is running on ${hosts}`;
}
