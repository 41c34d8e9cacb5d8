/**
 * provider/verify: resume-validity findings. Problems with the content are findings (a candidate
 * must show none the source did not have), bytes the reader refuses included (read-refusal.ts), and
 * so is a file that is another provider's (foreign-file.ts); only a path that cannot be read at all
 * is an error.
 */
import type { ProviderVerifyParams, ProviderVerifyResult } from '../../../schemas/generated/types.js';
import { foreignFileFinding } from '../../../sdk/foreign-file.js';
import { readRefusalFinding } from '../../../sdk/read-refusal.js';
import { NOT_CLAUDE, absolutePath, analyseAndUse, looksForeign, type Analysis } from './analysis.js';
import { asPluginError } from './errors.js';
import { transcriptFindings } from './findings.js';
import { readLimits } from './limits.js';
import { verifyRendered } from './verify-rendered.js';

export async function verifyTranscript(params: ProviderVerifyParams): Promise<ProviderVerifyResult> {
  const path = absolutePath(params.path);
  try {
    const limits = readLimits(params);
    // A candidate this process has just rendered is read with the rows of the source it copied.
    const fromRender = await verifyRendered(path, limits, report);
    if (fromRender !== null) return fromRender;
    // Findings need the tree, the pairing and the line states, not labels or payload measures.
    // Nothing here reads the file's sha256, so it is not computed.
    const { value } = await analyseAndUse(path, { limits, strict: false, detail: false, hash: false }, report);
    return value;
  } catch (error) {
    const refusal = readRefusalFinding(error);
    if (refusal !== null) return { findings: [refusal], record_count: 0 };
    throw asPluginError(error, path);
  }
}

/** Judged as a Claude transcript only when it is one: another provider's records would each be "wrong". */
function report(a: Analysis): ProviderVerifyResult {
  if (looksForeign(a.scan)) return { findings: [foreignFileFinding('not_claude_transcript', NOT_CLAUDE)], record_count: a.scan.recordCount };
  return { findings: transcriptFindings(a.scan, a.branch, a.kind), record_count: a.scan.recordCount, session_kind: a.kind };
}
