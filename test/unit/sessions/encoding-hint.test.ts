import { describe, expect, it } from 'vitest';
import { encodingHint } from '../../../kernel/sessions/encoding-hint.js';

const line = '{"type":"session_meta","payload":{"id":"x"}}\n{"type":"response_item"}\n';

describe('encodingHint', () => {
  it('names a byte-order mark, UTF-16 with or without one, and bare CR line ends', () => {
    expect(encodingHint(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(line)]))).toMatch(/UTF-8 byte-order mark/);
    expect(encodingHint(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(line, 'utf16le')]))).toBe('it is UTF-16 text; the clients write UTF-8');
    expect(encodingHint(Buffer.from(line, 'utf16le'))).toBe('it looks like UTF-16 text; the clients write UTF-8');
    expect(encodingHint(Buffer.from(line, 'utf16le').swap16())).toBe('it looks like UTF-16 text; the clients write UTF-8');
    expect(encodingHint(Buffer.from(line.replaceAll('\n', '\r')))).toMatch(/bare carriage return/);
    expect(encodingHint(Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), Buffer.from('{"a"')]))).toBe('it is UTF-32 text; the clients write UTF-8');
  });

  it('names UTF-32 without a mark, either byte order, and tells it from UTF-16', () => {
    const utf32le = Buffer.from([...line].flatMap((c) => [c.charCodeAt(0), 0, 0, 0]));
    expect(encodingHint(utf32le)).toBe('it looks like UTF-32 text; the clients write UTF-8');
    expect(encodingHint(Buffer.from(utf32le).swap32())).toBe('it looks like UTF-32 text; the clients write UTF-8');
    // UTF-8 text, or a JSON line holding a few NULs, is neither.
    expect(encodingHint(Buffer.from(line))).toBeNull();
    expect(encodingHint(Buffer.from('{"a":"\u0000"}\n{"b":1}\n' + 'x'.repeat(60)))).toBeNull();
  });

  it('does not take a CRLF line cut between its \\r and \\n by the read for a bare carriage return', () => {
    expect(encodingHint(Buffer.from(`{"k":"${'x'.repeat(100)}"}\r`), true)).toBeNull();
    // A whole file that ends so has bare CR line ends.
    expect(encodingHint(Buffer.from(`{"k":"${'x'.repeat(100)}"}\r`))).toMatch(/bare carriage return/);
  });

  it('says nothing of JSON lines as the clients write them, CRLF included, or of other binary files', () => {
    expect(encodingHint(Buffer.from(line))).toBeNull();
    expect(encodingHint(Buffer.from(line.replaceAll('\n', '\r\n')))).toBeNull();
    expect(encodingHint(Buffer.alloc(64))).toBeNull();
    expect(encodingHint(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]))).toBeNull();
  });
});
