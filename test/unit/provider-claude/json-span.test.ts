import { describe, expect, it } from 'vitest';
import { findValueSpan, replaceSpans, topLevelValueSpans } from '../../../plugins/provider-claude-code/src/json-span.js';

const at = (s: string, path: (string | number)[]) => {
  const span = findValueSpan(s, path);
  return span === null ? null : s.slice(span.start, span.end);
};

describe('JSON value spans', () => {
  it('finds nested values through objects and arrays, whatever the spacing', () => {
    const s = '{"a": {"b" : [1, {"c":"x\\"y"}, [2,3]], "d": null}, "e":true}';
    expect(at(s, ['a', 'b', 1, 'c'])).toBe('"x\\"y"');
    expect(at(s, ['a', 'b', 2])).toBe('[2,3]');
    expect(at(s, ['a', 'd'])).toBe('null');
    expect(at(s, ['e'])).toBe('true');
    expect(at(s, ['a', 'b', 5])).toBeNull();
    expect(at(s, ['zz'])).toBeNull();
  });

  it('skips strings holding brackets, quotes and escaped backslashes', () => {
    const s = '{"t":"a}]\\\\","u":"{\\"k\\":[1]}","v":[{"w":1}]}';
    expect(at(s, ['u'])).toBe('"{\\"k\\":[1]}"');
    expect(at(s, ['v', 0, 'w'])).toBe('1');
  });

  it('matches escaped keys and lets the last duplicate win, as JSON.parse does', () => {
    const s = '{"k":1,"\\u006b":2,"n":{"k":3}}';
    expect(at(s, ['k'])).toBe('2');
    expect(JSON.parse(s).k).toBe(2);
    expect(topLevelValueSpans(s, 'k').map((x) => s.slice(x.start, x.end))).toEqual(['1', '2']);
  });

  it('returns null on malformed text instead of throwing', () => {
    expect(findValueSpan('{"a": [1, 2', ['a', 1])).toBeNull();
    expect(findValueSpan('not json', ['a'])).toBeNull();
    expect(topLevelValueSpans('[1,2]', 'a')).toEqual([]);
  });

  it('replaces spans and leaves every other character alone', () => {
    const s = '{"sessionId": "old", "x": {"sessionId": "keep"}, "sessionId":"old2"}';
    const out = replaceSpans(
      s,
      topLevelValueSpans(s, 'sessionId').map((span) => ({ span, text: '"new"' })),
    );
    expect(out).toBe('{"sessionId": "new", "x": {"sessionId": "keep"}, "sessionId":"new"}');
  });
});
