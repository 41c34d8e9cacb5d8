/**
 * Rollout file names: `rollout-YYYY-MM-DDThh-mm-ss-<thread id>.jsonl`. The client finds a thread's
 * file by the id in its name and then requires the same id inside (`session_meta.payload.id`).
 */
import { basename } from 'node:path';

// The whole name: the client lists only files that start with `rollout-` (as discovery does), so
// a name with anything in front is one it cannot find by id.
const NAME = /^rollout-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-([0-9A-Za-z][0-9A-Za-z-]*)\.jsonl$/;

export interface RolloutName {
  timestamp: string;
  id: string;
}

/** The timestamp and id a rollout's file name carries, or null for other names. */
export function parseRolloutName(path: string): RolloutName | null {
  const m = NAME.exec(basename(path));
  return m ? { timestamp: m[1]!, id: m[2]! } : null;
}

export function isRolloutFileName(name: string): boolean {
  return name.startsWith('rollout-') && name.endsWith('.jsonl');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The client names files by local wall-clock time, to the second. */
export function rolloutTimestamp(at: Date): string {
  return `${pad(at.getFullYear(), 4)}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}-${pad(at.getMinutes())}-${pad(at.getSeconds())}`;
}

/** `timestamp` as rolloutTimestamp writes it (or as a client-named file carries it). */
export function rolloutFileName(timestamp: string, id: string): string {
  return `rollout-${timestamp}-${id}.jsonl`;
}

/** Ids we write into names and records: what the original accepted, and safe in a file name. */
export function isValidNewSessionId(id: string): boolean {
  return /^[0-9A-Za-z-]{1,128}$/.test(id);
}
