import { describe, expect, it } from 'vitest';
import { rewrittenLine, type MemberChange } from '../../../plugins/provider-codex/src/member-splice.js';
import type { JsonObject } from '../../../plugins/provider-codex/src/records.js';

/** What the render does: parse the line, change the record, and ask for the bytes to write. */
function rewrite(text: string, changes: MemberChange[]): string {
  const record = JSON.parse(text) as JsonObject;
  for (const { path, value } of changes) {
    let at: any = record;
    for (const step of path.slice(0, -1)) at = at[step];
    at[path.at(-1)!] = value;
  }
  return rewrittenLine(Buffer.from(text), record, changes, text.endsWith('\r')).toString('utf8');
}

describe('rewrittenLine', () => {
  it('writes only the changed members, leaving numbers, escapes and spacing as written', () => {
    const line = '{"type":"x", "n":18446744073709551615,"payload":{"s":"caf\\u00e9 \\/","list":[{"output":"old"},{"output":"keep"}]}}\r';
    expect(rewrite(line, [{ path: ['payload', 'list', 0, 'output'], value: 'new' }])).toBe(line.replace('"old"', '"new"'));
  });

  it('encodes the record whole when a path is listed twice, a key is written twice, or one change holds another', () => {
    const line = '{"payload":{"id":"a","session_id":"a"}}';
    expect(JSON.parse(rewrite(line, [{ path: ['payload', 'id'], value: 'b' }, { path: ['payload', 'id'], value: 'b' }]))).toEqual({ payload: { id: 'b', session_id: 'a' } });
    const twice = '{"payload":{"id":"a","id":"c"}}';
    expect(rewrite(twice, [{ path: ['payload', 'id'], value: 'b' }])).toBe('{"payload":{"id":"b"}}');
    expect(JSON.parse(rewrite(line, [{ path: ['payload'], value: { id: 'z' } }, { path: ['payload', 'id'], value: 'z' }]))).toEqual({ payload: { id: 'z' } });
  });

  it('encodes the record whole when the member it changed was read under a key written with escapes', () => {
    const line = '{"payload":{"output":"dead","outp\\u0075t":"live"}}';
    const out = rewrite(line, [{ path: ['payload', 'output'], value: 'stub' }]);
    expect(out).toBe('{"payload":{"output":"stub"}}');
  });
});

describe('rewrittenLine and escaped spellings', () => {
  it('encodes the record whole when an escaped spelling of the changed key comes first', () => {
    const line = '{"payload":{"outp\\u0075t":"BIG1","output":"BIG2"}}';
    expect(rewrite(line, [{ path: ['payload', 'output'], value: 'stub' }])).toBe('{"payload":{"output":"stub"}}');
  });
});
