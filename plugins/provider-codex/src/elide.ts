/**
 * Elision inside one parsed record: a top-level tool output, or every eligible output inside a
 * `compacted` record's replacement history. Only `output` values change; every other field and
 * every block's position stay as they were.
 */
import { elideOutput, isEligible, measureOutput } from './payload.js';
import type { MemberChange, MemberPath } from './member-splice.js';
import { RecordType, hasElidableOutputField, isObject, isReadableCompaction, type JsonObject } from './records.js';

export type StubFor = (oldBytes: number) => string;

export type ElideOutcome =
  /** The record changed. */
  | 'elided'
  /** The record is a tool output, but no stub would make it smaller. */
  | 'unchanged'
  /** The record holds no output a stub can replace. */
  | 'not_elidable';

function elideOutputEntry(entry: JsonObject, stub: StubFor, at: MemberPath, changes: MemberChange[]): boolean {
  if (typeof entry.type !== 'string' || !hasElidableOutputField(entry.type)) return false;
  const replaced = elideOutput(entry.output, stub);
  if (replaced === null) return false;
  entry.output = replaced;
  changes.push({ path: [...at, 'output'], value: replaced });
  return true;
}

/** Mutates `record` in place, and lists each output it replaced in `changes`. */
export function elideRecord(record: unknown, stub: StubFor, changes: MemberChange[] = []): ElideOutcome {
  if (!isObject(record) || !isObject(record.payload)) return 'not_elidable';
  const payload = record.payload;
  if (record.type === RecordType.responseItem) {
    if (typeof payload.type !== 'string' || !hasElidableOutputField(payload.type)) return 'not_elidable';
    const measure = measureOutput(payload.output);
    if (measure === null) return 'not_elidable';
    // An output already at stub size is left alone, so eliding a rendered copy again is a no-op.
    if (!isEligible(measure)) return 'unchanged';
    return elideOutputEntry(payload, stub, ['payload'], changes) ? 'elided' : 'unchanged';
  }
  if (record.type === RecordType.compacted && isReadableCompaction(payload)) {
    let eligible = 0;
    let changed = 0;
    payload.replacement_history.forEach((entry, index) => {
      if (!hasElidableOutputField(entry.type)) return;
      // Only the outputs the parse reported as elidable parts are touched.
      if (!isEligible(measureOutput(entry.output))) return;
      eligible += 1;
      if (elideOutputEntry(entry, stub, ['payload', 'replacement_history', index], changes)) changed += 1;
    });
    if (eligible === 0) return 'not_elidable';
    return changed > 0 ? 'elided' : 'unchanged';
  }
  return 'not_elidable';
}
