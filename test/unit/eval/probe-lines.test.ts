import { describe, expect, it, vi } from 'vitest';
import { ProbeLines } from '../../../kernel/eval/probe-lines.js';
import type { Probe } from '../../../kernel/eval/probes.js';

/** A small deterministic generator, so a failure reproduces. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ['src/app.ts', 'ENOENT', 'npm test', 'fix the parser', 'error: timeout', 'resume_token', 'lib/io.rs', 'exit 1'];

describe('ProbeLines', () => {
  it('recalls a probe exactly when the candidate holds its bytes, however the candidate changed the source', () => {
    for (let seed = 1; seed <= 40; seed += 1) {
      const rnd = random(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
      // Tag <tN> sits on lines 2N and 2N+1 (next to each other) and 100+N, and nowhere else: whether
      // a candidate kept one of the lines that do not hold its probe decides.
      const tag = (i: number) => (i < 100 ? i >> 1 : i - 100);
      const lines = Array.from({ length: 150 }, (_, i) => `{"i":${i},"text":"${pick(WORDS)} and ${pick(WORDS)} <t${tag(i)}>"}`);
      // Odd lines stand for tool results a render elides; even lines change only now and then.
      const editable = (line: number) => line % 2 === 1;
      const source = Buffer.from(lines.join('\n') + '\n');
      const probes: Probe[] = WORDS.map((w): Probe => ({ kind: 'path', line_index: lines.findIndex((l) => l.includes(w)), bytes: Buffer.from(w) })).filter((p) => p.line_index >= 0);
      probes.push({ kind: 'identifier', line_index: 3, bytes: Buffer.from('"i":3,') });
      for (let t = 0; t < 50; t += 3) probes.push({ kind: 'identifier', line_index: [2 * t, 2 * t + 1, 100 + t][Math.floor(rnd() * 3)]!, bytes: Buffer.from(`<t${t}>`) });
      // On every line: more lines hold it than are ever listed, so candidates are searched for it.
      probes.push({ kind: 'identifier', line_index: 0, bytes: Buffer.from(' and ') });
      const probeLines = new ProbeLines(source, probes);
      for (let round = 0; round < 12; round += 1) {
        // The last round changes every line.
        const every = round === 11;
        const out = lines.map((line, i) => {
          if (editable(i) && (every || rnd() < 0.5)) return `{"i":${i},"text":"[elided]"}`;
          // Now and then another line changes too (as a fork's session id would).
          if (!editable(i) && (every || rnd() < 0.1)) return line.replace(/"text":"[^"]*"/, '"text":"rewritten"');
          return line;
        });
        if (rnd() < 0.5) out.push(`{"card":"${pick(WORDS)}"}`);
        const candidate = Buffer.from(out.join('\n') + '\n');
        const expected = probes.map((p) => candidate.indexOf(p.bytes) !== -1);
        expect(probeLines.recalled(candidate), `seed ${seed} round ${round}`).toEqual(expected);
      }
    }
  });

  it('reads a candidate buffer once, however many rows share it', () => {
    const source = Buffer.from('{"a":"src/app.ts"}\n{"b":"ENOENT"}\n');
    const probes: Probe[] = [
      { kind: 'path', line_index: 0, bytes: Buffer.from('src/app.ts') },
      { kind: 'error_signature', line_index: 1, bytes: Buffer.from('ENOENT') },
    ];
    const lines = new ProbeLines(source, probes);
    const candidate = Buffer.from('{"a":"src/app.ts"}\n{"b":"[elided]"}\n');
    const search = vi.spyOn(candidate, 'indexOf');
    const first = lines.recalled(candidate);
    expect(first).toEqual([true, false]);
    const reads = search.mock.calls.length;
    expect(reads).toBeGreaterThan(0);
    // A caller changing its copy changes nothing for the next row.
    first[1] = true;
    expect(lines.recalled(candidate)).toEqual([true, false]);
    expect(search.mock.calls.length).toBe(reads);
    // Equal bytes in another buffer are searched on their own.
    expect(lines.recalled(Buffer.from(candidate))).toEqual([true, false]);
  });
});
