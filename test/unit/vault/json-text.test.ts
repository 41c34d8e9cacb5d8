import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { countOccurrences, forEachStringValue, isJsonLine, LiteralPrefilter, recordType } from '../../../kernel/vault/json-text.js';

/** Deterministic pseudo-random source, so a failure reproduces. */
function rng(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
}

const SEEDS = ['{"a":1}', '[1,2,{"b":[true,false,null]}]', '"x\\u00e9\\n"', '-0.5e+10', '{"k":"v","n":{"m":[]}}', ' {} ', '[]', '0', '{"a":"\\ud800"}', '{"é":"ü"}', '{"t":"a\\/b\\"c"}'];
const ALPHABET = ['{', '}', '[', ']', ',', ':', '"', '\\', 'u', '0', '1', '9', '-', '+', '.', 'e', 'E', 't', 'r', 'n', 'f', 'a', 'l', 's', ' ', '\t', '\r', '\x01', '\x7f', 'é', '\u2028', 'x', '/', 'b'];

function mutate(r: (n: number) => number): Buffer {
  let s = SEEDS[r(SEEDS.length)]!;
  for (let e = 1 + r(3); e > 0; e--) {
    const at = r(s.length + 1);
    const op = r(3);
    const ch = ALPHABET[r(ALPHABET.length)]!;
    s = op === 0 ? s.slice(0, at) + ch + s.slice(at) : op === 1 ? s.slice(0, at) + s.slice(at + 1) : s.slice(0, at) + ch + s.slice(at + 1);
  }
  const b = Buffer.from(s);
  return r(40) === 0 ? Buffer.concat([b, Buffer.from([0xc3])]) : b;
}

function parses(b: Buffer): boolean {
  if (!isUtf8(b)) return false;
  try {
    JSON.parse(b.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

describe('isJsonLine', () => {
  it('agrees with JSON.parse on 100,000 mutated lines', () => {
    const r = rng(20260131);
    let valid = 0;
    for (let i = 0; i < 100_000; i++) {
      const b = mutate(r);
      const expected = parses(b);
      if (expected) valid += 1;
      if (isJsonLine(b) !== expected) throw new Error(`disagrees on ${JSON.stringify(b.toString('latin1'))}: JSON.parse says ${expected}`);
    }
    // Both outcomes must actually be exercised.
    expect(valid).toBeGreaterThan(5_000);
    expect(valid).toBeLessThan(95_000);
  });

  it('handles deep nesting without recursion', () => {
    expect(isJsonLine(Buffer.from('['.repeat(200_000) + ']'.repeat(200_000)))).toBe(true);
    expect(isJsonLine(Buffer.from('['.repeat(200_000) + ']'.repeat(199_999)))).toBe(false);
  });
});

describe('LiteralPrefilter', () => {
  it('never rules out a line whose decoded strings contain the query', () => {
    const r = rng(7);
    const queries = ['Needle', 'a/b', 'é', 'x"y', 'tab\there', 'u00e9', 'N'];
    const pieces = ['Needle', 'N\\u0065edle', 'a\\/b', 'a/b', '\\u00e9', 'é', 'x\\"y', 'tab\\there', 'u00e9', 'zz', ' ', 'N'];
    for (let i = 0; i < 20_000; i++) {
      let text = '';
      for (let k = r(5); k >= 0; k--) text += pieces[r(pieces.length)];
      const line = Buffer.from(`{"type":"t","v":["${text}"]}`);
      if (!parses(line)) continue;
      const parsed = JSON.parse(line.toString());
      for (const q of queries) {
        let count = 0;
        forEachStringValue(parsed, (v) => {
          count += countOccurrences(v, q);
        });
        if (count > 0 && !new LiteralPrefilter(q).mayMatch(line)) throw new Error(`prefilter ruled out ${line} for ${JSON.stringify(q)}`);
      }
    }
  });

  it('rules out lines that cannot match', () => {
    expect(new LiteralPrefilter('Needle').mayMatch(Buffer.from('{"a":"haystack"}'))).toBe(false);
    expect(new LiteralPrefilter('Needle').mayMatch(Buffer.from('{"a":"hay\\u0073tack"}'))).toBe(true);
  });
});

describe('helpers', () => {
  it('counts non-overlapping occurrences and visits values, not keys', () => {
    expect(countOccurrences('aaaa', 'aa')).toBe(2);
    const seen: string[] = [];
    forEachStringValue({ k: 'v', n: [{ deep: 'w' }, 1, null, 'x'] }, (v) => seen.push(v));
    expect(seen).toEqual(['v', 'w', 'x']);
  });

  it('reads the top-level type or unknown', () => {
    expect(recordType({ type: 'user' })).toBe('user');
    expect(recordType({ type: 3 })).toBe('unknown');
    expect(recordType([{ type: 'user' }])).toBe('unknown');
    expect(recordType(undefined)).toBe('unknown');
  });
});
