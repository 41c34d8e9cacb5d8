/** Counts and ages as people read them in tables and reports. */

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
