/** Comparing verify findings: a rewrite may keep the source's problems but never add one. */
import type { Finding, Transcript } from '../../schemas/generated/types.js';
import type { ProviderClient } from '../plugins/host/clients.js';

/**
 * What verify finds in the parsed source at `path`: a parse that met no unreadable line already
 * carries exactly that (`findings_complete`); otherwise the provider verifies the file.
 */
export async function sourceFindings(provider: ProviderClient, transcript: Transcript, path: string): Promise<Finding[]> {
  if (transcript.findings_complete) return transcript.findings ?? [];
  return (await provider.verify({ path })).findings;
}

const key = (f: Finding) => `${f.severity}\u0000${f.code}`;

/**
 * Findings of `after` beyond those of `before`, counted per (severity, code): line numbers move
 * when records are appended, so they cannot identify a finding across the two files.
 */
export function newFindings(before: Finding[], after: Finding[]): Finding[] {
  const budget = new Map<string, number>();
  for (const f of before) budget.set(key(f), (budget.get(key(f)) ?? 0) + 1);
  const added: Finding[] = [];
  for (const f of after) {
    if (f.severity === 'info') continue;
    const left = budget.get(key(f)) ?? 0;
    if (left > 0) budget.set(key(f), left - 1);
    else added.push(f);
  }
  return added;
}
