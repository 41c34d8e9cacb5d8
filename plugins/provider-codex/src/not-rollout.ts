/**
 * A file with no Codex record at all: another provider's transcript or other JSONL. Parse refuses
 * it and verify reports it, in the same words.
 */
import type { ScanResult } from './scan.js';

/** Completes "is not …". */
export const NOT_A_ROLLOUT = 'a Codex rollout (no record has a session_meta or payload envelope)';

export function isRollout(scan: ScanResult): boolean {
  return scan.identity.first !== null || scan.codexLike;
}
