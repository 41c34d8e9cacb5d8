/**
 * Everything the features need that depends on the whole transcript, computed once so scoring
 * 100,000 candidates stays O(total tokens × log n): document frequencies, each token's ordered
 * occurrence list (future references by binary search), goal tokens, tail parents, label history.
 */
import type { TranscriptItem } from '../../../schemas/generated/types.js';
import { STATE_CARD_MARKER } from '../../../sdk/state-card.js';
import { tokenSet } from './tokenize.js';

/** How many of the newest records define "the goal" and "the tail". */
export const TAIL_LOOKBACK = 8;

export interface ScoringContext {
  items: readonly TranscriptItem[];
  /** `"{label} {summary}"` per item position. */
  texts: string[];
  /** Its tokens (records with the same text share one set). */
  tokens: Set<string>[];
  /** Item positions containing each token, ascending. Its length is the token's document frequency. */
  occurrences: Map<string, number[]>;
  nDocs: number;
  maxIdf: number;
  goalTokens: Set<string>;
  tailParents: Set<string>;
  /** Tokens of each label's last occurrence over all items. */
  labelLatestTokens: Map<string, Set<string>>;
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

function buildTranscriptPart(items: readonly TranscriptItem[]): TranscriptPart {
  // Records with the same label and summary share one token set (it is only read).
  const byText = new Map<string, Set<string>>();
  const texts = items.map(itemText);
  const tokens = texts.map((text) => {
    let set = byText.get(text);
    if (set === undefined) byText.set(text, (set = tokenSet(text)));
    return set;
  });
  const occurrences = new Map<string, number[]>();
  tokens.forEach((set, position) => {
    for (const t of set) {
      const list = occurrences.get(t);
      if (list) list.push(position);
      else occurrences.set(t, [position]);
    }
  });
  const nDocs = Math.max(1, items.length);
  const goalTokens = new Set<string>();
  let goalItems = 0;
  for (let i = items.length - 1; i >= 0 && goalItems < TAIL_LOOKBACK; i--) {
    const item = items[i]!;
    if ((item.kind !== 'user' && item.kind !== 'assistant') || item.summary == null || item.summary.startsWith(STATE_CARD_MARKER)) continue;
    goalItems++;
    for (const t of tokenSet(item.summary)) goalTokens.add(t);
  }

  const tailParents = new Set<string>();
  for (let i = Math.max(0, items.length - TAIL_LOOKBACK); i < items.length; i++) {
    const parent = items[i]!.parent_uuid;
    if (parent) tailParents.add(parent);
  }

  const labelLatestTokens = new Map<string, Set<string>>();
  items.forEach((item, position) => labelLatestTokens.set(item.label, tokens[position]!));

  const positionOfLine = new Map<number, number>();
  items.forEach((item, position) => positionOfLine.set(item.line_index, position));
  return {
    items,
    texts,
    tokens,
    occurrences,
    nDocs,
    maxIdf: Math.max(1, Math.log(nDocs)),
    goalTokens,
    tailParents,
    labelLatestTokens,
    positionOfLine,
    maxLine: items.length > 0 ? items[items.length - 1]!.line_index : 0,
  };
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
