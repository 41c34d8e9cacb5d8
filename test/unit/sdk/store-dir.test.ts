import { describe, expect, it } from 'vitest';
import { escapeName } from '../../../sdk/store-dir.js';

describe('escapeName', () => {
  it('keeps the characters of a name and shows only the bytes that are not UTF-8 as \\xNN', () => {
    expect(escapeName(Buffer.concat([Buffer.from('-caf'), Buffer.from([0xe9])]))).toBe('-caf\\xe9');
    // Valid characters of every width stay as they are beside a stray byte.
    expect(escapeName(Buffer.concat([Buffer.from('é€😀'), Buffer.from([0xff]), Buffer.from('.jsonl')]))).toBe('é€😀\\xff.jsonl');
    // A character cut short, an overlong form and an encoded surrogate are bytes, not characters.
    expect(escapeName(Buffer.from([0xe2, 0x82, 0x41]))).toBe('\\xe2\\x82A');
    expect(escapeName(Buffer.from([0xc0, 0xaf]))).toBe('\\xc0\\xaf');
    expect(escapeName(Buffer.from([0xed, 0xa0, 0x80]))).toBe('\\xed\\xa0\\x80');
  });
});
