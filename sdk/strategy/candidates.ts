/**
 * Which records a strategy may touch. The protected tail and the elidable test match the host's
 * plan validation exactly, so a plan built from these sets never trips "protected or non-elidable".
 */
import type { TranscriptItem } from '../../schemas/generated/types.js';
import { elisionSavings, isElidable } from '../tokens.js';

/** The tool name strategies group by: the label up to its first `(` or space, lowercased. */
export function toolName(label: string): string {
  let end = label.length;
  for (let i = 0; i < label.length; i++) {
    const c = label.charCodeAt(i);
    if (c === 0x28 /* ( */ || c === 0x20 /* space */) {
      end = i;
      break;
    }
  }
  return label.slice(0, end).toLowerCase();
}

/** Elidable items in transcript order. */
export function elidableItems(items: readonly TranscriptItem[]): TranscriptItem[] {
  return items.filter(isElidable);
}

/** Line indexes of the newest `keep` elidable items: the tail no plan may touch. */
export function protectedLines(items: readonly TranscriptItem[], keep: number): Set<number> {
  const lines = new Set<number>();
  for (let i = items.length - 1; i >= 0 && lines.size < keep; i--) {
    if (isElidable(items[i]!)) lines.add(items[i]!.line_index);
  }
  return lines;
}

/**
 * A stub that costs as much as the payload it replaces reclaims nothing and can make the record
 * longer, so such items are never chosen (the original picked them and spent a stub on each).
 */
export function reclaims(item: TranscriptItem): boolean {
  return elisionSavings(item) > 0;
}

/**
 * The common stale set: elidable items minus the newest `keep`, oldest first, restricted to those
 * whose elision actually reclaims tokens.
 */
export function staleCandidates(items: readonly TranscriptItem[], keep: number): TranscriptItem[] {
  const elidable = elidableItems(items);
  const unprotected = Math.max(0, elidable.length - keep);
  const out: TranscriptItem[] = [];
  for (let i = 0; i < unprotected; i++) if (reclaims(elidable[i]!)) out.push(elidable[i]!);
  return out;
}

/**
 * Why staleCandidates found nothing, in words: no output outside the protected tail at all, some
 * that are all too small to pay for their stubs, or outputs in context that the provider offers
 * nothing of (a payload too small or of a shape it does not elide).
 */
export function noCandidatesReason(items: readonly TranscriptItem[], keep: number): string {
  const stale = Math.max(0, elidableItems(items).length - keep);
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (stale > 0) return `${plural(stale, 'stale tool output')} outside the ${keep} protected recent ones, none large enough to reclaim tokens once its stub is paid for`;
  let inert = 0;
  for (const item of items) if (item.kind === 'tool_result' && item.est_tokens > 0 && !isElidable(item)) inert += 1;
  const none = `no stale tool outputs outside the ${keep} protected recent ones`;
  return inert === 0 ? none : `${none}; ${plural(inert, 'tool output')} in context ${inert === 1 ? 'has' : 'have'} no elidable payload (too small, or a shape the provider does not elide)`;
}

/** Count of items whose line comes before `line`: the records a plan leaves byte-identical. */
export function itemsBefore(items: readonly TranscriptItem[], line: number): number {
  let lo = 0;
  let hi = items.length;
  // Items arrive in line order (the host rejects anything else), so a binary search is enough.
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid]!.line_index < line) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const TOOL_USE_ID = /^[A-Za-z0-9_.-]{1,256}$/;

/**
 * True when the record carries tool_use ids and the host would accept every one of them in a cache
 * edit; a record only partly droppable by id is treated as not droppable.
 */
export function hasValidToolUseIds(item: TranscriptItem): boolean {
  const ids = item.tool_use_ids ?? [];
  return ids.length > 0 && ids.every((id) => TOOL_USE_ID.test(id));
}
