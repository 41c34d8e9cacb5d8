import { describe, expect, it } from 'vitest';
import type { BenchRow } from '../../../schemas/generated/types.js';
import { benchRowLines } from '../../../kernel/cli/commands/bench.js';
import { benchFailureRow } from '../../../kernel/eval/bench-rows.js';

/** A rendered plan row of a long-named session, so a narrow terminal has to drop columns. */
function rendered(strategy: string, overrides: Partial<BenchRow> = {}): BenchRow {
  return {
    ...benchFailureRow('claude_code', '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11', 'strategy_evaluation_failed', 'x', strategy),
    status: 'plan',
    failure: null,
    error: null,
    execution_state: 'rendered',
    context_before: 58_865,
    context_after: 31_152,
    reduction_pct: 47.1,
    recall: 0.96,
    recall_available: true,
    tail_intact: true,
    new_verify_errors: 0,
    duration_ms: 97,
    ...overrides,
  };
}

const header = (lines: string[]) => lines[0]!;

describe('bench rows on a narrow terminal', () => {
  it('leave out tail, new errors and time when nothing in them needs reading, and say so', () => {
    const lines = benchRowLines([rendered('elide'), rendered('compacted')], { width: 70 });
    expect(header(lines)).not.toMatch(/new errors|time/);
    const note = lines.slice(lines.findIndex((l) => l.startsWith('(not shown')));
    expect(note.map((l) => l.trim()).join(' ')).toMatch(/^\(not shown at 70 columns: .*new errors, time; widen the terminal or use --json\)$/);
  });

  it('keep the new errors column when a rewrite added verify errors, and the tail when one was lost', () => {
    const errors = benchRowLines([rendered('elide'), rendered('compacted', { new_verify_errors: 2 })], { width: 70 });
    expect(header(errors)).toContain('new errors');
    expect(errors.join('\n')).not.toMatch(/not shown at .*new errors/s);
    const lost = benchRowLines([rendered('elide', { tail_intact: false })], { width: 70 });
    expect(header(lost)).toContain('tail');
    expect(lost.some((l) => l.includes('LOST'))).toBe(true);
  });

  it('show no recall for a session where no probe was sampled, as the aggregates count none', () => {
    const lines = benchRowLines([rendered('elide', { recall: 1, probes_total: 0, probes_recalled: 0, recall_available: false }), rendered('compacted')], { width: 200 });
    const col = header(lines).indexOf('recall');
    const cell = (l: string) => l.slice(col - 2, col + 'recall'.length).trim();
    expect(cell(lines[1]!)).toBe('-');
    expect(cell(lines[2]!)).toBe('96%');
  });

  it('cut a long failure in its row and print it whole under the table, wrapped to the width', () => {
    const long = `the provider stopped answering while it parsed the session, ${'and then again on its retry, '.repeat(4)}so it was given up`;
    const failed = benchFailureRow('codex', '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77', 'session_evaluation_failed', long);
    const lines = benchRowLines([rendered('elide'), failed], { width: 70 });
    expect(lines.every((l) => l.length <= 70)).toBe(true);
    const under = lines.slice(lines.indexOf('failures:') + 1);
    expect(under[0]).toMatch(/^  codex 019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77: /);
    expect(under.slice(1).every((l) => l.startsWith('    '))).toBe(true);
    expect(under.map((l) => l.trim()).join(' ')).toContain(`session failed (session_evaluation_failed): ${long}`);
  });
});
