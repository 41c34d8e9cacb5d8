/**
 * The bench CSV: the original tool's 24 columns in their order (so existing readers keep working),
 * then our additions. RFC 4180 quoting: a field holding a comma, quote, CR or LF is quoted and its
 * quotes doubled; empty means null.
 *
 * Session ids and error messages come from transcripts and file names, and a spreadsheet opening
 * the file runs a cell starting with = + - or @ as a formula (some do after a leading tab or CR
 * too). Such a text field is written behind a single quote, which spreadsheets show as plain text;
 * numbers are never text, and never in exponent notation.
 */
import type { BenchRow } from '../../schemas/generated/types.js';

export const BENCH_CSV_COLUMNS = [
  'provider', 'session', 'strategy', 'context_before', 'context_after', 'est_reclaimed', 'prefix_tokens', 'prefix_ratio',
  'score', 'verify_errors', 'verify_warnings', 'probes_total', 'probes_recalled', 'recall', 'tail_intact', 'duration_ms',
  'execution_state', 'token_basis', 'source_sha256', 'result_sha256', 'retention_complete', 'recall_available',
  'retention_basis', 'failure',
  'status', 'reason_code', 'reduction_pct', 'new_verify_errors', 'best', 'error', 'error_code', 'credited_strategy',
  'no_plan_rationale', 'path',
] as const satisfies ReadonlyArray<keyof BenchRow>;

const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A number in plain decimals, with the digits JavaScript would print. A small score (little
 * reclaimed behind a short cached prefix: reclaimed x ratio^3) prints as 8e-7, which readers that
 * take only decimals (and people) misread as text or as 8.
 */
export function plainNumber(n: number): string {
  const shortest = String(n);
  const exponent = shortest.indexOf('e');
  if (exponent < 0) return shortest;
  const sign = n < 0 ? '-' : '';
  const [whole, fraction = ''] = shortest.slice(sign.length, exponent).split('.') as [string, string?];
  const digits = whole + fraction;
  const point = whole.length + Number(shortest.slice(exponent + 1));
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? (Number.isFinite(value) ? plainNumber(value) : '') : typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function benchCsv(rows: readonly BenchRow[]): string {
  const lines = [BENCH_CSV_COLUMNS.join(',')];
  for (const row of rows) lines.push(BENCH_CSV_COLUMNS.map((c) => csvField(row[c])).join(','));
  return lines.join('\n') + '\n';
}
