import { describe, expect, it } from 'vitest';
import { findValueSpan, replaceSpans, stringValueSpans, topLevelMembers, topLevelValueSpans } from '../../../plugins/provider-claude-code/src/json-span.js';

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

describe('string values and members', () => {
  it('lists every string value at any depth, not keys, and nothing for other values', () => {
    const text = '{"toolUseResult":{"stdout":"out \\"x\\"","n":3,"file":{"content":"c","lines":["a","b"]},"ok":true,"none":null},"k":"v"}';
    const copy = findValueSpan(text, ['toolUseResult'])!;
    expect(stringValueSpans(text, copy).map((s) => JSON.parse(text.slice(s.start, s.end)))).toEqual(['out "x"', 'c', 'a', 'b']);
    expect(stringValueSpans(text, findValueSpan(text, ['k'])!).map((s) => text.slice(s.start, s.end))).toEqual(['"v"']);
    expect(stringValueSpans('{"a":[1,2', { start: 0, end: 9 })).toEqual([]);
  });

  it('finds a path from a given value, and lists top-level members in order', () => {
    const text = '{"message":{"content":[{"content":"payload"}]},"message":{"content":[{"content":"later"}]},"sessionId":"s"}';
    const members = topLevelMembers(text)!;
    expect(members.map((m) => m.key)).toEqual(['message', 'message', 'sessionId']);
    expect(text.slice(...spanOf(findValueSpan(text, ['content', 0, 'content'], members[0]!.span)!))).toBe('"payload"');
    expect(text.slice(...spanOf(findValueSpan(text, ['message', 'content', 0, 'content'])!))).toBe('"later"');
    expect(topLevelMembers('[1]')).toBeNull();
  });
});

function spanOf(s: { start: number; end: number }): [number, number] {
  return [s.start, s.end];
}
