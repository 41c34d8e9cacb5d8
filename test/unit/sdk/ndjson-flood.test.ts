import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FramingError, NdjsonMessageReader } from '../../../sdk/transport/ndjson.js';

const note = JSON.stringify({ jsonrpc: '2.0', method: '$/progress', params: { done: 1 } }) + '\n';
const answer = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, result: null }) + '\n';

function reader(limit: { count: number; bytes: number }) {
  const stream = new PassThrough();
  const r = new NdjsonMessageReader(stream, { maxNotificationsWithoutAnswer: limit });
  const seen: unknown[] = [];
  const errors: FramingError[] = [];
  r.listen((m) => seen.push(m));
  r.onError((e) => errors.push(e as FramingError));
  return { stream, seen, errors };
}

describe('notifications without an answer', () => {
  it('are refused past the count, as a flood, and nothing after is handed on', () => {
    const { stream, seen, errors } = reader({ count: 3, bytes: 1 << 20 });
    stream.write(note.repeat(5) + answer(1));
    expect(seen).toHaveLength(3);
    expect(errors.map((e) => [e.reason, e.message])).toEqual([['flood', 'more than 3 notifications without an answer']]);
  });

  it('are counted afresh after each answer, and a request from the peer is not one', () => {
    const { stream, seen, errors } = reader({ count: 3, bytes: 1 << 20 });
    const request = JSON.stringify({ jsonrpc: '2.0', id: 'ask', method: 'host/score', params: {} }) + '\n';
    stream.write(note.repeat(3) + answer(1) + note.repeat(3) + request + answer(2) + note.repeat(3));
    expect(errors).toEqual([]);
    expect(seen).toHaveLength(12);
  });

  it('are refused past the bytes as well', () => {
    const { stream, errors } = reader({ count: 1000, bytes: note.length * 2 });
    stream.write(note.repeat(3));
    expect(errors.map((e) => e.message)).toEqual([`more than ${note.length * 2} bytes of notifications without an answer`]);
  });
});
