/** eval-study's outputs: the prepared manifest file and the human lines of a study report. */
import type { EvalStudyPrepareResult, RetentionManifest, RetentionStudyReport, TranscriptItem } from '../../schemas/generated/types.js';
import { assertNewOutputPath, writeNewFile } from './output-file.js';
import { countByKind, manifestJson, prepareManifest, STUDY_LIMITS } from './study-manifest.js';
import type { SlotExtractor } from './study-slots.js';
import { formatInt } from '../text/numbers.js';
import { wrapText } from '../text/wrap.js';
import { dropInOrder, renderTable, type Column, type TableOptions } from '../text/table.js';

/** `--prepare-manifest <new file>`: builds the heuristic manifest and writes it to a new file. */
export function prepareManifestFile(path: string, source: Buffer, items: readonly TranscriptItem[], extractor?: SlotExtractor): { result: EvalStudyPrepareResult; manifest: RetentionManifest } {
  assertNewOutputPath(path);
  const manifest = prepareManifest(source, items, extractor);
  writeNewFile(path, manifestJson(manifest), 0o600);
  const replayFits = source.length <= STUDY_LIMITS.replaySourceBytes;
  return { result: { checks: manifest.checks.length, label_source: 'heuristic', study_run: false, manifest_path: path, by_kind: countByKind(manifest), replay_fits: replayFits }, manifest };
}

const ratio = (n: number, d: number) => `${n}/${d}`;

/**
 * The columns a narrow terminal leaves out of the rounds table, first to last: what a round did
 * goes first, then what it kept, and the context after it last of all. Each arm, its round and the
 * exact and source tiers always stay; new errors stay too whenever a round has some.
 */
const ROUND_DROP_ORDER = ['status', 'applied', 'floor', 'new errors', 'before', 'origin', 'lexical', 'after'];

/**
 * The arms of the by-kind table a narrow terminal leaves out, first to last: typed masking against
 * plain masking is the comparison the study exists for, so typed digest goes first, and plain
 * masking, the baseline, never.
 */
const KIND_DROP_ORDER = ['typed_digest', 'typed_masking'];

/** The one arm name wider than the by-kind cells under it, as its header on a narrow terminal. */
const ARM_SHORT: Readonly<Record<string, string>> = { observation_masking: 'observation' };

const TIERS_LEGEND =
  'checks kept, of all: exact = the text is in the result; origin = in a slot of the same origin; source = still at its source pointer; lexical = at least 75% of its content words in one live slot';

export function renderStudyLines(report: RetentionStudyReport, options: TableOptions = {}): string[] {
  const lines = [
    ...wrapText(`${report.schema}: ${report.replay_mode} (no provider calls; ${report.checks_total} checks, labels ${report.label_source})`, options.width),
    ...wrapText(`source ${report.source_sha256.slice(0, 12)}… verify: ${report.source_verify_errors} errors, ${report.source_verify_warnings} warnings`, options.width),
    ...wrapText('context: estimated over the records in context, 4 bytes a token (not the usage the provider reported)', options.width),
  ];
  // A round fires as plan would: on the reported usage when the transcript has it, which the
  // estimate in the table may sit well below.
  if (report.replay_mode !== 'realized_audit' && report.trigger_tokens > 0) {
    lines.push(...wrapText(`a round compacts when the context plan reads (the reported usage where the transcript has it, else this estimate) reaches the trigger of ${formatInt(report.trigger_tokens)} tokens`, options.width));
  }
  lines.push('');
  // Context is the study's own estimate (4 bytes a token over the records in context), which is
  // not the provider-reported figure plan and detect show.
  // One-word tier headers, told once above the table, keep a row within 80 columns (the arm names
  // alone take 19, and a tier's count up to 7).
  lines.push(...wrapText(TIERS_LEGEND, options.width), '');
  const rounds = roundTable(report);
  lines.push(...renderTable(rounds.columns, rounds.rows, options));
  lines.push(...byKind(report, options));
  return lines;
}

type StudyRow = RetentionStudyReport['rows'][number];

/** A rounds-table column and how a row fills it. */
interface RoundColumn extends Column {
  cell: (r: StudyRow) => string;
  /** About replayed rounds: an audit (`--against`) replays none, so "applied 0" would misread a fork with dozens of elisions. */
  replayOnly?: boolean;
}

function roundTable(report: RetentionStudyReport): { columns: Column[]; rows: string[][] } {
  const right = (header: string, cell: RoundColumn['cell'], more: Partial<RoundColumn> = {}): RoundColumn => ({ header, align: 'right', cell, ...more });
  const all: RoundColumn[] = [
    // Never cut: the arms are the study's names for them, as --json and the by-kind table give them.
    { header: 'arm', cell: (r) => r.arm },
    // An arm has a row per round: without the round a narrow table shows rows no one can tell apart.
    right('round', (r) => String(r.round)),
    { header: 'status', cell: (r) => r.status },
    right('applied', (r) => String(r.applied_rounds), { replayOnly: true }),
    right('before', (r) => formatInt(r.estimated_context_before)),
    right('after', (r) => formatInt(r.estimated_context_after)),
    right('exact', (r) => ratio(r.retention.retained, r.retention.total)),
    right('origin', (r) => ratio(r.retention.same_origin_retained, r.retention.total)),
    right('source', (r) => ratio(r.retention.source_bound_retained, r.retention.total)),
    right('lexical', (r) => ratio(r.retention.lexical_retained, r.retention.total)),
    right('new errors', (r) => String(r.new_verify_errors), { short: 'new err' }),
    { header: 'floor', cell: (r) => (r.floor_reached === null ? '-' : r.floor_reached ? 'reached' : 'no'), replayOnly: true },
  ];
  const shown = report.replay_mode === 'realized_audit' ? all.filter((c) => !c.replayOnly) : all;
  // A round that broke the session must not look clean on a narrow terminal.
  const kept = new Set(report.rows.some((r) => r.new_verify_errors > 0) ? ['new errors'] : []);
  const columns = dropInOrder(shown.map(({ cell: _cell, replayOnly: _replayOnly, ...column }) => column), ROUND_DROP_ORDER, kept);
  return { columns, rows: report.rows.map((r) => shown.map((c) => c.cell(r))) };
}

/**
 * Per kind of check, each arm's last row: exact / origin / source / lexical, over the kind's total.
 * A row per kind and a column per arm: there are three arms and any number of kinds.
 */
function byKind(report: RetentionStudyReport, options: TableOptions): string[] {
  const last = new Map<string, RetentionStudyReport['rows'][number]>();
  for (const r of report.rows) last.set(r.arm, r);
  const arms = [...last.values()];
  const kinds = [...new Set(arms.flatMap((r) => r.retention.by_kind.filter((k) => k.total > 0).map((k) => k.kind)))];
  if (kinds.length === 0) return [];
  const rows = kinds.map((kind) => [
    kind,
    ...arms.map((r) => {
      const k = r.retention.by_kind.find((b) => b.kind === kind);
      return k ? `${k.retained}/${k.same_origin_retained}/${k.source_bound_retained}/${k.lexical_retained} of ${k.total}` : '-';
    }),
  ]);
  // Cells are numbers and never cut: on a narrow terminal the widest arm name shortens, then arms go.
  const columns = dropInOrder([{ header: 'kind' }, ...arms.map((r): Column => ({ header: r.arm, short: ARM_SHORT[r.arm], align: 'right' }))], KIND_DROP_ORDER);
  return ['', ...wrapText('by kind (exact/origin/source/lexical of total, last round):', options.width), ...renderTable(columns, rows, options)];
}
