import { describe, expect, it } from 'vitest';
import { looseTableWarnings } from '../../../kernel/watch/loose-tables.js';

const ID = '01a08d7c-7b1e-4c55-9f3e-2b1f3a4c5d6e';

describe('looseTableWarnings', () => {
  it('says a loose session table once, not every pass, and again only after it was gone', () => {
    const said = new Set<string>();
    const pass = (found: Record<string, string[]>) => looseTableWarnings(said, new Map(Object.entries(found)));
    expect(pass({ '01a08d7c': [ID] })).toEqual([`[sessions."01a08d7c"] is not applied: a session table is keyed by the full session id (${ID})`]);
    expect(pass({ '01a08d7c': [ID] })).toEqual([]);
    expect(pass({ '01a08d7c': [ID], '01A0': [ID] })).toEqual([`[sessions."01A0"] is not applied: a session table is keyed by the full session id (${ID})`]);
    // Fixed, then broken again: said again.
    expect(pass({ '01A0': [ID] })).toEqual([]);
    expect(pass({ '01a08d7c': [ID], '01A0': [ID] })).toEqual([expect.stringMatching(/^\[sessions\."01a08d7c"\]/)]);
  });

  it('names a few of the sessions a short prefix matches, and counts the rest', () => {
    const ids = ['0a', '0b', '0c', '0d', '0e'].map((p) => `${p}${ID.slice(2)}`);
    expect(looseTableWarnings(new Set(), new Map([['0', ids]]))).toEqual([`[sessions."0"] is not applied: a session table is keyed by the full session id (${ids.slice(0, 3).join(', ')} and 2 more)`]);
  });
});
