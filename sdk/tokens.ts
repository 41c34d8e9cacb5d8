/** Token math every strategy and provider shares (the original's estimate rules). */

export const CHARS_PER_TOKEN = 4;
/** Each elided payload part keeps a stub; the projection prices 96 bytes of it per part. */
export const STUB_BUDGET_BYTES = 96;

/** ceil(bytes / 4), and never less than 1: an empty record still costs a token. */
export function estimateTokens(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / CHARS_PER_TOKEN));
}

export interface ElidableLike {
  est_tokens: number;
  elidable_bytes?: number | null;
  elidable_parts?: number;
}

export function isElidable(item: ElidableLike): boolean {
  return item.est_tokens > 0 && (item.elidable_bytes ?? 0) > 0;
}

/** Tokens an elision reclaims after paying for the stub text that stays behind. */
export function elisionSavings(item: ElidableLike): number {
  if (!isElidable(item)) return 0;
  const bytes = item.elidable_bytes ?? 0;
  const parts = Math.max(item.elidable_parts ?? 1, 1);
  const stub = Math.ceil((STUB_BUDGET_BYTES * parts) / CHARS_PER_TOKEN);
  const raw = Math.ceil(bytes / CHARS_PER_TOKEN) - stub;
  // A record never reclaims more than it costs, less the stub it keeps: this binds when the client
  // sends less of the payload than the file holds (Codex cuts long outputs).
  return Math.max(0, Math.min(item.est_tokens - stub, raw));
}
