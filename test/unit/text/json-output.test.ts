import { describe, expect, it } from 'vitest';
import { terminalSafeJson } from '../../../kernel/text/json-output.js';

// Characters a terminal may act on that JSON.stringify leaves raw: DEL, C1 controls (U+009B is a
// CSI), bidirectional controls, and the line and paragraph separators.
const STEERING = ['\u007f', '\u0085', '\u009b', '\u061c', '\u200e', '\u200f', '\u2028', '\u2029', '\u202a', '\u202e', '\u2066', '\u2069'];

describe('JSON printed on stdout', () => {
  it('writes every character that could steer a terminal as its \\u escape, and parses back to the same value', () => {
    const value = { summary: `deploy ${STEERING.join(' ')} done`, [`key\u202e`]: ['a\u009b[2J', 'back\\slash\\\u009b'] };
    const text = terminalSafeJson(value);
    for (const c of STEERING) expect(text).not.toContain(c);
    expect(text).toContain('deploy \\u007f \\u0085 \\u009b \\u061c \\u200e \\u200f \\u2028 \\u2029 \\u202a \\u202e \\u2066 \\u2069 done');
    expect(text).toContain('"key\\u202e"');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('keeps the layout JSON.stringify gives, indented or not, and ordinary text as it is', () => {
    const value = { ok: true, rows: [{ name: 'naïve — “quoted” 日本', tab: 'a\tb\nc' }], none: null };
    expect(terminalSafeJson(value)).toBe(JSON.stringify(value));
    expect(terminalSafeJson(value, 2)).toBe(JSON.stringify(value, null, 2));
    expect(terminalSafeJson({ cwd: '/srv/\u202eproj' }, 2)).toBe('{\n  "cwd": "/srv/\\u202eproj"\n}');
  });
});
