/**
 * Session identity. The client finds a session by its file name in the cwd's project folder (a
 * renamed file resumes under its new name, realclients.md §1.2 case A), so a file named like an id
 * is known by that name; other files fall back to the first `sessionId` on their records.
 */
import { basename } from 'node:path';
import type { SessionKind } from '../../../schemas/generated/types.js';
import { invalidInput } from '../../../sdk/serve.js';

/** The id shapes this provider writes into file names: letters, digits and dashes. */
const FILE_ID = /^[0-9A-Za-z][0-9A-Za-z-]{0,127}$/;

export function fileStem(path: string): string {
  return basename(path).replace(/\.jsonl$/i, '');
}

export function isFileId(id: string): boolean {
  return FILE_ID.test(id);
}

export function handleSessionId(path: string, kind: SessionKind, recordSessionId: string | null): string {
  const stem = fileStem(path);
  // A sub-agent file carries its parent's sessionId; its own name keeps it distinct.
  if (kind === 'subagent') return stem.length > 0 ? stem.slice(0, 256) : recordSessionId ?? 'unknown';
  if (isFileId(stem)) return stem;
  if (recordSessionId && recordSessionId.length <= 256) return recordSessionId;
  return stem.length > 0 ? stem.slice(0, 256) : 'unknown';
}

/** A new session id becomes a file name, so it must be a plain id. */
export function requireFileId(id: string, what: string): string {
  if (!isFileId(id)) throw invalidInput(`${what} must be 1-128 letters, digits or dashes, starting with a letter or digit`);
  return id;
}
