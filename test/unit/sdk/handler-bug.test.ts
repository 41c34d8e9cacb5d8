import { ConnectionError, ConnectionErrors, ResponseError } from 'vscode-jsonrpc/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handlerBug } from '../../../sdk/serve.js';

afterEach(() => vi.restoreAllMocks());

describe('handlerBug', () => {
  it("writes a handler's own error to stderr and answers with where it was thrown", () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const answer = handlerBug(new TypeError('x is undefined'));
    expect(write).toHaveBeenCalledTimes(1);
    expect(answer).toBeInstanceOf(ResponseError);
    expect((answer as ResponseError<unknown>).message).toMatch(/^TypeError: x is undefined \(at handler-bug\.test\.ts:\d+\)$/);
  });

  it('answers a thrown value that is not an Error with the value itself, not "without providing any details"', () => {
    const answer = handlerBug('a string rejection');
    expect(answer).toBeInstanceOf(ResponseError);
    expect((answer as ResponseError<unknown>).message).toBe('a handler threw a value that is not an Error: "a string rejection"');
    expect((handlerBug({ reason: 'busy' }) as ResponseError<unknown>).message).toBe('a handler threw a value that is not an Error: {"reason":"busy"}');
    expect((handlerBug(undefined) as ResponseError<unknown>).message).toBe('a handler threw a value that is not an Error: undefined');
  });

  it('stays quiet about a connection the host closed while the handler was still sending', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const closed = new ConnectionError(ConnectionErrors.Disposed, 'Connection is disposed.');
    expect(handlerBug(closed)).toBe(closed);
    expect(write).not.toHaveBeenCalled();
  });
});
