import { describe, expect, it } from 'vitest';
import type { BenchRow } from '../../../schemas/generated/types.js';
import { benchAggregateLines, benchRowLines } from '../../../kernel/cli/commands/bench.js';
import { aggregateBench } from '../../../kernel/eval/bench-aggregate.js';
import { displayWidth } from '../../../kernel/text/table.js';
import { benchFailureRow } from '../../../kernel/eval/bench-rows.js';

/** A rendered plan row of a long-named session, so a narrow terminal has to drop columns. */
function rendered(strategy: string, overrides: Partial<BenchRow> = {}): BenchRow {
  return {
    ...benchFailureRow('claude_code', '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11', '/home/dev/session.jsonl', 'strategy_evaluation_failed', 'x', strategy),
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
    const col = header(lines).indexOf('kept');
    const cell = (l: string) => l.slice(col - 2, col + 'kept'.length).trim();
    expect(cell(lines[1]!)).toBe('-');
    expect(cell(lines[2]!)).toBe('96%');
  });

  it('cut a long failure in its row and print it whole under the table, wrapped to the width', () => {
    const long = `the provider stopped answering while it parsed the session, ${'and then again on its retry, '.repeat(4)}so it was given up`;
    const failed = benchFailureRow('codex', '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77', '/home/dev/session.jsonl', 'session_evaluation_failed', long);
    const lines = benchRowLines([rendered('elide'), failed], { width: 70 });
    expect(lines.every((l) => l.length <= 70)).toBe(true);
    const under = lines.slice(lines.indexOf('failures:') + 1);
    expect(under[0]).toMatch(/^  codex 019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77: /);
    expect(under.slice(1).every((l) => l.startsWith('    '))).toBe(true);
    expect(under.map((l) => l.trim()).join(' ')).toContain(`session failed (session_evaluation_failed): ${long}`);
  });

  it('say under the table why a strategy proposed nothing, one line for the same words on several sessions', () => {
    const noPlan = (strategy: string, session: string, words: string): BenchRow =>
      rendered(strategy, { session, status: 'no_plan', reason_code: 'nothing_to_elide', no_plan_rationale: words, execution_state: 'not_run', context_after: null, reduction_pct: null });
    const rows = [
      rendered('compacted'),
      noPlan('elide', '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11', 'no tool output is older than the protected tail'),
      noPlan('elide', '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77', 'no tool output is older than the protected tail'),
      noPlan('micro', '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77', 'only 2 stale outputs, under the minimum of 5'),
    ];
    const lines = benchRowLines(rows, { width: 100 });
    const under = lines.slice(lines.indexOf('no plan, as the strategy said:') + 1);
    expect(under).toEqual(['  elide (2 sessions): no tool output is older than the protected tail', '  micro (claude_code 019d2e4a-7c1…): only 2 stale outputs, under the minimum of 5']);
    // Rows with a plan, or with nothing said, print no such section.
    expect(benchRowLines([rendered('elide')], { width: 100 })).not.toContain('no plan, as the strategy said:');
  });

  it('list at most a dozen different no-plan words and count the rest', () => {
    const rows = Array.from({ length: 15 }, (_, k) => rendered(`s${k}`, { status: 'no_plan', reason_code: 'other', no_plan_rationale: `reason number ${k}` }));
    const lines = benchRowLines(rows, { width: 100 });
    const under = lines.slice(lines.indexOf('no plan, as the strategy said:') + 1);
    expect(under).toHaveLength(13);
    expect(under[12]).toBe("  +3 more (--json or --output has each row's no_plan_rationale)");
  });

  it('fit every line under 70 columns, leaving out columns in their stated order: the comparison stays', () => {
    const rows = [rendered('elide'), rendered('auto', { credited_strategy: 'cache_edits', execution_state: 'provider_only', status: 'plan', context_after: null, reduction_pct: null }), { ...rendered('dedupe'), status: 'no_plan' as const, reason_code: 'below_trigger' }];
    const leftOut = (lines: string[]) => / columns: (.*); widen/.exec(lines.map((l) => l.trim()).join(' '))?.[1];
    expect(header(benchRowLines(rows))).toMatch(/^\s+provider\s+session\s+strategy\s+result\s+before\s+after\s+reduction\s+kept\s+tail\s+new errors\s+time$/);
    for (const width of [69, 60, 50]) {
      const lines = benchRowLines(rows, { width });
      for (const line of lines) expect(displayWidth(line), `${width}: ${line}`).toBeLessThanOrEqual(width);
      expect(header(lines), String(width)).toMatch(/^\s+session\s+strategy\s.*reduced\s+kept$/);
      expect(lines.find((l) => l.includes(' elide '))).toMatch(/^\s+7d3f1c2a\S*\s+elide\s.*47\.1%\s+96%$/);
    }
    expect(leftOut(benchRowLines(rows, { width: 69 }))).toBe('provider, tail, new errors, time');
    expect(leftOut(benchRowLines(rows, { width: 60 }))).toBe('provider, before, tail, new errors, time');
    // The result goes last: a failure is also listed under the table.
    expect(leftOut(benchRowLines(rows, { width: 50 }))).toBe('provider, result, before, after, tail, new errors, time');
  });

  it('keep enough of each session id on a narrow terminal to tell apart two Codex sessions started in the same minute', () => {
    const [a, b] = ['019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77', '019d2e4a-9f02-7a11-8c3d-1e2f3a4b5c6d'];
    const rows = [a, b].flatMap((session) => [
      rendered('elide', { provider: 'codex', session }),
      rendered('auto', { provider: 'codex', session, credited_strategy: 'middle' }),
      { ...rendered('dedupe', { provider: 'codex', session }), status: 'no_plan' as const, reason_code: 'strategy_returned_no_plan' },
    ]);
    for (const width of [80, 79, 70, 62, 54]) {
      const lines = benchRowLines(rows, { width });
      for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(width);
      const cells = lines.slice(1, 7).map((l) => l.trim().split(/\s+/)[0]);
      expect(cells[0], String(width)).toMatch(/^019d2e4a-7/);
      expect(cells[3], String(width)).toMatch(/^019d2e4a-9/);
    }
  });

  it('fit the per-strategy aggregates under 70 columns with short headers, then by leaving out the supporting counts', () => {
    const aggregates = aggregateBench([rendered('elide'), rendered('cache_aware', { reduction_pct: 12.5 }), { ...rendered('dedupe'), status: 'no_plan', reason_code: 'below_trigger' }]);
    const leftOut = (lines: string[]) => / columns: (.*); widen/.exec(lines.map((l) => l.trim()).join(' '))?.[1];
    const wide = benchAggregateLines(aggregates);
    expect(header(wide)).toMatch(/^strategy\s+sessions\s+with plan\s+controls\s+best\s+failed\s+reduction median\s+q1-q3\s+median kept\s+tail intact\s+no plan$/);
    expect(wide.find((l) => l.startsWith('cache_aware'))).toMatch(/12\.5%\s+12\.5%-12\.5%\s+96%/);
    for (const width of [69, 60, 50]) {
      const lines = benchAggregateLines(aggregates, { width });
      for (const line of lines) expect(displayWidth(line), `${width}: ${line}`).toBeLessThanOrEqual(width);
      expect(header(lines), String(width)).toMatch(/^strategy\s+sess\s+plans\s.*best\s.*reduced\s.*kept\b/);
      expect(lines.find((l) => l.startsWith('cache_aware')), String(width)).toMatch(/^cache_aware\s+1\s+1\s.*12\.5%\s.*96%/);
    }
    expect(leftOut(benchAggregateLines(aggregates, { width: 69 }))).toBe('failed, tail intact, no plan');
    expect(leftOut(benchAggregateLines(aggregates, { width: 50 }))).toBe('controls, failed, q1-q3, tail intact, no plan');
  });
});
