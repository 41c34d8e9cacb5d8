/** Aligned plain-text columns for terminal tables. Widths count code points, which is enough for our glyphs. */

export type Align = 'left' | 'right';

const width = (s: string) => [...s].length;

export function renderTable(header: string[], rows: string[][], align: Align[], indent = ''): string[] {
  const widths = header.map((h, c) => Math.max(width(h), ...rows.map((r) => width(r[c] ?? ''))));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((cell, c) => {
        const pad = ' '.repeat(widths[c]! - width(cell));
        return align[c] === 'right' ? pad + cell : cell + pad;
      })
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatPct(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}
