/**
 * provider/verify: resume-validity findings. Problems with the content are findings (a candidate
 * must show none the source did not have); only a path that cannot be read at all is an error.
 */
import type { Finding, ProviderVerifyParams, ProviderVerifyResult } from '../../../schemas/generated/types.js';
import { JsonlInputError, JsonlLimitError } from '../../../sdk/jsonl.js';
import { absolutePath, analyseAndUse } from './analysis.js';
import { asPluginError } from './errors.js';
import { transcriptFindings } from './findings.js';
import { readLimits } from './limits.js';

function unreadable(code: string, message: string, line: number | null = null): ProviderVerifyResult {
  const finding: Finding = { severity: 'error', code, message, line_index: line };
  return { findings: [finding], record_count: 0 };
}

export async function verifyTranscript(params: ProviderVerifyParams): Promise<ProviderVerifyResult> {
  const path = absolutePath(params.path);
  try {
    // Findings need the tree, the pairing and the line states, not labels or payload measures.
    // Nothing here reads the file's sha256, so it is not computed.
    const { value } = await analyseAndUse(path, { limits: readLimits(params), strict: false, detail: false, hash: false }, (a) => ({
      findings: transcriptFindings(a.scan, a.branch, a.kind),
      record_count: a.scan.recordCount,
      session_kind: a.kind,
    }));
    return value;
  } catch (error) {
    if (error instanceof JsonlInputError && error.reason === 'empty') return unreadable('empty_transcript', 'the file is empty: the client finds no conversation');
    if (error instanceof JsonlInputError && error.reason === 'binary') return unreadable('binary_content', 'the file contains NUL bytes: it is not JSONL');
    if (error instanceof JsonlLimitError) {
      // A line over the record limit is not read past: nothing after it can be judged.
      if (error.limit === 'line') return unreadable('oversized_record', `${error.message}; the rest of the file was not read`, error.line);
      return unreadable(error.limit === 'bytes' ? 'over_byte_limit' : 'over_record_limit', error.message);
    }
    throw asPluginError(error, path);
  }
}
