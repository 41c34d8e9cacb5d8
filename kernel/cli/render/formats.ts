/** Counts, ages and spans of time as people read them in tables and reports. */

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

/** A span of seconds in the largest whole unit: "7 days", "12 hours", "90 seconds". */
export function describeWindow(secs: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (secs % 86400 === 0) return unit(secs / 86400, 'day');
  if (secs % 3600 === 0) return unit(secs / 3600, 'hour');
  if (secs % 60 === 0) return unit(secs / 60, 'minute');
  return unit(secs, 'second');
}
