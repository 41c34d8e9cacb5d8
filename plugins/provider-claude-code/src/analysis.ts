/**
 * A scanned transcript with its live branch and kind: what parse, verify and render share.
 */
import { isAbsolute, resolve } from 'node:path';
import type { SessionHandle, SessionKind } from '../../../schemas/generated/types.js';
import { invalidInput } from '../../../sdk/serve.js';
import { computeLiveBranch, type LiveBranch } from './branch.js';
import { scanAndUse, type ScanOptions, type ScanRows } from './scan.js';
import { sessionKind } from './session-kind.js';
import { handleSessionId } from './session-id.js';
import { PROVIDER_ID } from './provider-id.js';

export interface Analysis {
  scan: ScanRows;
  branch: LiveBranch;
  kind: SessionKind;
}

export function absolutePath(path: string): string {
  return isAbsolute(path) ? path : resolve(path);
}

/** The live branch and kind of a file's scanned rows. */
export function analysisOf(path: string, scan: ScanRows): Analysis {
  const branch = computeLiveBranch(scan.table, { uuidLine: scan.uuidLine, duplicateUuids: scan.duplicateUuids });
  const kind = sessionKind(path, { sidechainOnly: branch.sidechainOnly, versionAnomaly: scan.versionAnomaly });
  return { scan, branch, kind };
}

/**
 * Scans `path` and calls `use` with its analysis, returning what `use` made and the file's sha256
 * once the whole read succeeded. `use` may run while the file is still being hashed (scan.ts
 * scanAndUse), so it must leave no trace but its value.
 */
export async function analyseAndUse<T>(path: string, options: ScanOptions, use: (a: Analysis) => T): Promise<{ sha256: string; value: T }> {
  const { scan, value } = await scanAndUse(path, options, (rows) => use(analysisOf(path, rows)));
  return { sha256: scan.sha256, value };
}

/** Completes "is not …" for a file that is clearly another provider's. */
export const NOT_CLAUDE = "a Claude Code transcript (its records look like another provider's)";

/** No record is Claude's and some are another provider's: reading it as Claude would be a guess. */
export function looksForeign(scan: ScanRows): boolean {
  return scan.claudeRecords === 0 && scan.foreignRecords > 0;
}

/** Refuses files that are clearly another provider's. */
export function requireClaude(scan: ScanRows): void {
  if (looksForeign(scan)) throw invalidInput(`${scan.path} is not ${NOT_CLAUDE}`);
}

export function sessionHandle(a: Analysis): SessionHandle {
  return {
    provider: PROVIDER_ID,
    session_id: handleSessionId(a.scan.path, a.kind, a.scan.sessionId),
    path: a.scan.path,
    cwd: a.scan.cwd,
    kind: a.kind,
    bytes: a.scan.bytes,
    mtime_ms: a.scan.mtimeMs,
    title: a.scan.title,
  };
}
