/**
 * `$/items` lines as the transport lays them out and reads them back: offers in pieces put
 * together again, pieces that cannot be placed dropped with their offer, the text of a large array
 * kept so it is never encoded twice, and listeners told about a line before it is parsed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Message } from 'vscode-jsonrpc/node';
import { describe, expect, it, vi } from 'vitest';
import { Methods } from '../../sdk/protocol.js';
import { OFFER_PIECE_ITEMS, offerParams, type ItemsOnTheWay } from '../../sdk/transport/items-lines.js';
import { FramingError, NdjsonMessageReader, serializeMessage, type NdjsonReaderOptions } from '../../sdk/transport/ndjson.js';

const items = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ line_index: from + i, kind: 'user', est_tokens: 1, label: 'user', elidable_bytes: null }));
const line = (params: object) => JSON.stringify({ jsonrpc: '2.0', method: Methods.items, params }) + '\n';

/** A reader over a stream, with everything it delivered and the errors it raised. */
function reader(options: NdjsonReaderOptions = {}) {
  const stream = new PassThrough();
  const r = new NdjsonMessageReader(stream, options);
  const delivered: Message[] = [];
  const errors: Error[] = [];
  r.onError((e) => errors.push(e));
  r.listen((m) => delivered.push(m));
  const offers = () => delivered.filter((m) => (m as { method?: string }).method === Methods.items).map((m) => (m as unknown as { params: { items_id: string; items: unknown[] } }).params);
  return { stream, r, delivered, errors, offers, send: (text: string) => stream.write(text) };
}

describe('offers in pieces', () => {
  it('splits a long array into numbered pieces and leaves a short one whole', () => {
    expect([...offerParams('a', items(10))]).toEqual([{ items_id: 'a', items: items(10) }]);
    const pieces = [...offerParams('b', items(2 * OFFER_PIECE_ITEMS + 5))];
    expect(pieces.map((p) => [p.part, p.more, (p.items as unknown[]).length])).toEqual([
      [0, true, OFFER_PIECE_ITEMS],
      [1, true, OFFER_PIECE_ITEMS],
      [2, false, 5],
    ]);
    expect(pieces.flatMap((p) => p.items as unknown[])).toEqual(items(2 * OFFER_PIECE_ITEMS + 5));
  });

  it('delivers the pieces of an offer as one whole offer, once the last arrives', () => {
    const { send, offers } = reader();
    const all = items(2 * OFFER_PIECE_ITEMS + 5);
    const pieces = [...offerParams('r-1', all)];
    send(line(pieces[0]!));
    send(line(pieces[1]!));
    expect(offers()).toEqual([]);
    send(line(pieces[2]!));
    expect(offers()).toEqual([{ items_id: 'r-1', items: all }]);
  });

  it('keeps the text of the pieces, and writes the whole array from it; a plugin keeps none', () => {
    const all = items(OFFER_PIECE_ITEMS + 1500);
    // Spaced JSON no encoder of ours writes: only kept text can come out spaced.
    const spaced = (list: unknown[]) => '[' + list.map((i) => JSON.stringify(i)).join(', ') + ']';
    const first = all.slice(0, OFFER_PIECE_ITEMS);
    const rest = all.slice(OFFER_PIECE_ITEMS);
    const readBack = (options: NdjsonReaderOptions) => {
      const { send, offers } = reader(options);
      send(`{"jsonrpc":"2.0","method":"$/items","params":{"items_id":"r-1","part":0,"more":true,"items":${spaced(first)}}}\n`);
      send(`{"jsonrpc":"2.0","method":"$/items","params":{"items_id":"r-1","part":1,"more":false,"items":${spaced(rest)}}}\n`);
      const [offer] = offers();
      return serializeMessage({ jsonrpc: '2.0', id: 1, method: 'strategy/propose', params: { items: offer!.items } } as never);
    };
    const written = readBack({});
    expect(written).toContain(spaced(first).slice(1, -1) + ',' + spaced(rest).slice(1, -1));
    expect(JSON.parse(written).params.items).toEqual(all);
    // A plugin never sends received items on, so it keeps no text: the array is encoded afresh.
    const encoded = readBack({ keepOfferText: false });
    expect(encoded).not.toContain(', ');
    expect(JSON.parse(encoded).params.items).toEqual(all);
    // The same for an offer in one line.
    const { send, offers } = reader({ keepOfferText: false });
    send(`{"jsonrpc":"2.0","method":"$/items","params":{"items_id":"r-2","items":${spaced(rest)}}}\n`);
    expect(serializeMessage({ jsonrpc: '2.0', id: 2, method: 'm', params: { items: offers()[0]!.items } } as never)).not.toContain(', ');
  });

  it('drops an offer whose pieces come out of order, and reads the next one', () => {
    const { send, offers, errors } = reader();
    const pieces = [...offerParams('r-1', items(2 * OFFER_PIECE_ITEMS + 5))];
    send(line(pieces[0]!));
    send(line(pieces[2]!));
    send(line(pieces[1]!));
    expect(offers()).toEqual([]);
    send(line({ items_id: 'r-2', items: items(3) }));
    expect(offers()).toEqual([{ items_id: 'r-2', items: items(3) }]);
    expect(errors).toEqual([]);
  });

  it('drops a piece with any other member, and with it its offer', () => {
    const { send, offers } = reader();
    send(line({ items_id: 'r-1', part: 0, more: true, items: items(3) }));
    send(line({ items_id: 'r-1', part: 1, more: false, items: items(3), note: 'x' }));
    expect(offers()).toEqual([]);
  });

  it('drops an offer whose pieces add up to more than 100,000 items', () => {
    const { send, offers } = reader({ maxMessageBytes: 1024 * 1024 * 1024 });
    const piece = items(OFFER_PIECE_ITEMS);
    const parts = Math.ceil(100_001 / OFFER_PIECE_ITEMS);
    for (let part = 0; part < parts; part += 1) send(line({ items_id: 'r-1', part, more: part < parts - 1, items: piece }));
    expect(offers()).toEqual([]);
  });

  it('counts an offer in pieces as one message against the size limit', () => {
    const { send, offers, errors } = reader({ maxMessageBytes: 64 * 1024 });
    const piece = items(400);
    expect(line({ items_id: 'r-1', part: 0, more: true, items: piece }).length).toBeLessThan(64 * 1024);
    for (let part = 0; part < 4; part += 1) send(line({ items_id: 'r-1', part, more: true, items: piece }));
    expect(offers()).toEqual([]);
    expect(errors[0]).toBeInstanceOf(FramingError);
    expect((errors[0] as FramingError).reason).toBe('overflow');
  });
});

describe('lines told about before they are parsed', () => {
  it('tells a listener a whole line was exactly its array, whether or not the reader keeps the text', async () => {
    for (const keepOfferText of [true, false]) {
      const { send, r } = reader({ keepOfferText });
      const heard: ItemsOnTheWay[] = [];
      r.onItemsOnTheWay((offer) => {
        heard.push(offer);
      });
      const all = items(OFFER_PIECE_ITEMS - 1);
      send(line({ items_id: 'w-1', items: all }));
      expect(heard).toHaveLength(1);
      expect(await heard[0]!.parsed, String(keepOfferText)).toEqual(all);
    }
  });

  it('announces each large piece with its text, then the piece, then the whole array put together', async () => {
    const { send, r, offers } = reader();
    const heard: ItemsOnTheWay[] = [];
    r.onItemsOnTheWay((offer) => {
      heard.push(offer);
    });
    const all = items(2 * OFFER_PIECE_ITEMS + 5);
    for (const piece of offerParams('r-1', all)) send(line(piece));
    expect(heard.map((h) => [h.itemsId, h.part, h.more])).toEqual([
      ['r-1', 0, true],
      ['r-1', 1, true],
      ['r-1', 2, false],
    ]);
    expect(JSON.parse(heard[0]!.bytes.toString('utf8'))).toEqual(all.slice(0, OFFER_PIECE_ITEMS));
    expect(await heard[0]!.parsed).toEqual(all.slice(0, OFFER_PIECE_ITEMS));
    // The last one settles with the very array the offer is delivered with.
    expect(await heard[2]!.parsed).toBe(offers()[0]!.items);
  });

  it('settles a line that is not JSON with nothing; a plugin drops it and goes on, a host fails the stream', async () => {
    const broken = `{"jsonrpc":"2.0","method":"$/items","params":{"items_id":"r-1","items":[${'{"line_index":0,'.repeat(6000)}}}\n`;
    const plugin = reader({ dropBrokenOffers: true });
    const heard: ItemsOnTheWay[] = [];
    plugin.r.onItemsOnTheWay((offer) => {
      heard.push(offer);
    });
    plugin.send(broken);
    plugin.send(line({ items_id: 'r-2', items: items(2) }));
    expect(await heard[0]!.parsed).toBeUndefined();
    expect(plugin.offers()).toEqual([{ items_id: 'r-2', items: items(2) }]);
    expect(plugin.errors).toEqual([]);
    const host = reader();
    host.send(broken);
    expect((host.errors[0] as FramingError).reason).toBe('not_json');
  });
});

describe('a line held while its text is passed on', () => {
  const bigOffer = (id: string) => line({ items_id: id, items: items(2000) });

  it('is parsed once the listener\'s write is done, and what came after it waits its turn', async () => {
    const { send, r, delivered } = reader();
    let written!: () => void;
    r.onItemsOnTheWay(() => new Promise<void>((resolve) => (written = resolve)));
    send(bigOffer('r-1') + JSON.stringify({ jsonrpc: '2.0', id: 1, result: { items_ref: 'r-1' } }) + '\n');
    send(JSON.stringify({ jsonrpc: '2.0', method: 'x' }) + '\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(delivered).toEqual([]);
    written();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(delivered.map((m) => (m as { method?: string; id?: number }).method ?? (m as { id?: number }).id)).toEqual([Methods.items, 1, 'x']);
  });

  it('is parsed anyway when the write does not finish soon: a peer that does not read stalls nothing', async () => {
    const { send, r, offers } = reader();
    r.onItemsOnTheWay(() => new Promise<void>(() => undefined));
    send(bigOffer('r-1'));
    expect(offers()).toEqual([]);
    await vi.waitFor(() => expect(offers()).toHaveLength(1), { timeout: 2000 });
  });

  it('reports the end of the stream only after the held line and what followed it', async () => {
    const { stream, r, delivered } = reader();
    let written!: () => void;
    r.onItemsOnTheWay(() => new Promise<void>((resolve) => (written = resolve)));
    let closedWith = -1;
    r.onClose(() => (closedWith = delivered.length));
    stream.end(bigOffer('r-1') + JSON.stringify({ jsonrpc: '2.0', method: 'x' }) + '\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closedWith).toBe(-1);
    written();
    await vi.waitFor(() => expect(closedWith).toBe(2));
  });
});

describe('the schema of offers', () => {
  it('gives an offer\'s items exactly the rules a transcript gives its items, so items checked in the offer need no second check', () => {
    const schemas = join(__dirname, '..', '..', 'schemas', 'v1');
    const rpc = JSON.parse(readFileSync(join(schemas, 'rpc.schema.json'), 'utf8'));
    const transcript = JSON.parse(readFileSync(join(schemas, 'transcript.schema.json'), 'utf8'));
    const inOffer = rpc.$defs.ItemsOfferParams.properties.items;
    const inTranscript = transcript.$defs.Transcript.properties.items;
    expect({ ...inOffer, items: { $ref: inOffer.items.$ref.replace('transcript.schema.json', '') } }).toEqual(inTranscript);
  });
});
