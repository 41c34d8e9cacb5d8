/**
 * `choose_with_digest`: take candidates in priority order until the projection reaches the floor,
 * then keep taking until the floor also pays for the state card that describes them.
 */
import type { DigestBlock, TranscriptItem } from '../../schemas/generated/types.js';
import { digestOverheadTokens } from '../state-card.js';
import { elisionSavings } from '../tokens.js';
import { DigestAccumulator, type CardContext } from './state-card-digest.js';

export interface DigestSelection {
  /** Chosen records, ascending by line index. */
  chosen: TranscriptItem[];
  digest: DigestBlock;
  /** Projected context after eliding the chosen records and adding the card. */
  after: number;
}

export function chooseWithDigest(
  before: number,
  floor: number,
  candidates: readonly TranscriptItem[],
  card: CardContext,
): DigestSelection | null {
  const acc = new DigestAccumulator(card);
  const chosen: TranscriptItem[] = [];
  let projected = before;
  let next = 0;
  const take = () => {
    const item = candidates[next++]!;
    chosen.push(item);
    acc.add(item);
    projected = Math.max(0, projected - elisionSavings(item));
  };

  while (next < candidates.length && projected > floor) take();
  if (chosen.length === 0) return null;

  for (;;) {
    const digest = acc.build();
    const overhead = digestOverheadTokens(digest);
    const after = projected + overhead;
    if (after <= floor || next >= candidates.length) return finish(chosen, digest, after);
    // The card costs `overhead`, so the elisions must now reach floor - overhead.
    const target = Math.max(0, floor - overhead);
    let took = false;
    while (next < candidates.length && projected > target) {
      take();
      took = true;
    }
    // Best effort: the host's minimum-savings gate decides whether this plan is worth applying.
    if (!took) return finish(chosen, digest, after);
  }
}

function finish(chosen: TranscriptItem[], digest: DigestBlock, after: number): DigestSelection {
  return { chosen: [...chosen].sort((a, b) => a.line_index - b.line_index), digest, after };
}
