import { describe, expect, it } from 'vitest';
import type { IndexedCard } from '../../../kernel/vault/card-file.js';
import { cardsInRecord, collectCards } from '../../../kernel/vault/card-index.js';
import { CardScanner } from '../../../kernel/vault/card-scan.js';
import { LineCounter } from '../../../kernel/vault/line-count.js';
import { RecordSplitter } from '../../../kernel/vault/records.js';
import { card, claudeSession, claudeUser, codexCompacted, jsonl } from './helpers.js';

interface Found {
  record_index: number;
  card_sha256: string;
  goal: string | null | undefined;
}

/** The scanner fed `bytes` in pieces of `piece` bytes, its lines read back from `bytes`. */
async function scanned(bytes: Buffer, piece: number): Promise<{ cards: Found[]; recordCount: number }> {
  const scanner = new CardScanner();
  for (let at = 0; at < bytes.length; at += piece) scanner.push(bytes.subarray(at, at + piece));
  const cards = await collectCards(scanner.finish(), async (start, end) => bytes.subarray(start, end));
  return { cards: cards.map((c) => ({ record_index: c.record_index, card_sha256: c.card_sha256, goal: c.digest.goal })), recordCount: scanner.recordCount };
}

/** What recall finds reading the same bytes record by record. */
function readWhole(bytes: Buffer): Found[] {
  const cards: IndexedCard[] = [];
  const splitter = new RecordSplitter(({ index, bytes: line }) => cardsInRecord(index, line, cards));
  splitter.push(bytes, 0);
  splitter.finish();
  return cards.map((c) => ({ record_index: c.record_index, card_sha256: c.card_sha256, goal: c.digest.goal }));
}

function lineCount(bytes: Buffer): number {
  const counter = new LineCounter();
  counter.push(bytes);
  return counter.count;
}

/** Every piece size from 1 byte up puts each marker and each record across every possible boundary. */
async function expectSameAtEveryCut(bytes: Buffer, expected: number, maxPiece = bytes.length): Promise<void> {
  const whole = readWhole(bytes);
  expect(whole).toHaveLength(expected);
  for (let piece = 1; piece <= maxPiece; piece++) {
    const { cards, recordCount } = await scanned(bytes, piece);
    expect(cards, `pieces of ${piece} bytes`).toEqual(whole);
    expect(recordCount).toBe(lineCount(bytes));
  }
}

describe('CardScanner', () => {
  it('finds a card whose marker straddles any buffer boundary, in a record spanning many buffers', async () => {
    const text = jsonl([claudeUser('s', 'plain', 'u0'), claudeUser('s', card({ goal: 'Fix the parser' }), 'card'), claudeUser('s', 'after', 'u2')]);
    await expectSameAtEveryCut(Buffer.from(text), 1);
  });

  it('finds every card of a record holding several, and the records of several cards in one buffer', async () => {
    const twoInOne = codexCompacted(card({ goal: 'first' }), [card({ goal: 'second' }), 'tail']);
    const text = jsonl([twoInOne, claudeUser('s', card({ goal: 'third' }), 'c3'), claudeUser('s', 'x', 'u'), claudeUser('s', card({ goal: 'fourth' }), 'c4')]);
    await expectSameAtEveryCut(Buffer.from(text), 4, 97);
    const { cards } = await scanned(Buffer.from(text), 1 << 20);
    expect(cards.map((c) => [c.record_index, c.goal])).toEqual([
      [0, 'first'],
      [0, 'second'],
      [1, 'third'],
      [3, 'fourth'],
    ]);
  });

  it('counts records as an index line does: CRLF lines, empty lines, and a final line without a newline', async () => {
    const crlf = [claudeUser('s', 'a', 'u0'), claudeUser('s', card({ goal: 'crlf' }), 'c')].map((r) => JSON.stringify(r)).join('\r\n') + '\r\n';
    await expectSameAtEveryCut(Buffer.from(crlf), 1, 64);
    const unterminated = '\n\n' + jsonl([claudeUser('s', card({ goal: 'last' }), 'c')], false);
    await expectSameAtEveryCut(Buffer.from(unterminated), 1, 64);
    expect((await scanned(Buffer.from(unterminated), 7)).cards[0]!.record_index).toBe(2);
  });

  it('parses a record that mentions the marker inside another string, and finds no card there', async () => {
    const text = jsonl([claudeUser('s', `the text ${card({ goal: 'quoted' })} is not a card`, 'u'), { type: 'user', note: 'cards start with [gobstopper state card]' }]);
    const scanner = new CardScanner();
    scanner.push(Buffer.from(text));
    expect(scanner.finish()).toHaveLength(2);
    await expectSameAtEveryCut(Buffer.from(text), 0, 40);
  });

  it('leaves out a card whose marker is spelled with escapes, as recall reading the snapshot does', async () => {
    const escaped = JSON.stringify(claudeUser('s', card({ goal: 'escaped' }), 'c')).replace('[gobstopper', '\\u005bgobstopper');
    const text = Buffer.from(`${escaped}\n${jsonl([claudeUser('s', card({ goal: 'literal' }), 'c2')])}`);
    expect(JSON.parse(escaped).message.content).toBe(card({ goal: 'escaped' }));
    await expectSameAtEveryCut(text, 1, 64);
    expect((await scanned(text, 10)).cards.map((c) => c.goal)).toEqual(['literal']);
  });

  it('a source without the marker gives no records, whatever its size', async () => {
    const bytes = Buffer.from(jsonl(claudeSession('s', 200, 3000)));
    const { cards, recordCount } = await scanned(bytes, 1 << 20);
    expect(cards).toEqual([]);
    expect(recordCount).toBe(600);
  });
});
