import { describe, expect, it } from 'vitest';
import { clipUtf8, clipUtf8Bytes } from '../../../sdk/utf8.js';

describe('cutting to a UTF-8 budget', () => {
  it('keeps whole characters of every width', () => {
    expect(clipUtf8('aé€😀', 0)).toBe('');
    expect(clipUtf8('aé€😀', 2)).toBe('a');
    expect(clipUtf8('aé€😀', 6)).toBe('aé€');
    expect(clipUtf8('aé€😀', 9)).toBe('aé€');
    expect(clipUtf8('aé€😀', 10)).toBe('aé€😀');
  });

  it('counts what encoding would give, so text and bytes are cut at the same place', () => {
    const alphabet = ['a', 'é', '€', '😀', '\ud800', 'z'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 500; n += 1) {
      let text = '';
      for (let k = next() % 12; k > 0; k -= 1) text += alphabet[next() % alphabet.length];
      const max = next() % 20;
      const clipped = clipUtf8(text, max);
      const bytes = clipUtf8Bytes(Buffer.from(text, 'utf8'), max);
      expect(Buffer.byteLength(clipped, 'utf8')).toBeLessThanOrEqual(max);
      // A lone surrogate encodes as U+FFFD; past that, both cuts are the same characters.
      expect(Buffer.from(clipped, 'utf8').equals(bytes)).toBe(true);
    }
  });
});
