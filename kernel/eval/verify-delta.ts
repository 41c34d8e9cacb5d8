/**
 * Splits a candidate's verify findings into those the source already had and those the rewrite
 * introduced. A rewrite is judged only on what it added: a session with a torn last line stays torn.
 */
import type { Finding } from '../../schemas/generated/types.js';

export interface VerifyDelta {
  errors: number;
  warnings: number;
  newErrors: number;
  preexistingErrors: number;
  /** Each candidate finding with whether the source had it. */
  marked: Array<{ finding: Finding; preexisting: boolean }>;
}

// Edits happen in place, so a finding that survives keeps its code and record; its message may
// quote sizes that the rewrite changed, so the message is not part of the identity.
const findingKey = (f: Finding) => `${f.severity}\u0000${f.code}\u0000${f.line_index ?? ''}`;

export function verifyDelta(source: readonly Finding[], candidate: readonly Finding[]): VerifyDelta {
  const remaining = new Map<string, number>();
  for (const f of source) remaining.set(findingKey(f), (remaining.get(findingKey(f)) ?? 0) + 1);
  const delta: VerifyDelta = { errors: 0, warnings: 0, newErrors: 0, preexistingErrors: 0, marked: [] };
  for (const finding of candidate) {
    const key = findingKey(finding);
    const left = remaining.get(key) ?? 0;
    const preexisting = left > 0;
    if (preexisting) remaining.set(key, left - 1);
    if (finding.severity === 'error') {
      delta.errors += 1;
      if (preexisting) delta.preexistingErrors += 1;
      else delta.newErrors += 1;
    } else if (finding.severity === 'warning') delta.warnings += 1;
    delta.marked.push({ finding, preexisting });
  }
  return delta;
}
