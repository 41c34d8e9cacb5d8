import { describe, expect, it } from 'vitest';
import { printableText } from '../../../kernel/text/human.js';

describe('archived text shown to people', () => {
  it('escapes terminal controls and bidirectional overrides, and keeps tabs and ordinary text', () => {
    expect(printableText('\u001b[31mred\u0007')).toBe('\\u001b[31mred\\u0007');
    expect(printableText('a\u202eevil\u202c b\u2066x\u2069 \u200f')).toBe('a\\u202eevil\\u202c b\\u2066x\\u2069 \\u200f');
    expect(printableText('tab\there — “quoted” ünïcode 日本')).toBe('tab\there — “quoted” ünïcode 日本');
  });
});
