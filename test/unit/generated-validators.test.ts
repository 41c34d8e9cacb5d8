/**
 * scripts/gen.mjs writes the validators in a faster form than ajv would from the published schemas:
 * string lengths settled from .length where that alone decides, and nullable fields as type lists.
 * These pin that they accept and refuse exactly what the schemas say.
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

describe('nullable fields in the generated validators', () => {
  const withField = (field: string, value: unknown) => ({ ...item('user'), [field]: value });

  it('take null or a value of their type within its limits, and nothing else', () => {
    const cases: Array<[string, unknown, boolean]> = [
      ['elidable_bytes', null, true],
      ['elidable_bytes', 0, true],
      ['elidable_bytes', 4000, true],
      ['elidable_bytes', -1, false],
      ['elidable_bytes', 1.5, false],
      ['elidable_bytes', '4000', false],
      ['summary', null, true],
      ['summary', 's'.repeat(512), true],
      ['summary', 's'.repeat(513), false],
      ['summary', 5, false],
      ['record_type', 'assistant', true],
      ['record_type', false, false],
      ['payload_sha256', null, true],
      ['payload_sha256', 'a'.repeat(64), true],
      ['payload_sha256', 'A'.repeat(64), false],
    ];
    for (const [field, value, valid] of cases) expect(validateTranscriptItem(withField(field, value)), `${field} = ${JSON.stringify(value)}`).toBe(valid);
  });

  it('still name the field that is wrong', () => {
    expect(validateTranscriptItem(withField('elidable_bytes', 'many'))).toBe(false);
    expect(validateTranscriptItem.errors?.some((e) => e.instancePath === '/elidable_bytes')).toBe(true);
  });
});
