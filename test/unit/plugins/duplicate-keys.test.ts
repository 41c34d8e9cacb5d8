import { describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '../../../kernel/plugins/admission/duplicate-keys.js';

describe('repeated member names in JSON text', () => {
  it('finds a repeated name at the top level and inside nested objects and arrays, with its pointer', () => {
    expect(firstDuplicateKey('{"id":"a","version":"1","id":"b"}')).toEqual({ key: 'id', pointer: '/id' });
    expect(firstDuplicateKey('{"provides":{"strategies":["x"],"strategies":["y"]}}')).toEqual({ key: 'strategies', pointer: '/provides/strategies' });
    expect(firstDuplicateKey('{"a":[1,{"b":2},{"c":1,"c":2}]}')).toEqual({ key: 'c', pointer: '/a/2/c' });
    // The first repeat in document order is named.
    expect(firstDuplicateKey('{"x":{"k":1,"k":2},"x":3}')).toEqual({ key: 'k', pointer: '/x/k' });
  });

  it('compares names as JSON.parse decodes them and escapes them in the pointer', () => {
    expect(firstDuplicateKey('{"id":1,"\\u0069d":2}')).toEqual({ key: 'id', pointer: '/id' });
    expect(firstDuplicateKey('{"files":{"a/b~c":"1","a/b~c":"2"}}')).toEqual({ key: 'a/b~c', pointer: '/files/a~1b~0c' });
    expect(firstDuplicateKey('{"q\\"":1,"q\\"":2}')).toEqual({ key: 'q"', pointer: '/q"' });
  });

  it('does not take the same name in sibling objects, string values or escaped quotes for a repeat', () => {
    expect(firstDuplicateKey('{"a":{"id":1},"b":{"id":2}}')).toBeNull();
    expect(firstDuplicateKey('[{"id":1},{"id":2}]')).toBeNull();
    expect(firstDuplicateKey('{"a":"id","id":"a"}')).toBeNull();
    expect(firstDuplicateKey('{"a":"\\",\\"a\\":","b":"\\\\","c":1}')).toBeNull();
    expect(firstDuplicateKey('{"a":"{\\"a\\":1}","b":"[,]"}')).toBeNull();
    expect(firstDuplicateKey('{"a":1,"A":2,"a ":3}')).toBeNull();
    expect(firstDuplicateKey('{}')).toBeNull();
    expect(firstDuplicateKey('  [ 1 , true , null , -2.5e3 , "x" ]  ')).toBeNull();
  });

  it('follows whitespace between tokens, and nesting deeper than a recursive scan could', () => {
    expect(firstDuplicateKey('{\n  "a" : 1 ,\n\t"a"\r\n:\n2\n}')).toEqual({ key: 'a', pointer: '/a' });
    const depth = 100_000;
    const deep = `${'['.repeat(depth)}{"k":1,"k":2}${']'.repeat(depth)}`;
    expect(firstDuplicateKey(deep)?.key).toBe('k');
  });

  it('agrees with JSON.parse on which texts hold a repeat', () => {
    const samples = ['{"a":1,"b":{"a":2}}', '{"a":1,"b":2,"a":3}', '{"a":[{"b":1,"b":1}]}', '{"\\ud83d\\ude00":1,"😀":2}', '{"":1,"":2}'];
    for (const text of samples) {
      // A repeat is exactly when counting names in the text finds more than JSON.parse kept.
      const keptNames = countMembers(JSON.parse(text));
      const written = (text.match(/"(?:[^"\\]|\\.)*"\s*:/g) ?? []).length;
      expect(firstDuplicateKey(text) !== null, text).toBe(written > keptNames);
    }
  });
});

function countMembers(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countMembers(v), 0);
  if (value && typeof value === 'object') return Object.entries(value).reduce((n, [, v]) => n + 1 + countMembers(v), 0);
  return 0;
}
