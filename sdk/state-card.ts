/**
 * The state card's text form. Providers render it into their own record shape; recall and the
 * retention study recognise it by the marker on its first line.
 */
import type { DigestBlock } from '../schemas/generated/types.js';
import { estimateTokens } from './tokens.js';

export const STATE_CARD_MARKER = '[gobstopper state card]';
export const MAX_DIGEST_BYTES = 32_768;
/** Framing characters a rendered card adds beyond its field text (the original's estimate). */
export const STATE_CARD_FRAMING_CHARS = 64;

const LIST_PREFIXES: Array<[keyof DigestBlock, string]> = [
  ['concepts', 'concept: '],
  ['files_touched', 'file: '],
  ['decisions', 'decision: '],
  ['errors', 'error: '],
  ['open_tasks', 'todo: '],
];

/** Field text must stay on one line so the card parses back; newlines become spaces. */
const flat = (s: string) => s.replace(/[\r\n]+/g, ' ');

export function renderStateCard(digest: DigestBlock): string {
  const lines = [STATE_CARD_MARKER];
  if (digest.goal) lines.push(`goal: ${flat(digest.goal)}`);
  if (digest.summary) lines.push(`summary: ${flat(digest.summary)}`);
  for (const [field, prefix] of LIST_PREFIXES) {
    for (const value of (digest[field] as string[] | undefined) ?? []) lines.push(`${prefix}${flat(value)}`);
  }
  if (digest.current_work) lines.push(`current: ${flat(digest.current_work)}`);
  if (digest.context) lines.push(`context: ${flat(digest.context)}`);
  lines.push(`(covers ${digest.covers_items} earlier record${digest.covers_items === 1 ? '' : 's'})`);
  return lines.join('\n');
}

export function isStateCardText(text: string): boolean {
  return text.startsWith(STATE_CARD_MARKER);
}

/** Parses a rendered card back; lines may come in any order. Returns null when the marker is absent. */
export function parseStateCard(text: string): DigestBlock | null {
  if (!isStateCardText(text)) return null;
  const digest: DigestBlock = { covers_items: 0, concepts: [], files_touched: [], decisions: [], errors: [], open_tasks: [] };
  for (const line of text.split('\n').slice(1)) {
    const covers = /^\(covers (\d+) earlier records?\)$/.exec(line);
    if (covers) digest.covers_items = Number(covers[1]);
    else if (line.startsWith('goal: ')) digest.goal = line.slice(6);
    else if (line.startsWith('summary: ')) digest.summary = line.slice(9);
    else if (line.startsWith('current: ')) digest.current_work = line.slice(9);
    else if (line.startsWith('context: ')) digest.context = line.slice(9);
    else {
      for (const [field, prefix] of LIST_PREFIXES) {
        if (line.startsWith(prefix)) (digest[field] as string[]).push(line.slice(prefix.length));
      }
    }
  }
  return digest;
}

/** Byte length of every text field, the quantity MAX_DIGEST_BYTES bounds. */
export function digestTextBytes(digest: DigestBlock): number {
  let total = 0;
  const add = (s: string | null | undefined) => {
    if (s) total += Buffer.byteLength(s, 'utf8');
  };
  add(digest.goal);
  add(digest.summary);
  for (const [field] of LIST_PREFIXES) for (const v of (digest[field] as string[] | undefined) ?? []) add(v);
  add(digest.current_work);
  add(digest.context);
  return total;
}

/** Tokens a card adds to the context: its text plus framing, at four bytes a token. */
export function digestOverheadTokens(digest: DigestBlock): number {
  return estimateTokens(digestTextBytes(digest) + STATE_CARD_FRAMING_CHARS);
}
