/** eval-study's outputs: the prepared manifest file and the human lines of a study report. */
import type { EvalStudyPrepareResult, RetentionManifest, RetentionStudyReport, TranscriptItem } from '../../schemas/generated/types.js';
import { assertNewOutputPath, writeNewFile } from './output-file.js';
import { countByKind, manifestJson, prepareManifest } from './study-manifest.js';
import type { SlotExtractor } from './study-slots.js';
import { formatInt } from '../text/numbers.js';
import { wrapText } from '../text/wrap.js';
import { renderTable, type TableOptions } from '../text/table.js';

/** `--prepare-manifest <new file>`: builds the heuristic manifest and writes it to a new file. */
export function prepareManifestFile(path: string, source: Buffer, items: readonly TranscriptItem[], extractor?: SlotExtractor): { result: EvalStudyPrepareResult; manifest: RetentionManifest } {
  assertNewOutputPath(path);
  const manifest = prepareManifest(source, items, extractor);
  writeNewFile(path, manifestJson(manifest), 0o600);
  return { result: { checks: manifest.checks.length, label_source: 'heuristic', study_run: false, manifest_path: path, by_kind: countByKind(manifest) }, manifest };
}

const ratio = (n: number, d: number) => `${n}/${d}`;

const TIERS_LEGEND =
  'checks kept, of all: exact = the text is in the result; origin = in a slot of the same origin; source = still at its source pointer; lexical = at least 75% of its content words in one live slot';

export function renderStudyLines(report: RetentionStudyReport, options: TableOptions = {}): string[] {
  const lines = [
    ...wrapText(`${report.schema}: ${report.replay_mode} (no provider calls; ${report.checks_total} checks, labels ${report.label_source})`, options.width),
    `source ${report.source_sha256.slice(0, 12)}… verify: ${report.source_verify_errors} errors, ${report.source_verify_warnings} warnings`,
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
  const header = ['arm', 'round', 'status', 'applied', 'before', 'after', 'exact', 'origin', 'source', 'lexical', 'new errors', 'floor'];
  const rows = report.rows.map((r) => [
    r.arm,
    String(r.round),
    r.status,
    String(r.applied_rounds),
    formatInt(r.estimated_context_before),
    formatInt(r.estimated_context_after),
    ratio(r.retention.retained, r.retention.total),
    ratio(r.retention.same_origin_retained, r.retention.total),
    ratio(r.retention.source_bound_retained, r.retention.total),
    ratio(r.retention.lexical_retained, r.retention.total),
    String(r.new_verify_errors),
    r.floor_reached === null ? '-' : r.floor_reached ? 'reached' : 'no',
  ]);
  const right = new Set(['round', 'applied', 'before', 'after', 'exact', 'origin', 'source', 'lexical', 'new errors']);
  // An arm has a row per round: without the round column a narrow table shows rows no one can tell apart.
  const optional = new Set(['status', 'applied', 'new errors', 'floor']);
  lines.push(...renderTable(header.map((h) => ({ header: h, align: right.has(h) ? 'right' : 'left', optional: optional.has(h) })), rows, options));
  lines.push(...byKind(report, options));
  return lines;
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
  return ['', 'by kind (exact/origin/source/lexical of total, last round):', ...renderTable([{ header: 'kind' }, ...arms.map((r) => ({ header: r.arm, align: 'right' as const }))], rows, options)];
}
