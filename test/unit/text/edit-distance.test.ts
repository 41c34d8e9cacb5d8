import { describe, expect, it } from 'vitest';
import { meantNote, nearestName } from '../../../kernel/text/edit-distance.js';

describe('the name probably meant', () => {
  it('names the nearest within about one typo in three', () => {
    expect(nearestName('elid', ['elide', 'scored'])).toBe('elide');
    expect(nearestName('bogus', ['elide', 'scored'])).toBeNull();
  });

  it('takes a name typed in another case for that name', () => {
    expect(meantNote('ELIDE', ['elide', 'scored'])).toBe(' (did you mean elide?)');
    expect(meantNote('Codx', ['claude_code', 'codex'])).toBe(' (did you mean codex?)');
  });
});
