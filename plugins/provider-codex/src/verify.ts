/**
 * provider/verify: every resume-validity finding for one rollout, and what kind of file it is.
 * Bytes the reader refuses are a finding too (read-refusal.ts), and so is a file that is no rollout
 * at all (foreign-file.ts); only a path that cannot be read at all is an error.
 */
import type { ProviderVerifyParams, ProviderVerifyResult } from '../../../sdk/index.js';
import { foreignFileFinding } from '../../../sdk/foreign-file.js';
import { readRefusalFinding } from '../../../sdk/read-refusal.js';
import { Code } from './findings.js';
import { NOT_A_ROLLOUT, isRollout } from './not-rollout.js';
import { scanSourceAsRead } from './parse.js';
import { absolutePath, toPluginError } from './source.js';

export async function verify(params: ProviderVerifyParams): Promise<ProviderVerifyResult> {
  try {
    const { scan, session } = await scanSourceAsRead(params.path, params, false);
    // The scan's findings judge each line as a rollout's, which says nothing true of this file.
    if (!isRollout(scan)) return { findings: [foreignFileFinding(Code.notCodexRollout, NOT_A_ROLLOUT)], record_count: scan.summary.recordCount };
    return { findings: scan.findings, record_count: scan.summary.recordCount, session_kind: session.kind ?? 'session' };
  } catch (error) {
    const refusal = readRefusalFinding(error);
    if (refusal !== null) return { findings: [refusal], record_count: 0 };
    throw toPluginError(error, absolutePath(params.path));
  }
}
