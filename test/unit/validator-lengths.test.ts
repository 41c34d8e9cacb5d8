/**
 * The generated validators settle string lengths from .length where that alone decides, and count
 * code points otherwise (scripts/gen.mjs): limits still mean characters, as JSON Schema says.
 */
import { describe, expect, it } from 'vitest';
import { validateTranscriptItem } from '../../schemas/generated/validators.js';

const item = (label: string) => ({ line_index: 0, kind: 'user', est_tokens: 1, label });
const emoji = '\u{1F600}'; // two UTF-16 units, one character

describe('string length limits in the generated validators', () => {
  it('counts characters, not UTF-16 units, against maxLength', () => {
    expect(validateTranscriptItem(item('a'.repeat(128)))).toBe(true);
    expect(validateTranscriptItem(item('a'.repeat(129)))).toBe(false);
    // 256 units but 128 characters: within the limit of 128.
    expect(validateTranscriptItem(item(emoji.repeat(128)))).toBe(true);
    expect(validateTranscriptItem(item(emoji.repeat(129)))).toBe(false);
  });

  it('counts characters against minLength', () => {
    expect(validateTranscriptItem(item(''))).toBe(false);
    expect(validateTranscriptItem(item(emoji))).toBe(true);
    // A lone surrogate is one character too.
    expect(validateTranscriptItem(item('\uD83D'))).toBe(true);
  });
});
