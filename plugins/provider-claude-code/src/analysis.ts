/**
 * A scanned transcript with its live branch and kind: what parse, verify and render share.
 */
import { isAbsolute, resolve } from 'node:path';
import type { SessionHandle, SessionKind } from '../../../schemas/generated/types.js';
import { invalidInput } from '../../../sdk/serve.js';
import { computeLiveBranch, type LiveBranch } from './branch.js';
import { scanTranscript, type ScanOptions, type ScanResult } from './scan.js';
import { sessionKind } from './session-kind.js';
import { handleSessionId } from './session-id.js';
import { PROVIDER_ID } from './provider-id.js';

export interface Analysis {
  scan: ScanResult;
  branch: LiveBranch;
  kind: SessionKind;
}

export function absolutePath(path: string): string {
  return isAbsolute(path) ? path : resolve(path);
}

export async function analyse(path: string, options: ScanOptions): Promise<Analysis> {
  const scan = await scanTranscript(path, options);
  const branch = computeLiveBranch(scan.table, { uuidLine: scan.uuidLine, duplicateUuids: scan.duplicateUuids });
  const kind = sessionKind(path, { sidechainOnly: branch.sidechainOnly, versionAnomaly: scan.versionAnomaly });
  return { scan, branch, kind };
}

/** Refuses files that are clearly another provider's: parsing them as Claude would be a guess. */
export function requireClaude(scan: ScanResult): void {
  if (scan.claudeRecords === 0 && scan.foreignRecords > 0) throw invalidInput(`${scan.path} is not a Claude Code transcript (its records look like another provider's)`);
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
