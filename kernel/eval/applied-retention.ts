/**
 * What an applied compaction records about retention: the source's heuristic checks (the ones
 * `eval-study --prepare-manifest` picks) scored on the verified candidate, and the event numbers
 * eval rows carry for the same plan.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type * as T from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { bindManifest, prepareManifest, type BoundCheck } from './study-manifest.js';
import { scoreRetention } from './study-score.js';
import { messageShapeSlots, type TextSlot } from './study-slots.js';
import { itemsCovered } from './plan-metrics.js';

export interface RetentionBaseline {
  checks: BoundCheck[];
  /** Byte range of each source line. */
  lines: Array<[number, number]>;
  slotsByLine: Map<number, TextSlot[]>;
}

function lineRanges(bytes: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    out.push([start, end]);
    start = end + 1;
  }
  return out;
}

/**
 * The heuristic checks an applied compaction is measured against (the same candidates
 * `eval-study --prepare-manifest` picks), bound to the source; null when the source has none.
 */
export function retentionBaseline(source: Buffer, items: readonly T.TranscriptItem[]): RetentionBaseline | null {
  // Preparing the manifest parses every live record once; its slots are kept rather than parsed again.
  const slots: TextSlot[] = [];
  const keepSlots = (record: unknown, index: number) => {
    const found = messageShapeSlots(record, index);
    for (const s of found) slots.push(s);
    return found;
  };
  let manifest: T.RetentionManifest;
  try {
    manifest = prepareManifest(source, items, keepSlots);
  } catch (error) {
    if (error instanceof GobstopperError && error.code === 'no_retention_candidates') return null;
    throw error;
  }
  const slotsByLine = new Map<number, TextSlot[]>();
  for (const s of slots) (slotsByLine.get(s.record) ?? slotsByLine.set(s.record, []).get(s.record)!).push(s);
  return { checks: bindManifest(manifest, source, items, slots), lines: lineRanges(source), slotsByLine };
}

/**
 * The candidate's live text slots. Renders edit records in place and append new ones, so a line
 * byte-identical to the source line at the same index keeps that line's slots and liveness; only
 * changed and appended lines are parsed (and count as live: a render only edits live records).
 */
export function candidateSlots(baseline: RetentionBaseline, source: Buffer, candidate: Buffer): TextSlot[] {
  const out: TextSlot[] = [];
  let index = 0;
  for (const [start, end] of lineRanges(candidate)) {
    const at = baseline.lines[index];
    if (at && end - start === at[1] - at[0] && candidate.compare(source, at[0], at[1], start, end) === 0) {
      for (const s of baseline.slotsByLine.get(index) ?? []) out.push(s);
    } else {
      try {
        for (const s of messageShapeSlots(JSON.parse(candidate.toString('utf8', start, end)), index)) out.push(s);
      } catch {
        // A line that is not JSON carries no slot; verify reports it.
      }
    }
    index += 1;
  }
  return out;
}

export function eventRecord(plan: T.CompactionPlan, retention: T.RetentionScore | null): T.EvalEventRecord {
  return {
    action: 'transcript_compact',
    context_tokens_before: plan.context_tokens_before,
    context_tokens_after: plan.context_tokens_after,
    est_reclaimed_tokens: Math.max(0, plan.context_tokens_before - plan.context_tokens_after),
    items_covered: itemsCovered(plan),
    retention_total: retention ? retention.total : null,
    retention_retained: retention ? retention.source_bound_retained : null,
    retention_lexical: retention ? retention.lexical_retained : null,
  };
}

export type EventRetention = Pick<T.CompactionEvent, 'retention_total' | 'retention_retained' | 'retention_lexical'>;

/**
 * The retention fields of an applied compaction's event: the source's heuristic checks scored on
 * the verified candidate (source-bound and lexical tiers). Best-effort, like the event itself: a
 * source that changed, has no candidates or cannot be read gives null, never an error.
 */
export async function measureAppliedRetention(sourcePath: string, sourceSha256: string, items: readonly T.TranscriptItem[], candidatePath: string): Promise<EventRetention | null> {
  try {
    const source = await readFile(sourcePath);
    if (createHash('sha256').update(source).digest('hex') !== sourceSha256) return null;
    const baseline = retentionBaseline(source, items);
    if (!baseline) return null;
    const score = scoreRetention(baseline.checks, candidateSlots(baseline, source, await readFile(candidatePath)));
    return { retention_total: score.total, retention_retained: score.source_bound_retained, retention_lexical: score.lexical_retained };
  } catch {
    return null;
  }
}
