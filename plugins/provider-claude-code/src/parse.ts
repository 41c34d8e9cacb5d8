/**
 * provider/parse: the normalized transcript of one Claude session, from a single streaming read.
 */
import type { ProviderParseParams, Transcript } from '../../../schemas/generated/types.js';
import { invalidInput, sourceChanged } from '../../../sdk/serve.js';
import { absolutePath, analyseAndUse, requireClaude, sessionHandle, type Analysis } from './analysis.js';
import { isLive } from './branch.js';
import { withInputErrors } from './errors.js';
import { transcriptFindings } from './findings.js';
import { toItems } from './items.js';
import { readLimits } from './limits.js';
import { livePairing, type Pairing } from './pairing.js';
import { rememberParsed } from './parsed-source.js';
import { usageSample } from './usage.js';

/**
 * A transcript whose tree loops or whose live branch uses a tool id twice has no single reading:
 * every answer about it would be a guess, so it is refused (verify still reports why).
 */
export function refuseAmbiguous(a: Analysis, pairing: Pairing = livePairing(a.scan.table, a.branch)): void {
  const cycle = a.branch.cycleLines[0];
  if (cycle !== undefined) throw invalidInput(`${a.scan.path}: the parent chain through line ${cycle + 1} loops back on itself`);
  const dup = pairing.duplicateCalls[0];
  if (dup) throw invalidInput(`${a.scan.path}: line ${dup.line + 1} repeats a tool_use id first used on line ${dup.firstLine + 1}`);
}

export async function parseTranscript(params: ProviderParseParams, afterLine?: (line: number) => void): Promise<Transcript> {
  const path = absolutePath(params.path);
  return withInputErrors(path, async () => {
    // The transcript is built while a parallel scan may still be hashing the file; a refusal of
    // the transcript counts only once the file is known to be the one asked for.
    const limits = readLimits(params);
    let analysis: Analysis | null = null;
    const { sha256, value } = await analyseAndUse(path, { limits, strict: true, afterLine }, (a) => {
      analysis = a;
      try {
        return { transcript: transcriptOf(a) };
      } catch (error) {
        return { error };
      }
    });
    if (params.expected_sha256 && params.expected_sha256 !== sha256) throw sourceChanged(`${path} changed since it was hashed`);
    if ('error' in value) throw value.error;
    value.transcript.source_sha256 = sha256;
    // A render of these bytes may start from this analysis (render-from-parse.ts).
    if (analysis !== null) rememberParsed(sha256, limits, analysis);
    return value.transcript;
  });
}

/** The transcript of an analysed file; its source_sha256 is set by the caller, once known. */
function transcriptOf(a: Analysis): Transcript {
  requireClaude(a.scan);
  // A composite is reported as what it is rather than refused: it has no single reading, so
  // every item is inert (no context, nothing elidable) and the findings say why.
  const composite = a.kind === 'composite';
  const pairing = livePairing(a.scan.table, a.branch);
  if (!composite) refuseAmbiguous(a, pairing);
  const { scan, branch } = a;
  const items = toItems(scan.table, branch);
  if (composite) for (const item of items) Object.assign(item, { est_tokens: 0, elidable_bytes: null, elidable_parts: 0, payload_sha256: null });
  return {
    session: sessionHandle(a),
    items,
    usage: usageSample({
      table: scan.table,
      isLive: (i) => isLive(branch, scan.table, i),
      startsAtCompaction: branch.cutLine >= 0,
      wholeFile: true,
      brokenAncestry: branch.danglingLine >= 0 || branch.pathCycleLine >= 0,
      fallbackToLastReport: false,
    }),
    source_sha256: '',
    bytes: scan.bytes,
    record_count: scan.recordCount,
    record_types: scan.recordTypes,
    findings: transcriptFindings(scan, branch, a.kind, pairing),
    // A parse that succeeds met no unreadable line, so these are exactly what verify reports.
    findings_complete: true,
  };
}
