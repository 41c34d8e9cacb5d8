/**
 * The metadata-derived state card (`state_card_digest`): built only from labels and bounded
 * summaries, never from payload text. The accumulator form lets a selection loop grow the chosen set
 * and re-read the card in constant time per step, which keeps 100,000-record plans linear.
 */
import type { DigestBlock, TranscriptItem } from '../../schemas/generated/types.js';
import { STATE_CARD_MARKER } from '../state-card.js';
import { clipUtf8 } from '../utf8.js';
import { toolName } from './candidates.js';
import { hasCardErrorMarker, hasOpenTaskMarker } from './markers.js';

/** Each list on the card holds at most this many entries. */
export const CARD_LIST_CAP = 8;
export const CARD_SUMMARY_MAX_BYTES = 120;
/**
 * Per-entry byte cap. Summaries are bounded in characters, not bytes; with this cap the worst card
 * (5 lists of 8, goal, current work, summary, context) stays under the host's 32 KiB digest limit.
 */
export const CARD_ENTRY_MAX_BYTES = 512;

export type CardSection = 'errors' | 'open_tasks' | 'files_touched' | 'decisions';

const isCard = (s: string) => s.startsWith(STATE_CARD_MARKER);

/** Parts of the card that depend on the whole transcript, not on which records are chosen. */
export interface CardContext {
  goal: string | null;
  current_work: string | null;
  context: string;
}

export function cardContext(items: readonly TranscriptItem[], provider: string): CardContext {
  let goal: string | null = null;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    // A prompt outside the live context (before a compaction boundary, on an abandoned branch) is
    // not what the session is about now: the model no longer sees it.
    if (item.kind !== 'user' || item.summary == null || item.est_tokens === 0) continue;
    // Tool-result wrappers and earlier cards start with `<` or the marker; they are not the user's goal.
    if (item.summary.startsWith('<') || isCard(item.summary)) continue;
    goal = item.summary;
    break;
  }
  let current: string | null = null;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind !== 'assistant' || item.est_tokens === 0) continue;
    // Only the newest assistant record counts; an older one would describe finished work.
    if (item.summary != null && !isCard(item.summary)) current = item.summary;
    break;
  }
  return {
    goal: goal === null ? null : clipUtf8(goal, CARD_ENTRY_MAX_BYTES),
    current_work: current === null ? null : clipUtf8(current, CARD_ENTRY_MAX_BYTES),
    context: `provider: ${provider}`,
  };
}

/** The text an item contributes to the card: its summary, else its label. */
export function cardText(item: TranscriptItem): string {
  return item.summary != null && item.summary !== '' ? item.summary : item.label;
}

/** First match wins: errors, open tasks, anything path-like or a tool result, then decisions. */
export function cardSection(item: TranscriptItem, text = cardText(item)): CardSection {
  if (hasCardErrorMarker(text)) return 'errors';
  if (hasOpenTaskMarker(text)) return 'open_tasks';
  if (text.includes('/') || item.kind === 'tool_result') return 'files_touched';
  return 'decisions';
}

interface Entry {
  line: number;
  text: string;
}

/** Keeps the entries with the smallest line indexes: "the first 8 in chosen (line) order". */
class EarliestEntries {
  readonly entries: Entry[] = [];

  /** Adds the entry if it is among the earliest; its text is clipped only then. */
  add(line: number, text: string): void {
    const list = this.entries;
    if (list.length === CARD_LIST_CAP && line >= list[list.length - 1]!.line) return;
    let at = list.length;
    while (at > 0 && list[at - 1]!.line > line) at--;
    list.splice(at, 0, { line, text: clipUtf8(text, CARD_ENTRY_MAX_BYTES) });
    if (list.length > CARD_LIST_CAP) list.pop();
  }
  texts(): string[] {
    return this.entries.map((e) => e.text);
  }
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface CardFacts {
  concept: string;
  text: string;
  section: CardSection;
}

/**
 * What each item adds to a card, by item. Strategies of one process choose among the same
 * transcript's items (the SDK keeps one array per transcript, items-cache.ts, and handlers never
 * change it): `auto` has five of them build cards over mostly the same records, and each used to
 * classify every record again.
 */
const cardFacts = new WeakMap<TranscriptItem, CardFacts>();

function cardFactsOf(item: TranscriptItem): CardFacts {
  let facts = cardFacts.get(item);
  if (facts === undefined) {
    const text = cardText(item);
    facts = { concept: clipUtf8(toolName(item.label), CARD_ENTRY_MAX_BYTES), text, section: cardSection(item, text) };
    cardFacts.set(item, facts);
  }
  return facts;
}

/** Builds the card incrementally as records are chosen; `build()` is O(1) in the chosen count. */
export class DigestAccumulator {
  private readonly sections: Record<CardSection, EarliestEntries> = {
    files_touched: new EarliestEntries(),
    decisions: new EarliestEntries(),
    errors: new EarliestEntries(),
    open_tasks: new EarliestEntries(),
  };
  private readonly seenConcepts = new Set<string>();
  /** The lexicographically smallest distinct tool names: the card shows sorted names, truncated. */
  private readonly firstConcepts: string[] = [];
  private chosen = 0;

  constructor(private readonly context: CardContext) {}

  get count(): number {
    return this.chosen;
  }

  add(item: TranscriptItem): void {
    this.chosen++;
    const { concept, text, section } = cardFactsOf(item);
    if (concept !== '' && !this.seenConcepts.has(concept)) {
      this.seenConcepts.add(concept);
      const list = this.firstConcepts;
      if (list.length < CARD_LIST_CAP || byCodeUnit(concept, list[list.length - 1]!) < 0) {
        list.push(concept);
        list.sort(byCodeUnit);
        if (list.length > CARD_LIST_CAP) list.pop();
      }
    }
    this.sections[section].add(item.line_index, text);
  }

  build(): DigestBlock {
    const { goal, current_work, context } = this.context;
    return {
      goal,
      summary: goal !== null ? cardSummary(goal) : `gobstopper state card covering ${this.chosen} elided items`,
      concepts: [...this.firstConcepts],
      files_touched: this.sections.files_touched.texts(),
      decisions: this.sections.decisions.texts(),
      errors: this.sections.errors.texts(),
      open_tasks: this.sections.open_tasks.texts(),
      current_work,
      context,
      covers_items: this.chosen,
    };
  }
}

/** The one-line summary: the trimmed goal, cut to 120 bytes with `...` when longer. */
export function cardSummary(goal: string): string {
  const trimmed = goal.trim();
  if (Buffer.byteLength(trimmed, 'utf8') <= CARD_SUMMARY_MAX_BYTES) return trimmed;
  return `${clipUtf8(trimmed, CARD_SUMMARY_MAX_BYTES - 3)}...`;
}

/** `state_card_digest`: the card for a set of chosen line indexes. */
export function stateCardDigest(items: readonly TranscriptItem[], chosenLines: Iterable<number>, provider: string): DigestBlock {
  const byLine = new Map(items.map((item) => [item.line_index, item] as const));
  const acc = new DigestAccumulator(cardContext(items, provider));
  for (const line of chosenLines) {
    const item = byLine.get(line);
    if (item) acc.add(item);
  }
  return acc.build();
}
