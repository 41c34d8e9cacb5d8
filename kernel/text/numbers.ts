/** Numbers in measurement reports: whole counts with thousands separators, and percentages. */

export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatPct(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

/**
 * An out-of-range flag value as a refusal quotes it back. Past 2^53 the number parsed is not the
 * one typed (99999999999999999999 reads as 1e20, 9007199254740993 as ...992), so it is described
 * by the bound it passes rather than quoted as a number nobody typed.
 */
export function quotedFlagNumber(value: number, min: number, max: number): string {
  if (value > Number.MAX_SAFE_INTEGER) return `a number far past ${max}`;
  if (value < -Number.MAX_SAFE_INTEGER) return `a number far below ${min}`;
  return String(value);
}
