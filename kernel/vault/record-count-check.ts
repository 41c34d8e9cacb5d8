/**
 * An index line's record_count against the records its snapshot's bytes hold. The manifest does not
 * keep the count, so a line checked against its manifest can still carry a wrong one (an edited or
 * damaged index): listings and history would then show it as if it were true. Every writer of an
 * index line counts the archived bytes themselves (snapshot, and undo writing a lost line back; the
 * entries a receipt yields read 0 but are never written as they are), so a line saying 0 is right
 * only for an empty snapshot, and no line is spared the check.
 */
import type { DamagedSnapshot, VaultEntry } from '../../schemas/generated/types.js';

/** An index line with its 1-based position in index.jsonl, which a hand repair needs. */
export interface NumberedLine {
  entry: VaultEntry;
  line: number;
}

/** Numbers an index read newest first, as the listing holds it: the oldest entry is line 1. */
export function numberNewestFirst(entries: readonly VaultEntry[]): NumberedLine[] {
  return entries.map((entry, i) => ({ entry, line: entries.length - i }));
}

export type RecordCountDamage = Required<Pick<DamagedSnapshot, 'problem' | 'record_counts'>>;

/** "4", "4 and 7", "4, 7 and 9". */
function series(items: readonly (string | number)[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The lines naming one snapshot whose record_count is not `counted`, said as damage of those lines
 * with the repair; null when every line is right. Only called once the bytes were read back whole,
 * so the count is the snapshot's own.
 */
export function recordCountDamage(indexFile: string, lines: readonly NumberedLine[], counted: number): RecordCountDamage | null {
  const wrong = lines.filter((l) => l.entry.record_count !== counted).sort((a, b) => a.line - b.line);
  if (wrong.length === 0) return null;
  const noun = (n: number) => (n === 1 ? 'record' : 'records');
  const says = wrong.map((l, i) => `${i === 0 ? 'index line' : 'line'} ${l.line} says ${l.entry.record_count}${i === 0 ? ` ${noun(l.entry.record_count)}` : ''}`);
  const where = `${wrong.length === 1 ? 'line' : 'lines'} ${series(wrong.map((l) => l.line))}`;
  const message = `record count mismatch: ${series(says)}, but the snapshot holds ${counted} ${noun(counted)} (its bytes are intact); repair required: set record_count to ${counted} on ${where} of ${indexFile}`;
  return {
    problem: { code: 'record_count_mismatch', message },
    record_counts: { counted, index_lines: wrong.map((l) => ({ line: l.line, record_count: l.entry.record_count })) },
  };
}
