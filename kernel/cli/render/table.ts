/** Plain aligned tables for people; numbers right-aligned, nothing printed in colour. */

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  align?: 'left' | 'right';
  /** Longer cells are cut with an ellipsis. */
  maxWidth?: number;
}

function cut(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  return text.slice(0, Math.max(0, max - 1)) + '…';
}

export function renderTable<Row>(rows: Row[], columns: Column<Row>[]): string[] {
  const cells = rows.map((row) => columns.map((c) => cut(c.value(row), c.maxWidth)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i]!.align === 'right' ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)];
}

/** 1234567 → "1,234,567"; null → "unknown". */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? 'unknown' : n.toLocaleString('en-US');
}

export function formatAge(seconds: number): string {
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))}s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(2)} GiB`;
}
