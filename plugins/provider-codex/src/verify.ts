/** provider/verify: every resume-validity finding for one rollout, and what kind of file it is. */
import type { ProviderVerifyParams, ProviderVerifyResult } from '../../../sdk/index.js';
import { scanSource } from './parse.js';

export async function verify(params: ProviderVerifyParams): Promise<ProviderVerifyResult> {
  const { scan, session } = await scanSource(params.path, params, false);
  return { findings: scan.findings, record_count: scan.summary.recordCount, session_kind: session.kind ?? 'session' };
}
