import { describe, expect, it } from 'vitest';
import { wrapText } from '../../../kernel/text/wrap.js';

describe('prose wrapped to the terminal', () => {
  it('breaks at spaces, keeps the indent and hangs continuation lines', () => {
    const lines = wrapText('  retention: 17 of 18 checks kept at their source (94%), 17 lexically (94%)', 40, '    ');
    expect(lines).toEqual(['  retention: 17 of 18 checks kept at', '      their source (94%), 17 lexically', '      (94%)']);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(40);
  });

  it('leaves a line alone without a width or when it fits, and never splits a long word', () => {
    const long = 'x'.repeat(50);
    expect(wrapText(`a ${long}`, undefined)).toEqual([`a ${long}`]);
    expect(wrapText('short line', 80)).toEqual(['short line']);
    expect(wrapText(`a ${long} b`, 20)).toEqual(['a', `  ${long}`, '  b']);
  });

  it('keeps a run of spaces that aligns a line with the one above it, and drops it only at a break', () => {
    const lines = wrapText('adaptive   trigger 16,000, floor 8,000 (effective trigger 16,000)', 40, ' '.repeat(11));
    expect(lines).toEqual(['adaptive   trigger 16,000, floor 8,000', '           (effective trigger 16,000)']);
    expect(wrapText('key    value    other', 12)).toEqual(['key    value', '  other']);
  });
});
