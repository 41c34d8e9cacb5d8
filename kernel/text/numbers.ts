/** Numbers in measurement reports: whole counts with thousands separators, and percentages. */

export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatPct(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}
