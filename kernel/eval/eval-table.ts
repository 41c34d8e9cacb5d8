/**
 * The eval table for people: one aligned row per strategy, the best valid rewrite marked with `*`,
 * and a closing line naming it. No transcript text: missed probes are counted, not quoted.
 */
import type { EvalCommandResult, EvalRow, MissedProbe } from '../../schemas/generated/types.js';
import { PROBE_KINDS } from './probe-scan.js';
import { scoreText } from './plan-metrics.js';
import { formatInt, formatPct } from '../text/numbers.js';
import { shorten } from '../text/human.js';
import { wrapText } from '../text/wrap.js';
import { dropInOrder, MESSAGE_CELL_MAX, messagesUnderTable, renderTable, type Column, type TableOptions } from '../text/table.js';

/**
 * The columns a narrow terminal leaves out, first to last: what supports the comparison goes before
 * what makes it. Each strategy, its result, its reduction and the probes it kept always stay.
 */
const EVAL_DROP_ORDER = ['time', 'verify', 'prefix', 'checks kept', 'client', 'before', 'tail', 'after'];

/** Missed probes listed per row in the table; --json has all of them (up to 8). */
const MISSED_SHOWN = 4;

function resultCell(row: EvalRow): string {
  if (row.status === 'error') return `error: ${row.error ?? 'unknown'}`;
  if (row.status === 'no_plan') return `no plan (${row.reason_code ?? 'unknown'})`;
  if (row.execution_state === 'provider_only') return `provider control`;
  const ops = row.edit_ops.filter((op, i, all) => all.indexOf(op) === i);
  const elided = row.elided_records > 0 ? ` ${formatInt(row.elided_records)} records` : '';
  return `plan: ${ops.join('+')}${elided}`;
}

function retentionCell(row: EvalRow): string {
  const s = row.probe_score;
  if (!s) return '-';
  return `${s.probes_recalled}/${s.probes_total} ${formatPct(s.recall, 0)}`;
}

function verifyCell(row: EvalRow): string {
  if (row.execution_state !== 'rendered') return '-';
  const parts: string[] = [];
  if (row.new_verify_errors > 0) parts.push(`${row.new_verify_errors} new errors`);
  if (row.preexisting_verify_errors > 0) parts.push(`${row.preexisting_verify_errors} pre-existing`);
  if (row.verify_warnings > 0) parts.push(`${row.verify_warnings} warnings`);
  return parts.length ? parts.join(', ') : 'clean';
}

/** With no probe in the tail, `tail_intact` is true only vacuously (as --json keeps it); "intact" would claim a check that never ran. */
function tailCell(row: EvalRow): string {
  if (row.tail_intact === null) return '-';
  if (row.probe_score && row.probe_score.tail_probes_total === 0) return '- (no tail probes)';
  return row.tail_intact ? 'intact' : 'LOST';
}

/** Source-bound / total heuristic checks an applied compaction would record, with the lexical tier. */
function recordedCell(row: EvalRow): string {
  const e = row.event_record;
  if (!e || e.retention_total === null) return '-';
  return `${e.retention_retained}/${e.retention_total} (lex ${e.retention_lexical})`;
}

/** The context the real client rebuilt from the candidate, or why it did not. */
function clientCell(row: EvalRow): string {
  const r = row.rehearsal;
  if (!r) return '-';
  const tokens = r.client_context_tokens === null ? '' : `~${formatInt(r.client_context_tokens)} `;
  return r.ok ? `${tokens}ok` : `${tokens}${r.status}`;
}

const KIND_SHORT: Readonly<Record<string, string>> = { command: 'cmd', error_signature: 'error', file_name: 'file', identifier: 'ident' };

/** Recalled/sampled per probe kind, one row per strategy that was scored. */
function retentionByKind(result: EvalCommandResult, options: TableOptions): string[] {
  const scored = result.rows.filter((r) => r.probe_score);
  const kinds = PROBE_KINDS.filter((kind) => scored.some((r) => r.probe_score!.by_kind.some((t) => t.kind === kind && t.total > 0)));
  if (kinds.length === 0) return [];
  const rows = scored.map((r) => [
    r.strategy,
    ...kinds.map((kind) => {
      const t = r.probe_score!.by_kind.find((k) => k.kind === kind);
      return t && t.total > 0 ? `${t.recalled}/${t.total}` : '-';
    }),
  ]);
  // On a narrow terminal the kinds go by their short names, then the rightmost kinds go.
  const kindColumns = kinds.map((kind): Column => ({ header: kind, short: KIND_SHORT[kind], align: 'right', optional: true }));
  return ['', 'probes kept by kind (found verbatim/sampled):', ...renderTable([{ header: 'strategy' }, ...kindColumns], rows, options)];
}

/** A missed probe without its text: kind, 1-based line, length and short hash. */
const missedLabel = (m: MissedProbe) => `${m.kind} line ${formatInt(m.line_index + 1)} (${m.bytes} B, ${m.sha256_prefix})`;

function missedProbes(result: EvalCommandResult, width: number | undefined): string[] {
  const lines: string[] = [];
  for (const r of result.rows) {
    const s = r.probe_score;
    if (!s || s.missed_probes.length === 0) continue;
    const missed = s.probes_total - s.probes_recalled;
    const shown = s.missed_probes.slice(0, MISSED_SHOWN).map(missedLabel);
    const more = missed > shown.length ? `; +${formatInt(missed - shown.length)} more` : '';
    lines.push(...wrapText(`  ${r.strategy}: ${shown.join(', ')}${more}`, width, '    '));
  }
  return lines.length > 0 ? ['', ...wrapText('first missed probes (kind, source line, length, sha256 prefix; --json lists up to 8):', width), ...lines] : [];
}

/**
 * A selector's words list every candidate's outcome; under the table each strategy gets a few
 * lines, and --json has the whole text.
 */
const NO_PLAN_WORDS_MAX = 240;

/** What each strategy that proposed nothing said, under the table: its code alone does not say why. */
function noPlanWords(result: EvalCommandResult, width: number | undefined): string[] {
  const said = result.rows.filter((r) => r.status === 'no_plan' && r.no_plan_rationale);
  const entries = said.map((r) => [r.strategy, shorten(r.no_plan_rationale!, NO_PLAN_WORDS_MAX)] as const);
  return messagesUnderTable('no plan, as the strategy said', entries, width);
}

/** As auto's rationale prints a score (small ones keep three digits), with thousands separators once whole. */
function bestScore(score: number): string {
  return score >= 100 ? formatInt(score) : scoreText(score);
}

export function renderEvalTable(result: EvalCommandResult, options: TableOptions = {}): string[] {
  const lines = [
    ...wrapText(`${result.provider} ${result.session_id} — context ~${formatInt(result.context_tokens)} tokens (${result.token_basis}), effective trigger ${formatInt(result.effective_trigger_tokens)}, floor ${formatInt(result.floor_tokens)}`, options.width),
    ...wrapText(`probes sampled: ${result.probes_total}; protected tail from line ${result.tail_start_line === null ? '-' : result.tail_start_line + 1}`, options.width),
    '',
  ];
  // The recorded checks and the client's count appear only when some row has them (an applied
  // event's retention; --rehearse).
  const showRecorded = result.rows.some((r) => r.event_record && r.event_record.retention_total !== null);
  const showClient = result.rows.some((r) => r.rehearsal);
  // On a narrow terminal the supporting columns go first, in EVAL_DROP_ORDER. Verify stays whenever
  // a rewrite has findings and tail whenever one was lost: a narrow table must not make a damaged
  // candidate look like a clean one.
  const findings = result.rows.some((r) => r.execution_state === 'rendered' && (r.verify_errors > 0 || r.verify_warnings > 0));
  const lostTail = result.rows.some((r) => r.tail_intact === false);
  const kept = new Set([...(findings ? ['verify'] : []), ...(lostTail ? ['tail'] : [])]);
  const all: Column[] = [
    { header: '' },
    // Wide enough for every built-in id; a selector's label (auto→cache_edits) is cut at its end.
    { header: 'strategy', fit: 'end', minWidth: 11 },
    // An error's whole message is printed under the table.
    { header: 'result', fit: 'end', minWidth: 10, maxWidth: MESSAGE_CELL_MAX },
    { header: 'before', align: 'right' },
    { header: 'after', align: 'right' },
    ...(showClient ? [{ header: 'client', align: 'right' } satisfies Column] : []),
    { header: 'reduction', short: 'reduced', align: 'right' },
    { header: 'probes kept', short: 'kept', align: 'right' },
    ...(showRecorded ? [{ header: 'checks kept', align: 'right' } satisfies Column] : []),
    { header: 'tail' },
    { header: 'prefix', align: 'right' },
    { header: 'verify' },
    { header: 'time', align: 'right' },
  ];
  const columns = dropInOrder(all, EVAL_DROP_ORDER, kept);
  const rows = result.rows.map((row) => {
    const planned = row.status === 'plan';
    // A provider control's outcome is the provider's to decide: no file shows what it would keep.
    const measured = planned && row.execution_state !== 'provider_only';
    return [
      row.best ? '*' : '',
      // A selector names the strategy whose plan it chose.
      row.credited_strategy ? `${row.strategy}→${row.credited_strategy}` : row.strategy,
      resultCell(row),
      formatInt(row.context_tokens_before),
      measured ? formatInt(row.context_tokens_after) : '-',
      ...(showClient ? [clientCell(row)] : []),
      measured ? `${row.reduction_pct.toFixed(1)}%` : '-',
      retentionCell(row),
      ...(showRecorded ? [recordedCell(row)] : []),
      tailCell(row),
      measured ? formatInt(row.prefix_tokens) : '-',
      verifyCell(row),
      `${formatInt(row.duration_ms)} ms`,
    ];
  });
  lines.push(...renderTable(columns, rows, options));
  const failed = result.rows.filter((r) => r.status === 'error');
  lines.push(...messagesUnderTable('errors', failed.map((r) => [r.strategy, `${r.error ?? 'unknown'}${r.error_code ? ` (${r.error_code})` : ''}`] as const), options.width));
  lines.push(...noPlanWords(result, options.width));
  lines.push(...retentionByKind(result, options), ...missedProbes(result, options.width));
  lines.push('');
  const best = result.rows.find((r) => r.best);
  if (best) {
    lines.push(
      ...wrapText(`pareto best: ${best.strategy} score=${bestScore(best.score ?? 0)} prefix=${formatInt(best.prefix_tokens)} reclaimed=${formatInt(best.est_reclaimed)}`, options.width),
    );
  } else lines.push(...wrapText('pareto best: none (no strategy produced a clean file rewrite that keeps the protected tail)', options.width));
  // before/after count the whole context as the client last reported it (system prompt and tools
  // included); the client column is only what the client rebuilt from the transcript.
  if (showClient) {
    lines.push(
      ...wrapText(
        'client: tokens of the transcript part the real client rebuilt from the candidate, measured by the rehearsal; before and after are the whole context as the client last reported it, projected, so the two are not the same measure',
        options.width,
      ),
    );
  }
  return lines;
}
