/** `verify`: the provider's resume-validity findings for one session. */
import type { VerifyOutput } from '../../schemas/generated/types.js';
import { resolveSession } from '../sessions/selector.js';
import type { Runtime } from './runtime.js';

export async function verifySession(runtime: Runtime, selector: string): Promise<VerifyOutput> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  const provider = await runtime.provider(session.provider);
  const result = await provider.verify({ path: session.path });
  const errors = result.findings.filter((f) => f.severity === 'error').length;
  const warnings = result.findings.filter((f) => f.severity === 'warning').length;
  return {
    provider: session.provider,
    session_id: session.session_id,
    path: session.path,
    ...(result.session_kind ? { session_kind: result.session_kind } : {}),
    record_count: result.record_count,
    errors,
    warnings,
    findings: result.findings,
  };
}
