/** eval-study's outputs: the prepared manifest file and the human lines of a study report. */
import type { EvalStudyPrepareResult, RetentionManifest, RetentionStudyReport, TranscriptItem } from '../../schemas/generated/types.js';
import { assertNewOutputPath, writeNewFile } from './output-file.js';
import { countByKind, manifestJson, prepareManifest } from './study-manifest.js';
import type { SlotExtractor } from './study-slots.js';
import { renderTable, type TableOptions } from '../text/table.js';

/** `--prepare-manifest <new file>`: builds the heuristic manifest and writes it to a new file. */
export function prepareManifestFile(path: string, source: Buffer, items: readonly TranscriptItem[], extractor?: SlotExtractor): { result: EvalStudyPrepareResult; manifest: RetentionManifest } {
  assertNewOutputPath(path);
  const manifest = prepareManifest(source, items, extractor);
  writeNewFile(path, manifestJson(manifest), 0o600);
  return { result: { checks: manifest.checks.length, label_source: 'heuristic', study_run: false, manifest_path: path, by_kind: countByKind(manifest) }, manifest };
}

const ratio = (n: number, d: number) => `${n}/${d}`;

export function renderStudyLines(report: RetentionStudyReport, options: TableOptions = {}): string[] {
  const lines = [
    `${report.schema}: ${report.replay_mode} (no provider calls; ${report.checks_total} checks, labels ${report.label_source})`,
    `source ${report.source_sha256.slice(0, 12)}… verify: ${report.source_verify_errors} errors, ${report.source_verify_warnings} warnings`,
    '',
  ];
  const header = ['arm', 'round', 'status', 'applied', 'before', 'after', 'same origin', 'at source', 'lexical', 'new errors', 'floor'];
  const rows = report.rows.map((r) => [
    r.arm,
    String(r.round),
    r.status,
    String(r.applied_rounds),
    String(r.estimated_context_before),
    String(r.estimated_context_after),
    ratio(r.retention.same_origin_retained, r.retention.total),
    ratio(r.retention.source_bound_retained, r.retention.total),
    ratio(r.retention.lexical_retained, r.retention.total),
    String(r.new_verify_errors),
    r.floor_reached ? 'reached' : 'no',
  ]);
  const right = new Set(['round', 'applied', 'before', 'after', 'same origin', 'at source', 'lexical', 'new errors']);
  lines.push(...renderTable(header.map((h) => ({ header: h, align: right.has(h) ? 'right' : 'left' })), rows, options));
  return lines;
}
