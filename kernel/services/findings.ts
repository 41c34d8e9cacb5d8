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
 * when records are appended, so they cannot identify a finding across the two files. A warning
 * may stand for an error of the same code the source had: a rewrite can make a problem milder
 * (a Codex record missing its ordinal is an error only as the final record, and a state card
 * appended after it makes it a warning), which is not a problem it added.
 */
export function newFindings(before: Finding[], after: Finding[]): Finding[] {
  const budget = new Map<string, number>();
  for (const f of before) budget.set(key(f), (budget.get(key(f)) ?? 0) + 1);
  const take = (k: string): boolean => {
    const left = budget.get(k) ?? 0;
    if (left === 0) return false;
    budget.set(k, left - 1);
    return true;
  };
  const added: Finding[] = [];
  // Errors first, so that a warning borrows only an error no error of `after` still matches.
  const ordered = [...after.filter((f) => f.severity === 'error'), ...after.filter((f) => f.severity === 'warning')];
  for (const f of ordered) {
    if (take(key(f))) continue;
    if (f.severity === 'warning' && take(key({ ...f, severity: 'error' }))) continue;
    added.push(f);
  }
  // In the order verify reported them.
  return after.filter((f) => added.includes(f));
}
