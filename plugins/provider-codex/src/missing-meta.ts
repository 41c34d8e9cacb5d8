/**
 * What is said of a rollout without a session_meta record codex can read, wherever that stops the
 * provider (a parse for a plan, a render for a fork): codex cannot resume it, and a copy has no
 * record to carry a new id. A byte-order mark in front of the first line is the usual cause.
 */
import { readPrefix } from '../../../sdk/jsonl.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export function beginsWithBom(path: string): boolean {
  try {
    return readPrefix(path, UTF8_BOM.length).equals(UTF8_BOM);
  } catch {
    return false;
  }
}

/** One line, short enough to reach the user whole with a long path in it. */
export function missingSessionMetaMessage(path: string): string {
  const why = beginsWithBom(path) ? ' (its first line begins with a UTF-8 byte-order mark)' : '';
  return `${path}: no session_meta record codex can read${why}, so codex cannot resume it (gobstopper verify lists every finding)`;
}

/** A session_meta the client reads as none: the same outcome, with the field that causes it. */
export function unreadableSessionMetaMessage(path: string, why: string): string {
  return `${path}: ${why}, so codex cannot resume it (gobstopper verify lists every finding)`;
}
