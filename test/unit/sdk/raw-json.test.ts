import { describe, expect, it } from 'vitest';
import { rawMemberSpan, rawMemberStart, skipRawString, skipRawValue } from '../../../sdk/raw-json.js';

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
