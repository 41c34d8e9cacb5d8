/** The lines a strategy may elide: live records with an elidable payload, as parse reports them. */
import type { TranscriptItem } from '../../schemas/generated/types.js';

export function elidableLines(items: readonly TranscriptItem[]): number[] {
  return items.filter((i) => i.est_tokens > 0 && (i.elidable_bytes ?? 0) > 0).map((i) => i.line_index);
}
