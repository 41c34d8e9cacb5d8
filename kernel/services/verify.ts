/** `verify`: the provider's resume-validity findings for one session. */
import type { Finding, VerifyOutput } from '../../schemas/generated/types.js';
import { resolveSession } from '../sessions/selector.js';
import { endsWithFinishedLine } from './publication.js';
import type { Runtime } from './runtime.js';

export async function verifySession(runtime: Runtime, selector: string): Promise<VerifyOutput> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  const provider = await runtime.provider(session.provider);
  const result = await provider.verify({ path: session.path });
  const findings = [...result.findings, ...(await unfinishedLastLine(session.path, result.findings, result.record_count))];
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.filter((f) => f.severity === 'warning').length;
  return {
    provider: session.provider,
    session_id: session.session_id,
    path: session.path,
    ...(result.session_kind ? { session_kind: result.session_kind } : {}),
    record_count: result.record_count,
    errors,
    warnings,
    findings,
  };
}

/**
 * A provider reports a torn last line only when it does not parse; one that parses but has no
 * newline after it is refused by apply all the same (the client would glue its next record onto
 * it), so verify says so too, in the words plan warns with.
 */
async function unfinishedLastLine(path: string, reported: readonly Finding[], recordCount: number): Promise<Finding[]> {
  if (reported.some((f) => f.code === 'torn_final_line')) return [];
  // A file that cannot be read now has already been read by the provider; its findings stand.
  if (await endsWithFinishedLine(path).catch(() => true)) return [];
  return [
    {
      severity: 'warning',
      code: 'torn_final_line',
      message: 'the session ends with a torn record (no newline after it: a write in progress?); apply refuses it until the client finishes that line',
      line_index: recordCount > 0 ? recordCount - 1 : null,
    },
  ];
}
