/**
 * The session's UsageSample (dialects.md §1.5): context = the last live assistant record's
 * input + cache_read + cache_creation + output; lifetime = the input and cache-read tokens of every
 * API response in the records read, each response counted once (its split records repeat the same
 * input counters).
 */
import type { LifetimeScope, UsageSample } from '../../../schemas/generated/types.js';
import { modelContextWindow } from './models.js';
import { FLAG_SIDECHAIN, type RecordTable } from './record-table.js';

export interface UsageInputs {
  /** Records in file order (a whole file or a tail). */
  table: RecordTable;
  /** Whether a record is on the live branch. */
  isLive: (i: number) => boolean;
  /** The live branch starts at a compaction boundary. */
  startsAtCompaction: boolean;
  /** Every record of the file was read. */
  wholeFile: boolean;
  /** The walk from the leaf stopped at a missing parent or a cycle. */
  brokenAncestry: boolean;
  /** When nothing live reports usage, take the last main-chain report in what was read (tails). */
  fallbackToLastReport: boolean;
}


export function usageSample(inputs: UsageInputs): UsageSample {
  const t = inputs.table;
  let lifetimeInput = 0;
  let lifetimeCached = 0;
  const counted = new Set<number>();
  let reports = 0;
  let chosen = -1;
  let fallback = -1;
  for (let i = 0; i < t.length; i += 1) {
    const context = t.usageContext[i]!;
    if (context < 0 || t.type[i] !== 'assistant') continue;
    const problem = t.usageProblems.get(i);
    if (problem === undefined) {
      // Split records of one response repeat its input counters: count each response once.
      const r = t.response[i]!;
      if (r < 0 || !counted.has(r)) {
        if (r >= 0) counted.add(r);
        reports += 1;
        lifetimeInput += t.usageInput[i]!;
        lifetimeCached += t.usageCached[i]!;
      }
      // A zero usage is a placeholder the client wrote itself; it reports no context.
      if (context === 0) continue;
    }
    if (inputs.isLive(i)) chosen = i;
    if (!t.has(i, FLAG_SIDECHAIN) || fallback < 0) fallback = i;
  }
  if (chosen < 0 && inputs.fallbackToLastReport) chosen = fallback;
  const scope: LifetimeScope = reports === 0 ? 'absent' : inputs.wholeFile ? 'full' : 'partial';
  const sample: UsageSample = {
    context_tokens: 0,
    lifetime_input_tokens: lifetimeInput,
    lifetime_cached_tokens: Math.min(lifetimeCached, lifetimeInput),
    model_context_window: null,
    model: null,
    context_state: 'absent',
    lifetime_scope: scope,
    context_components: null,
    context_reason: null,
  };
  if (chosen >= 0) {
    sample.model = t.model[chosen] ?? null;
    sample.model_context_window = modelContextWindow(t.model[chosen]);
    const problem = t.usageProblems.get(chosen);
    if (problem === undefined) {
      sample.context_tokens = t.usageContext[chosen]!;
      sample.context_state = 'reported';
    } else {
      sample.context_state = 'unknown';
      sample.context_reason = problem.reason;
      sample.context_components = problem.components;
    }
  } else if (inputs.startsAtCompaction) {
    // Compacted and not yet answered: the old report is stale and no new one exists.
    sample.context_state = 'reset';
  } else if (inputs.brokenAncestry && inputs.wholeFile) {
    sample.context_state = 'unknown';
    sample.context_reason = 'invalid_ancestry';
  } else if (!inputs.wholeFile) {
    sample.context_state = 'unknown';
    sample.context_reason = 'read_limit';
  }
  return sample;
}
