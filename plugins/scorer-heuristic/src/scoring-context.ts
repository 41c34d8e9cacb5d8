/**
 * Everything the features need that depends on the whole transcript, computed once so scoring
 * 100,000 candidates stays O(total tokens × log n): document frequencies, each token's ordered
 * occurrence list (future references by binary search), goal tokens, tail parents, label history.
 *
 * Tokens are numbered and kept in flat typed arrays (a text's tokens, a token's positions), not as
 * a Set per record and an array per token: the scorer holds this for the whole transcript, and on a
 * 100,000-record session those small objects were a third of its time in garbage collection.
 */
import type { TranscriptItem } from '../../../schemas/generated/types.js';
import { STATE_CARD_MARKER } from '../../../sdk/state-card.js';
import { tokenSet } from './tokenize.js';

/** How many of the newest records define "the goal" and "the tail". */
export const TAIL_LOOKBACK = 8;

export interface ScoringContext {
  items: readonly TranscriptItem[];
  /** Which distinct text (`"{label} {summary}"`) each item position has. */
  textOf: Int32Array;
  /** Text t's token ids are textTokens[textStart[t] .. textStart[t + 1]), each once, in first-seen order. */
  textStart: Int32Array;
  textTokens: Int32Array;
  /** Token k occurs at the item positions occurrences[occurrenceStart[k] .. occurrenceStart[k + 1]), ascending; their count is its document frequency. */
  occurrenceStart: Int32Array;
  occurrences: Int32Array;
  nDocs: number;
  maxIdf: number;
  goalTokens: Set<string>;
  /** 1 for each token id among the goal tokens. */
  goalToken: Uint8Array;
  tailParents: Set<string>;
  /** The text of each label's last occurrence over all items. */
  labelLatestText: Map<string, number>;
  /** Scratch for comparing two texts' tokens (features.ts textJaccard): one slot per token id. */
  marks: { stamp: number; seen: Uint32Array };
  /** For candidate labels: how many candidates carry it and the newest such line. */
  candidateLabels: Map<string, { count: number; newestLine: number }>;
  positionOfLine: Map<number, number>;
  maxLine: number;
  candidateCount: number;
}

export function itemText(item: TranscriptItem): string {
  return `${item.label} ${item.summary ?? ''}`;
}

/** What depends on the transcript alone, kept per items array: a process scores one transcript many times. */
type TranscriptPart = Omit<ScoringContext, 'candidateLabels' | 'candidateCount'>;
const transcriptParts = new WeakMap<readonly TranscriptItem[], TranscriptPart>();

/** Builds (once per items array) what scoring needs from the transcript alone. */
export function transcriptPart(items: readonly TranscriptItem[]): TranscriptPart {
  let part = transcriptParts.get(items);
  if (part === undefined) {
    part = buildTranscriptPart(items);
    transcriptParts.set(items, part);
  }
  return part;
}

/** Number of a token, given on first sight. */
class TokenNumbers {
  readonly ids = new Map<string, number>();
  idOf(token: string): number {
    let id = this.ids.get(token);
    if (id === undefined) this.ids.set(token, (id = this.ids.size));
    return id;
  }
}

function buildTranscriptPart(items: readonly TranscriptItem[]): TranscriptPart {
  const numbers = new TokenNumbers();
  // Records with the same label and summary share one text (its tokens are only read).
  const textIds = new Map<string, number>();
  const textOf = new Int32Array(items.length);
  const starts: number[] = [0];
  const tokenIds: number[] = [];
  items.forEach((item, position) => {
    const text = itemText(item);
    let id = textIds.get(text);
    if (id === undefined) {
      textIds.set(text, (id = textIds.size));
      for (const token of tokenSet(text)) tokenIds.push(numbers.idOf(token));
      starts.push(tokenIds.length);
    }
    textOf[position] = id;
  });
  const textStart = Int32Array.from(starts);
  const textTokens = Int32Array.from(tokenIds);
  const { occurrenceStart, occurrences } = occurrenceLists(textOf, textStart, textTokens, numbers.ids.size);

  const nDocs = Math.max(1, items.length);
  const goalTokens = new Set<string>();
  let goalItems = 0;
  for (let i = items.length - 1; i >= 0 && goalItems < TAIL_LOOKBACK; i--) {
    const item = items[i]!;
    if ((item.kind !== 'user' && item.kind !== 'assistant') || item.summary == null || item.summary.startsWith(STATE_CARD_MARKER)) continue;
    goalItems++;
    for (const t of tokenSet(item.summary)) goalTokens.add(t);
  }
  // A goal token no item's text holds is never looked up: only the ones numbered need a flag.
  const goalToken = new Uint8Array(numbers.ids.size);
  for (const t of goalTokens) {
    const id = numbers.ids.get(t);
    if (id !== undefined) goalToken[id] = 1;
  }

  const tailParents = new Set<string>();
  for (let i = Math.max(0, items.length - TAIL_LOOKBACK); i < items.length; i++) {
    const parent = items[i]!.parent_uuid;
    if (parent) tailParents.add(parent);
  }

  const labelLatestText = new Map<string, number>();
  items.forEach((item, position) => labelLatestText.set(item.label, textOf[position]!));

  const positionOfLine = new Map<number, number>();
  items.forEach((item, position) => positionOfLine.set(item.line_index, position));
  return {
    items,
    textOf,
    textStart,
    textTokens,
    occurrenceStart,
    occurrences,
    nDocs,
    maxIdf: Math.max(1, Math.log(nDocs)),
    goalTokens,
    goalToken,
    tailParents,
    labelLatestText,
    marks: { stamp: 0, seen: new Uint32Array(numbers.ids.size) },
    positionOfLine,
    maxLine: items.length > 0 ? items[items.length - 1]!.line_index : 0,
  };
}

/** Each token's item positions, ascending, as one flat array cut by token (counted first, then filled in order). */
function occurrenceLists(textOf: Int32Array, textStart: Int32Array, textTokens: Int32Array, tokenCount: number): { occurrenceStart: Int32Array; occurrences: Int32Array } {
  const occurrenceStart = new Int32Array(tokenCount + 1);
  for (const text of textOf) for (let k = textStart[text]!; k < textStart[text + 1]!; k++) occurrenceStart[textTokens[k]! + 1]! += 1;
  for (let t = 0; t < tokenCount; t++) occurrenceStart[t + 1]! += occurrenceStart[t]!;
  const occurrences = new Int32Array(occurrenceStart[tokenCount]!);
  const next = occurrenceStart.slice(0, tokenCount);
  textOf.forEach((text, position) => {
    for (let k = textStart[text]!; k < textStart[text + 1]!; k++) occurrences[next[textTokens[k]!]!++] = position;
  });
  return { occurrenceStart, occurrences };
}

export function buildScoringContext(items: readonly TranscriptItem[], candidateLines: readonly number[]): ScoringContext {
  const part = transcriptPart(items);
  const { positionOfLine } = part;

  const candidateLabels = new Map<string, { count: number; newestLine: number }>();
  for (const line of candidateLines) {
    const position = positionOfLine.get(line);
    if (position === undefined) continue;
    const label = items[position]!.label;
    const entry = candidateLabels.get(label);
    if (entry) {
      entry.count++;
      entry.newestLine = Math.max(entry.newestLine, line);
    } else {
      candidateLabels.set(label, { count: 1, newestLine: line });
    }
  }

  return { ...part, candidateLabels, candidateCount: Math.max(1, candidateLines.length) };
}
