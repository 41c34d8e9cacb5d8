import { describe, expect, it } from 'vitest';
import type { CompactionPlan, EvalRow } from '../../../schemas/generated/types.js';
import { validateEvalCommandResult } from '../../../schemas/generated/validators.js';
import { buildEvalRow, evalBaseline, markBestRow, buildEvalResult, type EvalBaseline } from '../../../kernel/eval/rows.js';
import { cachePreservationScore, prefixTokens } from '../../../kernel/eval/plan-metrics.js';
import { evaluateSession } from '../../../kernel/eval/eval-session.js';
import { renderEvalTable } from '../../../kernel/eval/eval-table.js';
import { displayWidth } from '../../../kernel/text/table.js';
import { benchFailureRow, benchRowsFromEval } from '../../../kernel/eval/bench-rows.js';
import { GobstopperError } from '../../../kernel/errors.js';
import { PluginFailure } from '../../../kernel/plugins/protocol/plugin-failure.js';
import { aggregateBench } from '../../../kernel/eval/bench-aggregate.js';
import { BENCH_CSV_COLUMNS, benchCsv } from '../../../kernel/eval/bench-csv.js';
import { buildSession, filler, planElide, renderSessionBytes, verifySessionBytes, type BuiltSession } from '../../fixtures/eval/session-builder.js';

function plantedSession(orphanTurn?: number): BuiltSession {
  return buildSession({
    goal: 'make the importer resumable',
    orphanTurn,
    turns: [
      { say: 'checking the importer', command: 'cat /opt/importer/src/reader.py', output: 'error: unexpected EOF in batch_0042\n' + filler(800) },
      { say: 'we decided to checkpoint every batch', command: 'pytest -k resume', output: 'FAILED tests/test_resume.py::test_checkpoint\n' + filler(800) },
      { command: 'ls', output: filler(800) },
      { command: 'ls', output: 'wrote /opt/importer/state/checkpoint.json\n' + filler(300) },
      { command: 'ls', output: 'all green: ./bin/import --resume\n' + filler(300) },
    ],
  });
}

function baselineOf(session: BuiltSession): EvalBaseline {
  const context = session.transcript.items.reduce((n, i) => n + i.est_tokens, 0);
  return evalBaseline({ source: session.source, transcript: session.transcript, context_tokens: context, token_basis: 'estimated', keep_recent_tool_outputs: 2, source_findings: verifySessionBytes(session.source) });
}

function renderedRow(session: BuiltSession, baseline: EvalBaseline, plan: CompactionPlan, strategy = plan.strategy): EvalRow {
  const bytes = renderSessionBytes(session.source, plan.edits);
  return buildEvalRow(baseline, strategy, { status: 'plan', plan, candidate: { bytes, findings: verifySessionBytes(bytes) }, duration_ms: 12 });
}

describe('eval rows on a generated session', () => {
  const session = plantedSession();
  const baseline = baselineOf(session);
  const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
  const elidedLines = (plan.edits[0] as { line_indexes: number[] }).line_indexes;

  it('fills context before/after, reclaimed tokens and reduction from the plan', () => {
    const row = renderedRow(session, baseline, plan);
    expect(elidedLines).toEqual(session.resultLines.slice(0, 3));
    expect(row.status).toBe('plan');
    expect(row.execution_state).toBe('rendered');
    expect(row.context_tokens_before).toBe(baseline.context_tokens);
    expect(row.context_tokens_after).toBe(plan.context_tokens_after);
    expect(row.est_reclaimed).toBe(plan.context_tokens_before - plan.context_tokens_after);
    expect(row.reduction_pct).toBeCloseTo((100 * row.est_reclaimed) / row.context_tokens_before, 2);
    expect(row.elided_records).toBe(3);
    expect(row.edit_ops).toEqual(['elide']);
    expect(row.duration_ms).toBe(12);
  });

  it('prefix tokens are the estimated tokens of the records before the first elided line', () => {
    const row = renderedRow(session, baseline, plan);
    const expected = session.transcript.items.filter((i) => i.line_index < elidedLines[0]!).reduce((n, i) => n + i.est_tokens, 0);
    expect(row.prefix_tokens).toBe(expected);
    // Line 0 (goal) and line 1 (first assistant record) precede the first tool result.
    expect(session.transcript.items.filter((i) => i.line_index < elidedLines[0]!)).toHaveLength(2);
    expect(row.prefix_ratio).toBeCloseTo(expected / baseline.context_tokens, 12);
    expect(row.score).toBeCloseTo(row.est_reclaimed * Math.pow(expected / baseline.context_tokens, 3), 9);
  });

  it('samples exactly the planted strings, each on the record it was planted in', () => {
    expect(baseline.probes.probes.map((p) => [p.line_index, p.kind])).toEqual([
      [0, 'command'], // "make the importer ..." in the goal
      [1, 'path'], [1, 'file_name'], // cat /opt/importer/src/reader.py
      [2, 'error_signature'], [2, 'identifier'], // error: ... batch_0042 (elided output)
      [3, 'command'], [3, 'decision'], // pytest -k resume; "we decided ..."
      [4, 'path'], [4, 'error_signature'], [4, 'file_name'], [4, 'identifier'], [4, 'identifier'], // FAILED tests/test_resume.py::test_checkpoint (elided)
      [8, 'path'], [8, 'file_name'], // /opt/importer/state/checkpoint.json (kept, protected)
      [10, 'path'], // ./bin/import (kept, protected)
    ]);
  });

  it('retention: planted strings in elided outputs are lost, those in kept records and the tail survive', () => {
    const row = renderedRow(session, baseline, plan);
    const score = row.probe_score!;
    expect([score.probes_total, score.probes_recalled]).toEqual([15, 8]);
    expect(score.recall).toBeCloseTo(8 / 15, 12);
    expect(score.by_kind.map((k) => [k.kind, k.total, k.recalled])).toEqual([
      ['path', 4, 3],
      ['command', 2, 2],
      ['decision', 1, 1],
      ['error_signature', 2, 0],
      ['file_name', 3, 2],
      ['identifier', 3, 0],
    ]);
    expect(score.missed_probes.map((m) => [m.line_index, m.kind])).toEqual([
      [2, 'error_signature'], [2, 'identifier'], [4, 'path'], [4, 'error_signature'], [4, 'file_name'], [4, 'identifier'], [4, 'identifier'],
    ]);
    expect([score.tail_probes_total, score.tail_probes_recalled, row.tail_intact]).toEqual([3, 3, true]);
  });

  it('a provider control keeps the whole context as prefix and is not rendered', () => {
    const control: CompactionPlan = { strategy: 'sawtooth', rationale: 'context over trigger', edits: [{ op: 'provider_compact', control: '/compact' }], context_tokens_before: 5000, context_tokens_after: 1000 };
    expect(prefixTokens(control, session.transcript.items)).toBe(5000);
    const row = buildEvalRow(baseline, 'sawtooth', { status: 'plan', plan: control, candidate: null, duration_ms: 1 });
    expect(row.execution_state).toBe('provider_only');
    expect(row.probe_score).toBeNull();
    expect(row.prefix_tokens).toBe(5000);
  });

  it('a digest-only plan keeps every item as prefix', () => {
    const digestOnly: CompactionPlan = { strategy: 'x', rationale: 'r', edits: [{ op: 'inject_digest', digest: { covers_items: 1 } }], context_tokens_before: baseline.context_tokens, context_tokens_after: 90 };
    expect(prefixTokens(digestOnly, session.transcript.items)).toBe(baseline.context_tokens);
  });

  it('no plan and error rows carry their reason and no measurements', () => {
    const noPlan = buildEvalRow(baseline, 'dedupe', { status: 'no_plan', reason_code: 'minimum_savings_not_met' });
    expect(noPlan).toMatchObject({ status: 'no_plan', reason_code: 'minimum_savings_not_met', est_reclaimed: 0, prefix_tokens: 0, probe_score: null, score: null, duration_ms: 0, execution_state: 'not_run' });
    const failed = buildEvalRow(baseline, 'agentic', { status: 'error', message: 'plugin strategy-agentic timed out\nafter 60000 ms' });
    expect(failed).toMatchObject({ status: 'error', execution_state: 'failed', error: 'plugin strategy-agentic timed out after 60000 ms' });
    const unrendered = buildEvalRow(baseline, 'elide', { status: 'plan', plan, candidate: null, duration_ms: 3 });
    expect(unrendered).toMatchObject({ status: 'error', error: 'the rewrite plan was not rendered' });
  });
});

describe('verify findings: pre-existing and new are counted apart', () => {
  it('a source error the rewrite keeps is pre-existing; an error the rewrite adds is new', () => {
    const session = plantedSession(3);
    const baseline = baselineOf(session);
    expect(baseline.source_findings).toHaveLength(1);
    const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
    const clean = renderedRow(session, baseline, plan);
    expect(clean).toMatchObject({ verify_errors: 1, preexisting_verify_errors: 1, new_verify_errors: 0 });
    expect(clean.findings).toEqual([{ severity: 'error', code: 'orphan_tool_result', line_index: session.resultLines[3], preexisting: true }]);

    // A broken render that drops the first tool call: its result becomes a new orphan.
    const good = renderSessionBytes(session.source, plan.edits).toString().split('\n');
    const broken = Buffer.from(good.map((l, i) => (i === session.assistantLines[0] ? l.replace('"tool_use","id":"call_0"', '"tool_use","id":"call_x"') : l)).join('\n'));
    const bad = buildEvalRow(baseline, 'elide', { status: 'plan', plan, candidate: { bytes: broken, findings: verifySessionBytes(broken) }, duration_ms: 1 });
    expect(bad).toMatchObject({ verify_errors: 2, preexisting_verify_errors: 1, new_verify_errors: 1 });
  });
});

describe('best row', () => {
  it('uses saved x (prefix / context)^3 (reference examples)', () => {
    expect(cachePreservationScore(400, 500, 1000)).toBe(50);
    expect(cachePreservationScore(150, 750, 1000)).toBeCloseTo(63.28125, 10);
    expect(cachePreservationScore(10, 5, 0)).toBe(1250);
  });

  const row = (strategy: string, over: Partial<EvalRow>): EvalRow => ({
    strategy, status: 'plan', reason_code: null, rationale: '', edit_ops: ['elide'], elided_records: 1, execution_state: 'rendered',
    context_tokens_before: 1000, context_tokens_after: 600, est_reclaimed: 400, reduction_pct: 40, probe_score: null, tail_intact: true,
    prefix_tokens: 500, prefix_ratio: 0.5, score: 50, verify_errors: 0, verify_warnings: 0, new_verify_errors: 0, preexisting_verify_errors: 0,
    findings: [], result_sha256: null, duration_ms: 1, error: null, best: false, ...over,
  });

  it('picks the highest score among clean file rewrites', () => {
    const rows = [row('a', { score: 50 }), row('b', { est_reclaimed: 150, prefix_tokens: 750, score: 63.28125 }), row('c', { score: 10 })];
    expect(markBestRow(rows)).toBe(1);
    expect(rows.map((r) => r.best)).toEqual([false, true, false]);
  });

  it('skips rows with new verify errors, errors, no plan, provider controls and cache edits; pre-existing errors do not disqualify', () => {
    const rows = [
      row('new-errors', { score: 900, new_verify_errors: 1, verify_errors: 1 }),
      row('errored', { score: 800, status: 'error', error: 'x', execution_state: 'failed' }),
      row('no-plan', { score: null, status: 'no_plan', execution_state: 'not_run' }),
      row('control', { score: 700, edit_ops: ['provider_compact'], execution_state: 'provider_only' }),
      row('cache', { score: 600, edit_ops: ['cache_edit'] }),
      row('old-errors', { score: 5, verify_errors: 2, preexisting_verify_errors: 2 }),
    ];
    expect(rows[markBestRow(rows)]!.strategy).toBe('old-errors');
  });

  it('on a tie, a selector\'s row yields to the row of the strategy whose plan it chose', () => {
    const rows = [row('auto', { score: 110, credited_strategy: 'middle' }), row('elide', { score: 90 }), row('middle', { score: 110 })];
    expect(rows[markBestRow(rows)]!.strategy).toBe('middle');
    // A selector that beats every strategy outright keeps the mark.
    const alone = [row('auto', { score: 110, credited_strategy: 'middle' }), row('middle', { score: 100 })];
    expect(alone[markBestRow(alone)]!.strategy).toBe('auto');
  });

  it('skips a rewrite that lost the protected tail, however high it scores; a tail with nothing to check does not disqualify', () => {
    const rows = [row('greedy', { score: 900, tail_intact: false }), row('vacuous', { score: 20, tail_intact: null }), row('kept', { score: 10 })];
    expect(rows[markBestRow(rows)]!.strategy).toBe('vacuous');
    expect(markBestRow([row('greedy', { score: 900, tail_intact: false })])).toBe(-1);
  });

  it('keeps the earlier row on a tie and lets a zero-score rewrite win when it is the only one', () => {
    const tie = [row('first', { score: 50 }), row('second', { score: 50 })];
    expect(markBestRow(tie)).toBe(0);
    const zero = [row('no-plan', { status: 'no_plan', score: null, execution_state: 'not_run' }), row('zero', { score: 0, prefix_tokens: 0 })];
    expect(markBestRow(zero)).toBe(1);
    expect(markBestRow([row('x', { status: 'no_plan', execution_state: 'not_run' })])).toBe(-1);
  });
});

describe('evaluateSession and the outputs', () => {
  const session = plantedSession();
  const context = session.transcript.items.reduce((n, i) => n + i.est_tokens, 0);
  const input = {
    provider: 'claude_code', session_id: 'eval-fixture-session', source: session.source, source_sha256: session.transcript.source_sha256,
    transcript: session.transcript, context_tokens: context, token_basis: 'estimated' as const, effective_trigger_tokens: 1, floor_tokens: 0,
    keep_recent_tool_outputs: 2, source_findings: verifySessionBytes(session.source), strategies: ['elide', 'greedy', 'sawtooth', 'broken', 'dedupe'],
  };

  const run = () =>
    evaluateSession(input, async (id) => {
      if (id === 'broken') throw new Error('strategy-broken exited with code 3');
      if (id === 'dedupe') return { status: 'no_plan', reason_code: 'strategy_returned_no_plan', rationale: 'no older duplicate tool outputs\noutside the 2 protected recent ones' };
      if (id === 'sawtooth') return { status: 'plan', plan: { strategy: id, rationale: 'r', edits: [{ op: 'provider_compact', control: '/compact' }], context_tokens_before: context, context_tokens_after: 100 }, candidate: null };
      const plan = id === 'elide' ? planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })! : planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 0 }, 'greedy')!;
      const bytes = renderSessionBytes(session.source, plan.edits);
      return { status: 'plan', plan, candidate: { bytes, findings: verifySessionBytes(bytes) } };
    });

  it('one failing strategy becomes an error row and the rest are measured; --json matches the schema', async () => {
    const result = await run();
    expect(result.rows.map((r) => [r.strategy, r.status])).toEqual([['elide', 'plan'], ['greedy', 'plan'], ['sawtooth', 'plan'], ['broken', 'error'], ['dedupe', 'no_plan']]);
    expect(result.rows[3]!.error).toBe('strategy-broken exited with code 3');
    expect(validateEvalCommandResult(result), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
    expect(result.probes_total).toBeGreaterThan(0);
    expect(result.tail_start_line).toBe(session.resultLines[3]);
  });

  it('a strategy failing on the file system gets a row that says what failed where and what to do, with the errno as its code', async () => {
    const result = await evaluateSession({ ...input, strategies: ['full', 'elide'] }, async (id) => {
      if (id === 'full') throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write', path: '/tmp/stage-1' });
      const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
      const bytes = renderSessionBytes(session.source, plan.edits);
      return { status: 'plan', plan, candidate: { bytes, findings: verifySessionBytes(bytes) } };
    });
    expect(result.rows[0]).toMatchObject({ strategy: 'full', status: 'error', error_code: 'enospc', error: 'write failed on /tmp/stage-1: the disk is full; free some space and run the command again (ENOSPC)' });
    expect(result.rows[1]).toMatchObject({ strategy: 'elide', status: 'plan' });
  });

  it('greedy elision reclaims more but loses the tail; the best row is the one that keeps the prefix and the tail', async () => {
    const result = await run();
    const [elide, greedy] = result.rows;
    expect(greedy!.est_reclaimed).toBeGreaterThan(elide!.est_reclaimed);
    expect(greedy!.tail_intact).toBe(false);
    expect(elide!.tail_intact).toBe(true);
    // Probes in the tail make the check a real one: nothing to warn about.
    expect(elide!.probe_score!.tail_probes_total).toBeGreaterThan(0);
    expect(result.warnings).toEqual([]);
    // Same first elided line, so the same prefix; greedy saves more, so it scores higher, but a
    // rewrite that loses the protected tail is not a valid one to recommend.
    expect(greedy!.prefix_tokens).toBe(elide!.prefix_tokens);
    expect(greedy!.score!).toBeGreaterThan(elide!.score!);
    expect(result.best_strategy).toBe('elide');
    expect(result.rows.filter((r) => r.best).map((r) => r.strategy)).toEqual(['elide']);
  });

  it('renders an aligned table with the best row marked and no transcript text', async () => {
    const result = await run();
    const lines = renderEvalTable(result);
    expect(lines[0]).toMatch(/^claude_code eval-fixture-session — context ~[\d,]+ tokens \(estimated\), effective trigger 1, floor 0$/);
    const header = lines.find((l) => l.includes('strategy') && l.includes('probes kept'))!;
    const body = lines.slice(lines.indexOf(header) + 1, lines.indexOf(header) + 6);
    expect(body).toHaveLength(5);
    const col = header.indexOf('result');
    for (const l of body) expect(l.slice(col - 2, col)).toBe('  ');
    expect(body.find((l) => l.startsWith('*'))).toContain('elide');
    expect(body.find((l) => l.includes(' broken '))).toContain('error: strategy-broken exited with code 3');
    expect(body.find((l) => l.includes(' dedupe '))).toContain('no plan (strategy_returned_no_plan)');
    // What the strategy said of why, on one line under the table and in the row.
    expect(result.rows.find((r) => r.strategy === 'dedupe')!.no_plan_rationale).toBe('no older duplicate tool outputs outside the 2 protected recent ones');
    expect(lines.slice(lines.indexOf('no plan, as the strategy said:') + 1)[0]).toBe('  dedupe: no older duplicate tool outputs outside the 2 protected recent ones');
    expect(result.rows.filter((r) => r.status !== 'no_plan').every((r) => r.no_plan_rationale === undefined)).toBe(true);
    // A provider control shows no after, reduction or prefix: the provider decides what it keeps.
    const control = body.find((l) => l.includes(' sawtooth '))!;
    expect(control).toContain('provider control');
    expect(control.slice(header.indexOf('reduction') - 4)).not.toMatch(/%/);
    // A score below 1 keeps three digits, as auto's rationale prints it, instead of reading 0.
    const best = result.rows.find((r) => r.best)!;
    expect(best.score!).toBeGreaterThan(0);
    expect(best.score!).toBeLessThan(1);
    expect(lines.at(-1)).toBe(`pareto best: elide score=${Number(best.score!.toPrecision(3))} prefix=${best.prefix_tokens.toLocaleString('en-US')} reclaimed=${best.est_reclaimed.toLocaleString('en-US')}`);
    // From 100 on it is a whole number with thousands separators.
    const big = renderEvalTable({ ...result, rows: result.rows.map((r) => (r.best ? { ...r, score: 123_456.7 } : r)) });
    expect(big.at(-1)).toMatch(/^pareto best: elide score=123,457 prefix=/);
    // Per kind, then the first misses by kind, line, length and hash (never their text).
    const byKind = lines.indexOf('probes kept by kind (found verbatim/sampled):');
    expect(byKind).toBeGreaterThan(0);
    const greedy = result.rows.find((r) => r.strategy === 'greedy')!.probe_score!;
    const greedyKinds = lines.slice(byKind + 2).find((l) => l.startsWith('greedy '))!;
    for (const t of greedy.by_kind.filter((k) => k.total > 0)) expect(greedyKinds).toContain(`${t.recalled}/${t.total}`);
    const first = greedy.missed_probes[0]!;
    expect(lines.find((l) => l.startsWith('  greedy: '))).toContain(`${first.kind} line ${first.line_index + 1} (${first.bytes} B, ${first.sha256_prefix})`);
    const text = lines.join('\n');
    for (const planted of ['/opt/importer', 'batch_0042', 'checkpoint every batch', 'test_resume']) expect(text).not.toContain(planted);
  });

  it('on a narrow terminal names the columns it left out, and keeps verify when a rewrite has findings', async () => {
    const result = await run();
    const header = (lines: string[]) => lines.find((l) => /^\s+strategy\s+result\s/.test(l))!;
    const narrow = renderEvalTable(result, { width: 60 });
    expect(header(narrow)).not.toMatch(/verify|time/);
    const from = narrow.findIndex((l) => l.startsWith('(not shown at 60 columns: '));
    const note = narrow.slice(from, narrow.indexOf('', from));
    for (const l of note) expect(l.length).toBeLessThanOrEqual(60);
    expect(note.map((l) => l.trim()).join(' ')).toMatch(/verify, time; widen the terminal or use --json\)$/);
    const rendered = result.rows.findIndex((r) => r.execution_state === 'rendered');
    const damaged = { ...result, rows: result.rows.map((r, i) => (i === rendered ? { ...r, verify_errors: 1, new_verify_errors: 1 } : r)) };
    const kept = renderEvalTable(damaged, { width: 60 });
    expect(header(kept)).toContain('verify');
    expect(kept.find((l) => l.includes('1 new errors'))).toBeDefined();
    expect(renderEvalTable(result).some((l) => l.startsWith('(not shown'))).toBe(false);
  });

  it('fits every line in a narrow terminal, leaving out the supporting columns first and the comparison last', async () => {
    const result = await run();
    const tableOf = (lines: string[]) => lines.slice(lines.findIndex((l) => /^\s+strategy\s+result\s/.test(l)), lines.indexOf('errors:') - 1);
    const leftOut = (lines: string[]) => / columns: (.*); widen/.exec(lines.map((l) => l.trim()).join(' '))?.[1];
    expect(tableOf(renderEvalTable(result))[0]).toMatch(/^\s+strategy\s+result\s+before\s+after\s+reduction\s+probes kept\s+tail\s+prefix\s+verify\s+time$/);
    for (const width of [69, 60, 50]) {
      const lines = renderEvalTable(result, { width });
      for (const line of lines) expect(displayWidth(line), `${width}: ${line}`).toBeLessThanOrEqual(width);
      // What the table is for stays: each strategy, its result, its reduction and the probes it kept;
      // and greedy's lost tail, whatever else has to go.
      const table = tableOf(lines);
      expect(table[0], String(width)).toMatch(/^\s+strategy\s+result\s.*\breduced\s+kept\s+tail$/);
      expect(table.find((l) => /^\s+greedy\s/.test(l)), String(width)).toMatch(/greedy\s+plan: .*52\.9%\s+5\/15 33%\s+LOST$/);
    }
    // The supporting columns go first (prefix, verify, time), then before, then after.
    expect(leftOut(renderEvalTable(result, { width: 69 }))).toBe('prefix, verify, time');
    expect(leftOut(renderEvalTable(result, { width: 60 }))).toBe('before, prefix, verify, time');
    expect(leftOut(renderEvalTable(result, { width: 50 }))).toBe('before, after, prefix, verify, time');
    // With every tail intact, the tail goes before after does.
    const intact = { ...result, rows: result.rows.map((r) => (r.tail_intact === false ? { ...r, tail_intact: true } : r)) };
    expect(leftOut(renderEvalTable(intact, { width: 50 }))).toBe('before, tail, prefix, verify, time');
  });

  it('cuts a long error in the result cell and prints it whole under the table', async () => {
    const result = await run();
    const long = 'strategy-broken exited with code 3 after writing a very long explanation '.repeat(4).trim();
    const lines = renderEvalTable({ ...result, rows: result.rows.map((r) => (r.status === 'error' ? { ...r, error: long } : r)) });
    const header = lines.find((l) => l.includes('strategy') && l.includes('probes kept'))!;
    expect(lines.find((l) => l.includes(' broken '))!.length).toBeLessThanOrEqual(header.length);
    expect(lines.slice(lines.indexOf('errors:') + 1)).toContain(`  broken: ${long}`);
  });

  it('the table and bench do not call a tail intact when no probe was sampled in it; eval --json keeps the vacuous true', async () => {
    const quiet = buildSession({
      goal: 'make the importer resumable',
      turns: [
        { command: 'cat /opt/importer/src/reader.py', output: 'error: unexpected EOF in batch_0042\n' + filler(800) },
        { command: 'ls', output: filler(800) },
        { command: 'ls', output: filler(300) },
        { command: 'ls', output: filler(300) },
      ],
    });
    const base = baselineOf(quiet);
    const plan = planElide(quiet.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
    const elide = renderedRow(quiet, base, plan);
    expect(elide.probe_score).toMatchObject({ tail_probes_total: 0, tail_intact: true });
    expect(elide.tail_intact).toBe(true);
    const result = buildEvalResult({ provider: 'claude_code', session_id: 'quiet', source_sha256: quiet.transcript.source_sha256, effective_trigger_tokens: 1, floor_tokens: 0, keep_recent_tool_outputs: 2 }, base, [elide]);
    // --json keeps the vacuous true and says why beside it; eval prints it as a warning.
    expect(validateEvalCommandResult(result), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
    expect(result.warnings).toEqual([`no probe was sampled in the protected tail (line ${result.tail_start_line! + 1} on), so the tail check is vacuous: tail_intact is true with nothing in the tail to lose`]);
    // Nothing scored, nothing claimed: no warning.
    expect(buildEvalResult({ provider: 'claude_code', session_id: 'quiet', source_sha256: quiet.transcript.source_sha256, effective_trigger_tokens: 1, floor_tokens: 0, keep_recent_tool_outputs: 2 }, base, [buildEvalRow(base, 'dedupe', { status: 'no_plan', reason_code: 'strategy_returned_no_plan' })]).warnings).toEqual([]);
    const lines = renderEvalTable(result);
    const header = lines.find((l) => l.includes('strategy') && l.includes('tail'))!;
    const body = lines[lines.indexOf(header) + 1]!;
    expect(body.slice(header.indexOf('tail'))).toMatch(/^- \(no tail probes\)/);
    expect(lines.join('\n')).not.toContain('intact');
    // bench agrees: no tail probe is no finding, in its rows and in the count of intact sessions.
    const [benchRow] = benchRowsFromEval(result, '/home/dev/session.jsonl');
    expect(benchRow).toMatchObject({ strategy: 'elide', tail_intact: null, probes_total: elide.probe_score!.probes_total });
    expect(aggregateBench([benchRow!])[0]).toMatchObject({ sessions_with_plan: 1, tail_intact_sessions: 0 });
  });

  it('bench rows of a provider control carry no after, reduction or score, so aggregates do not count a placeholder', async () => {
    const rows = benchRowsFromEval(await run(), '/home/dev/session.jsonl');
    expect(rows.find((r) => r.strategy === 'sawtooth')).toMatchObject({ status: 'plan', execution_state: 'provider_only', context_after: null, reduction_pct: null, est_reclaimed: null, score: null });
    expect(rows.find((r) => r.strategy === 'greedy')!.reduction_pct).toBeGreaterThan(0);
    expect(aggregateBench(rows).find((a) => a.strategy === 'sawtooth')).toMatchObject({ sessions_with_plan: 1, sessions_with_control: 1, reduction_pct: null });
  });

  it('a bench row carries what a strategy that proposed nothing said, in JSON and the CSV; other rows have null', async () => {
    const rows = benchRowsFromEval(await run(), '/home/dev/session.jsonl');
    const dedupe = rows.find((r) => r.strategy === 'dedupe')!;
    expect(dedupe).toMatchObject({ status: 'no_plan', reason_code: 'strategy_returned_no_plan', no_plan_rationale: 'no older duplicate tool outputs outside the 2 protected recent ones' });
    expect(rows.filter((r) => r.strategy !== 'dedupe').map((r) => r.no_plan_rationale)).toEqual(rows.filter((r) => r.strategy !== 'dedupe').map(() => null));
    expect(benchFailureRow('codex', 's', '/home/dev/session.jsonl', 'session_evaluation_failed', 'gone').no_plan_rationale).toBeNull();
    const [header, ...lines] = benchCsv(rows).trimEnd().split('\n');
    const col = header!.split(',').indexOf('no_plan_rationale');
    // After the reference columns and every earlier addition, so readers by position keep working.
    expect(col).toBe(BENCH_CSV_COLUMNS.length - 2);
    // The transcript's path comes last: two files may hold one session id.
    expect(header!.split(',').at(-1)).toBe('path');
    expect(lines.every((l) => l.endsWith(',/home/dev/session.jsonl'))).toBe(true);
    const cells = lines.map((l) => l.split(',')[col]);
    expect(cells[rows.indexOf(dedupe)]).toBe('no older duplicate tool outputs outside the 2 protected recent ones');
    expect(cells.filter((c) => c !== '')).toHaveLength(1);
  });

  it('bench rows of a failed strategy leave what was not measured empty, in JSON and in the CSV', async () => {
    const rows = benchRowsFromEval(await run(), '/home/dev/session.jsonl');
    const broken = rows.find((r) => r.strategy === 'broken')!;
    expect(broken).toMatchObject({
      status: 'error', failure: 'strategy_evaluation_failed', context_before: context,
      context_after: null, est_reclaimed: null, reduction_pct: null, prefix_tokens: null, prefix_ratio: null, score: null,
      verify_errors: null, verify_warnings: null, new_verify_errors: null, probes_total: null, tail_intact: null,
    });
    const line = benchCsv([broken]).split('\n')[1]!.split(',');
    const cell = (c: (typeof BENCH_CSV_COLUMNS)[number]) => line[BENCH_CSV_COLUMNS.indexOf(c)];
    expect(cell('context_before')).toBe(String(context));
    for (const c of ['context_after', 'est_reclaimed', 'prefix_tokens', 'prefix_ratio', 'verify_errors', 'verify_warnings', 'reduction_pct', 'new_verify_errors'] as const) expect({ c, v: cell(c) }).toEqual({ c, v: '' });
    expect(aggregateBench(rows).find((a) => a.strategy === 'broken')).toMatchObject({ sessions_failed: 1, sessions_with_plan: 0, reduction_pct: null });

    // A plan that failed to render keeps its projection, but its copy was never verified.
    const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
    const unrendered = buildEvalRow(evalBaseline({ ...input, source_findings: [] }), 'elide', { status: 'error', message: 'render failed', plan });
    const [benchRow] = benchRowsFromEval({ ...(await run()), rows: [unrendered] }, '/home/dev/session.jsonl');
    expect(benchRow).toMatchObject({ context_after: plan.context_tokens_after, est_reclaimed: plan.context_tokens_before - plan.context_tokens_after, verify_errors: null, new_verify_errors: null });
  });

  it('an error row carries its failure\'s code, in eval JSON, bench JSON and the CSV; other rows have none', async () => {
    const result = await evaluateSession({ ...input, strategies: ['slow', 'damaged', 'odd', 'elide'] }, async (id) => {
      if (id === 'slow') throw new PluginFailure('plugin_timeout', { pluginId: 'strategies-slow', method: 'strategy/propose', reason: 'did not answer strategy/propose within 60000 ms' });
      if (id === 'damaged') throw new GobstopperError('file_hash_mismatch', 'bundle file strategy.mjs does not match its pinned sha256');
      if (id === 'odd') throw new Error('no code here');
      const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
      const bytes = renderSessionBytes(session.source, plan.edits);
      return { status: 'plan', plan, candidate: { bytes, findings: verifySessionBytes(bytes) } };
    });
    expect(validateEvalCommandResult(result), JSON.stringify(validateEvalCommandResult.errors)).toBe(true);
    expect(result.rows.map((r) => [r.strategy, r.status, r.error_code])).toEqual([
      ['slow', 'error', 'plugin_timeout'],
      ['damaged', 'error', 'file_hash_mismatch'],
      ['odd', 'error', null],
      ['elide', 'plan', null],
    ]);
    const bench = benchRowsFromEval(result, '/home/dev/session.jsonl');
    expect(bench.map((r) => r.error_code)).toEqual(['plugin_timeout', 'file_hash_mismatch', null, null]);
    const [header, first] = benchCsv(bench).split('\n');
    const col = header!.split(',').indexOf('error_code');
    expect(col).toBeGreaterThanOrEqual(24);
    expect(first!.split(',')[col]).toBe('plugin_timeout');
    expect(benchFailureRow('codex', 's', '/home/dev/session.jsonl', 'session_evaluation_failed', 'session file is gone', null, 'ENOENT').error_code).toBe('enoent');
  });

  it('side by side, rows keep the requested order, at most `concurrency` run at once, and a failure stays one row', async () => {
    let running = 0;
    let most = 0;
    const told: string[] = [];
    const delays: Record<string, number> = { elide: 30, greedy: 1, sawtooth: 10, broken: 5, dedupe: 1 };
    const result = await evaluateSession(
      input,
      async (id) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, delays[id]));
        running -= 1;
        if (id === 'broken') throw new Error('strategy-broken exited with code 3');
        return { status: 'no_plan', reason_code: 'strategy_returned_no_plan', duration_ms: delays[id] };
      },
      { concurrency: 2, onRow: (row, built, total) => told.push(`${built}/${total} ${row.strategy}`) },
    );
    expect(most).toBe(2);
    // Told as each row is built, in the order they finished (the quickest first), counting up.
    expect(told.map((t) => t.split(' ')[0])).toEqual(['1/5', '2/5', '3/5', '4/5', '5/5']);
    expect(told[0]).toBe('1/5 greedy');
    expect(told.map((t) => t.split(' ')[1]).sort()).toEqual(['broken', 'dedupe', 'elide', 'greedy', 'sawtooth']);
    expect(result.rows.map((r) => [r.strategy, r.status])).toEqual([['elide', 'no_plan'], ['greedy', 'no_plan'], ['sawtooth', 'no_plan'], ['broken', 'error'], ['dedupe', 'no_plan']]);
    // A runner that times its own steps has its time reported, not the time it waited for a slot.
    expect(result.rows.find((r) => r.strategy === 'sawtooth')!.duration_ms).toBe(10);
  });

  it('buildEvalResult marks the same best row the ranking picks', async () => {
    const result = await run();
    const again = buildEvalResult(input, baselineOf(session), result.rows.map((r) => ({ ...r, best: false })));
    expect(again.best_strategy).toBe(result.best_strategy);
  });

  it('a strategy told to start last starts after every other one, and its row stays where it was asked for', async () => {
    const started: string[] = [];
    const result = await evaluateSession(
      { ...input, strategies: ['auto', 'elide', 'dedupe', 'agentic'] },
      async (id) => {
        started.push(id);
        await new Promise((r) => setTimeout(r, 1));
        return { status: 'no_plan', reason_code: 'strategy_returned_no_plan' };
      },
      { concurrency: 1, startLast: new Set(['auto', 'agentic']) },
    );
    expect(started).toEqual(['elide', 'dedupe', 'auto', 'agentic']);
    expect(result.rows.map((r) => r.strategy)).toEqual(['auto', 'elide', 'dedupe', 'agentic']);
  });
});
