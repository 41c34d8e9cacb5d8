import { describe, expect, it } from 'vitest';
import { rawMemberSpan, rawMemberStart, rawStringValueSpans, rawValueSpanAt, skipRawString, skipRawValue, spliceRawSpans } from '../../../sdk/raw-json.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const valueOf = (line: string, key: string, which?: 'first' | 'last') => {
  const b = bytes(line);
  const span = rawMemberSpan(b, 0, b.length, key, which);
  return span === null ? null : b.toString('utf8', span.start, span.end);
};

describe('raw JSON member spans', () => {
  it('finds a member whatever comes before it, as JSON.parse reads the line', () => {
    const line = '{"a":{"b":[1,{"c":"}]"}],"d":"x\\"y"},"e" : [ "\\\\" , {"f":null} ] ,"g":-1.5e3,"h":true}';
    for (const key of ['a', 'e', 'g', 'h']) expect(JSON.parse(valueOf(line, key)!)).toEqual(JSON.parse(line)[key]);
    expect(valueOf(line, 'b')).toBeNull();
    expect(valueOf(line, 'missing')).toBeNull();
  });

  it('takes the last of a repeated key by default, the first when asked', () => {
    const line = '{"k":1,"x":{"k":2},"k":3}';
    expect(valueOf(line, 'k')).toBe('3');
    expect(valueOf(line, 'k', 'first')).toBe('1');
    const b = bytes(line);
    expect(b.toString('utf8', rawMemberStart(b, 0, b.length, 'x'))).toBe('{"k":2},"k":3}');
  });

  it('steps over strings of any length with escaped quotes and backslashes at every position', () => {
    for (const length of [0, 1, 62, 63, 64, 65, 66, 127, 128, 300]) {
      for (const tail of ['\\"', '\\\\', 'é', '\\\\\\"']) {
        const text = 'z'.repeat(length) + tail;
        const line = `{"s":"${text}","n":7}`;
        expect(valueOf(line, 'n')).toBe('7');
        expect(JSON.parse(valueOf(line, 's')!)).toBe(JSON.parse(line).s);
      }
    }
  });

  it('says null, never throws, for bytes it cannot follow', () => {
    for (const line of ['', '[]', '{"a":', '{"a":"unterminated}', '{"a" 1}', '{"a":1 "b":2}', '{"a":{"b":1}', '{a:1}']) {
      expect(valueOf(line, 'a')).toBeNull();
    }
  });

  it('skips deeply nested values without recursion', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const b = bytes(`{"d":${deep},"after":1}`);
    expect(skipRawValue(b, 5, b.length)).toBe(5 + deep.length);
    expect(valueOf(b.toString(), 'after')).toBe('1');
  });

  it('ends a string exactly at its closing quote', () => {
    const b = bytes('"a\\\\"tail');
    expect(skipRawString(b, 0, b.length)).toBe(5);
  });
});

describe('raw JSON value paths', () => {
  const whole = (b: Buffer) => ({ start: 0, end: b.length });
  const at = (line: string, path: (string | number)[]) => {
    const b = bytes(line);
    const span = rawValueSpanAt(b, path, whole(b));
    return span === null ? null : b.toString('utf8', span.start, span.end);
  };

  it('finds nested values through objects and arrays, whatever the spacing', () => {
    const line = '{"a": {"b" : [1, {"c":"x\\"y"}, [2,3]], "d": null}, "e":true}';
    expect(at(line, ['a', 'b', 1, 'c'])).toBe('"x\\"y"');
    expect(at(line, ['a', 'b', 2])).toBe('[2,3]');
    expect(at(line, ['a', 'd'])).toBe('null');
    expect(at(line, ['e'])).toBe('true');
    expect(at(line, ['a', 'b', 5])).toBeNull();
    expect(at(line, ['zz'])).toBeNull();
    expect(at(line, ['e', 'f'])).toBeNull();
  });

  it('decodes escaped keys and lets the last repeated key win, as JSON.parse does', () => {
    const line = '{"k":1,"\\u006b":2,"n":{"k":3},"\\u00e9t\\u00e9":"summer","hiver":"winter","\u00e9t\u00e9":"july"}';
    expect(at(line, ['k'])).toBe(String(JSON.parse(line).k));
    expect(at(line, ['n', 'k'])).toBe('3');
    expect(at(line, ['été'])).toBe('"july"');
    expect(JSON.parse(line)['été']).toBe('july');
    expect(at(line, ['hiver'])).toBe('"winter"');
  });

  it('starts from a given value', () => {
    const b = bytes('{"message":{"content":[{"content":"payload"}]},"message":{"content":[{"content":"later"}]}}');
    const first = rawMemberSpan(b, 0, b.length, 'message', 'first')!;
    const span = rawValueSpanAt(b, ['content', 0, 'content'], first)!;
    expect(b.toString('utf8', span.start, span.end)).toBe('"payload"');
    expect(at(b.toString(), ['message', 'content', 0, 'content'])).toBe('"later"');
  });

  it('says null, never throws, on bytes it cannot follow', () => {
    expect(at('{"a": [1, 2', ['a', 1])).toBeNull();
    expect(at('not json', ['a'])).toBeNull();
    expect(at('{"\\u12":1}', ['a'])).toBeNull();
  });

  it('lists every string value at any depth, not keys, and nothing for other values', () => {
    const b = bytes('{"toolUseResult":{"stdout":"out \\"x\\"","n":3,"file":{"content":"c","lines":["a","b"]},"ok":true,"none":null},"k":"v"}');
    const copy = rawMemberSpan(b, 0, b.length, 'toolUseResult')!;
    expect(rawStringValueSpans(b, copy).map((s) => JSON.parse(b.toString('utf8', s.start, s.end)))).toEqual(['out "x"', 'c', 'a', 'b']);
    expect(rawStringValueSpans(b, rawMemberSpan(b, 0, b.length, 'k')!).map((s) => b.toString('utf8', s.start, s.end))).toEqual(['"v"']);
    expect(rawStringValueSpans(bytes('{"a":[1,2'), { start: 0, end: 9 })).toEqual([]);
  });

  it('lists the strings of a deeply nested value in one pass', () => {
    const deep = `${'[{"k":'.repeat(50_000)}"s"${'}]'.repeat(50_000)}`;
    const b = bytes(deep);
    expect(rawStringValueSpans(b, whole(b))).toEqual([{ start: 50_000 * 6, end: 50_000 * 6 + 3 }]);
  });

  it('splices replacements in and leaves every other byte alone', () => {
    const b = bytes('{"sessionId": "old", "x": {"sessionId": "keep"}, "k":"old2"}');
    const first = rawMemberSpan(b, 0, b.length, 'sessionId')!;
    const last = rawMemberSpan(b, 0, b.length, 'k')!;
    const out = Buffer.concat(
      spliceRawSpans(b, [
        { span: last, bytes: bytes('"new2"') },
        { span: first, bytes: bytes('"new"') },
      ]),
    );
    expect(out.toString()).toBe('{"sessionId": "new", "x": {"sessionId": "keep"}, "k":"new2"}');
    expect(() => spliceRawSpans(b, [{ span: first, bytes: bytes('1') }, { span: { start: first.start + 1, end: first.end }, bytes: bytes('2') }])).toThrow(/overlapping/);
  });
});
