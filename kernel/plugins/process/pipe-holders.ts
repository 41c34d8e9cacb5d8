/**
 * Processes outside a plugin's process group that still hold its stdio pipes. Killing the group
 * misses a plugin that re-ran itself in a session of its own (`setsid -w`, a detached spawn that
 * inherits stdio): the process the host started goes, the one that answers stays, attached to
 * pipes nothing will ever close. Only the plugin's own descendants inherit those descriptors (the
 * host's ends are close-on-exec), so whatever holds one was started, directly or not, by the
 * plugin. Found through /proc; where there is none (not Linux) nothing is found and the pipes are
 * only let go. A program that closed them (a daemon proper) is out of reach.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

// Node gives a child socketpairs, not pipes; each end has an inode of its own, so the child's ends
// are named by what its own descriptors say.
const STREAM_LINK = /^(?:pipe|socket):\[\d+\]$/;

/**
 * What /proc says the stdin, stdout and stderr of `pid` are ("socket:[inode]"), read right after
 * the spawn: the descriptors are the ones the host gave it, and they stay with what inherits them.
 */
export function stdioLinks(pid: number): Set<string> {
  const links = new Set<string>();
  for (const fd of [0, 1, 2]) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (STREAM_LINK.test(link)) links.add(link);
    } catch {
      // Gone already, or no /proc: nothing to look for later.
    }
  }
  return links;
}

/** Every other process with an open descriptor on one of `links`. */
function pipeHolders(links: ReadonlySet<string>): number[] {
  if (links.size === 0) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const holders: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or not ours to read (then it cannot have inherited our pipes either)
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (links.has(link)) {
        holders.push(Number(entry));
        break;
      }
    }
  }
  return holders;
}

/**
 * SIGKILL to each holder and, where it leads its own process group (what `setsid` makes it), to
 * that group too, which takes what it started along.
 */
export function killPipeHolders(links: ReadonlySet<string>): number[] {
  const holders = pipeHolders(links);
  for (const pid of holders) {
    const leads = groupOf(pid) === pid;
    for (const target of leads ? [-pid, pid] : [pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  return holders;
}

function groupOf(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' do not.
    const pgrp = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isInteger(pgrp) && pgrp > 0 ? pgrp : undefined;
  } catch {
    return undefined;
  }
}
