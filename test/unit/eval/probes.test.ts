import { describe, expect, it } from 'vitest';
import type { TranscriptItem } from '../../../schemas/generated/types.js';
import { extractProbes, scoreProbes, tailStartLine, MAX_PROBES, type ProbeSet } from '../../../kernel/eval/probes.js';
import { buildSession, filler, planElide, renderSessionBytes } from '../../fixtures/eval/session-builder.js';

const live = (n: number): TranscriptItem[] => Array.from({ length: n }, (_, i) => ({ line_index: i, kind: 'assistant', est_tokens: 1, label: 'x' }));

function probesOf(...lines: string[]): Array<[string, string, number]> {
  const set = extractProbes(Buffer.from(lines.join('\n')), live(lines.length));
  return set.probes.map((p) => [p.kind, p.bytes.toString('utf8'), p.line_index]);
}

const texts = (kind: string, found: Array<[string, string, number]>) => found.filter(([k]) => k === kind).map(([, t]) => t);

describe('probe scanners', () => {
  it('paths: anchored (/, ~/, ./) or a dir/name.ext shape, trailing dots trimmed', () => {
    const found = probesOf('see /usr/local/bin/tool and ~/notes/a.md and ./run.sh, also src/main.rs. Not a/b nor x.');
    expect(texts('path', found)).toEqual(['/usr/local/bin/tool', '~/notes/a.md', './run.sh', 'src/main.rs']);
  });

  it('commands: a known word, standalone, then a space and at least two argument characters', () => {
    const found = probesOf('then npm run build --workspace api && git status; /usr/bin/git log; node x; ergo test; python3 -m venv .venv.');
    expect(texts('command', found)).toEqual(['git status', 'npm run build --workspace api', 'python3 -m venv .venv']);
  });

  it('decisions: a case-insensitive key opens a 64-byte window, trailing spaces and dots trimmed', () => {
    const line = 'So we Decided to keep the retry budget at three attempts for every upstream call made.';
    const found = probesOf(line);
    const window = line.slice(line.indexOf('Decided'), line.indexOf('Decided') + 64).replace(/[ .]+$/, '');
    expect(texts('decision', found)).toEqual([window]);
    expect(Buffer.byteLength(window)).toBeLessThanOrEqual(64);
  });

  it('error signatures are case-sensitive: error[, "error: ", FAILED, panicked', () => {
    const found = probesOf('error[E0308]: mismatched types', 'Error: capitalised is not one', 'FAILED tests::login', "thread 'main' panicked at lib");
    expect(texts('error_signature', found)).toEqual(['error[E0308]: mismatched types', 'FAILED tests::login', "panicked at lib"]);
  });

  it('file names: name.ext from the known list only, stem starting alphanumeric', () => {
    const found = probesOf('touch Cargo.toml README.md archive.tar.gz .hidden.json notes.docx x.rs');
    expect(texts('file_name', found)).toEqual(['Cargo.toml', 'README.md', 'x.rs']);
  });

  it('identifiers: 10+ chars with _ or mixed case, not starting with a digit, not a lone quoted token', () => {
    const found = probesOf('call parseConfigFile and MAX_RETRY_COUNT but not "response_item" nor 1st_place_winner nor simplewordlong');
    expect(texts('identifier', found)).toEqual(['parseConfigFile', 'MAX_RETRY_COUNT']);
  });

  it('reads a JSON escape as a separator: its letter never starts a probe', () => {
    // As written in a JSONL line: `\n` is a backslash and an n; `\\` is a literal backslash.
    const line = String.raw`{"text":"see\npart3.ts:2\nsrc/app/main.ts\nnpm test -- login\tMAX_RETRY_COUNT \u00e9parseConfigFile C:\\new.ts"}`;
    const found = probesOf(line);
    expect(texts('file_name', found)).toEqual(['part3.ts', 'main.ts', 'new.ts']);
    expect(texts('path', found)).toEqual(['src/app/main.ts']);
    expect(texts('command', found)).toEqual(['npm test -- login']);
    expect(texts('identifier', found)).toEqual(['MAX_RETRY_COUNT', 'parseConfigFile']);
  });

  it('skips candidates shorter than 3 bytes and cuts windows back to a character boundary', () => {
    const line = 'decided ' + 'é'.repeat(40);
    const [probe] = extractProbes(Buffer.from(line), live(1)).probes;
    expect(probe!.kind).toBe('decision');
    expect(probe!.bytes.length).toBeLessThanOrEqual(64);
    expect(probe!.bytes.toString('utf8')).not.toContain('\uFFFD');
    expect(line.startsWith(probe!.bytes.toString('utf8'))).toBe(true);
  });
});

describe('probe sampling limits', () => {
  it('takes at most 4 probes of one kind from one line', () => {
    const found = probesOf('/a/1 /a/2 /a/3 /a/4 /a/5 /a/6');
    expect(texts('path', found)).toEqual(['/a/1', '/a/2', '/a/3', '/a/4']);
  });

  it('caps each kind (paths at 24) and dedupes by exact text, keeping the first line', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `/srv/p${i}`);
    lines.push('/srv/p0');
    const found = probesOf(...lines);
    expect(texts('path', found)).toHaveLength(24);
    expect(found.filter(([, t]) => t === '/srv/p0')).toEqual([['path', '/srv/p0', 0]]);
  });

  it('merges kinds round-robin up to 64, then sorts by line and kind', () => {
    const lines: string[] = [];
    for (let i = 0; i < 30; i++) {
      lines.push(`/data/d${i}/f git commit -m m${i} decided plan ${i} FAILED case${i} file${i}.ts some_ident_${i}x`);
    }
    const set = extractProbes(Buffer.from(lines.join('\n')), live(lines.length));
    expect(set.probes).toHaveLength(MAX_PROBES);
    const count = (k: string) => set.probes.filter((p) => p.kind === k).length;
    // 100 candidates (24+16+12+16+16+16); ten full rounds take 60, the eleventh stops after four kinds.
    expect([count('path'), count('command'), count('decision'), count('error_signature'), count('file_name'), count('identifier')]).toEqual([11, 11, 11, 11, 10, 10]);
    const order = set.probes.map((p) => p.line_index * 10 + ['path', 'command', 'decision', 'error_signature', 'file_name', 'identifier'].indexOf(p.kind));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('samples only live lines (an item with est_tokens > 0)', () => {
    const items: TranscriptItem[] = [
      { line_index: 0, kind: 'user', est_tokens: 5, label: 'u' },
      { line_index: 1, kind: 'assistant', est_tokens: 0, label: 'dead' },
    ];
    const set = extractProbes(Buffer.from('/live/path/a.rs\n/dead/path/b.rs\n'), items);
    expect(set.probes.map((p) => p.bytes.toString())).toEqual(['/live/path/a.rs', 'a.rs']);
  });
});

describe('protected tail start', () => {
  const items = (elidableLines: number[], last: number): TranscriptItem[] =>
    Array.from({ length: last + 1 }, (_, i) => ({ line_index: i, kind: elidableLines.includes(i) ? 'tool_result' : 'assistant', est_tokens: 10, label: 'x', elidable_bytes: elidableLines.includes(i) ? 400 : null }));

  it('is the line of the oldest still-protected elidable item', () => {
    expect(tailStartLine(items([2, 4, 6, 8], 9), 2)).toBe(6);
    expect(tailStartLine(items([2, 4, 6, 8], 9), 8)).toBe(2);
  });

  it('is the last item line when nothing is protected, and null for an empty transcript', () => {
    expect(tailStartLine(items([2, 4], 9), 0)).toBe(9);
    expect(tailStartLine(items([], 5), 8)).toBe(5);
    expect(tailStartLine([], 8)).toBeNull();
  });

  it('ignores items that are not live', () => {
    const list = items([2, 4, 6], 7);
    list[6]!.est_tokens = 0;
    expect(tailStartLine(list, 1)).toBe(4);
  });
});

describe('scoring a rendered candidate', () => {
  // Planted: stale outputs (turns 0-3) hold a path, an error and a failing test; kept assistant
  // records hold a command, a decision and a path; the protected tail (turns 4-5) holds a panic and a path.
  const session = buildSession({
    goal: 'fix the login flow',
    deadText: '/dead/branch/never_sampled.rs',
    turns: [
      { say: 'reading the config', command: 'cat /srv/app/config/settings.yaml', output: 'error: cannot parse key port at line 4\n' + filler(600) },
      { say: 'we decided to move the port into env', command: 'npm run lint', output: 'FAILED tests/test_login.py::test_redirect\n' + filler(600) },
      { command: 'ls', output: 'see /var/log/app/server.log for details\n' + filler(600) },
      { command: 'ls', output: filler(600) },
      { command: 'ls', output: 'panicked at src/auth/session.rs:42\n' + filler(200) },
      { command: 'ls', output: 'ready: ./scripts/deploy.sh\n' + filler(200) },
    ],
  });
  const probes = extractProbes(session.source, session.transcript.items);
  const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
  const elided = new Set((plan.edits[0] as { line_indexes: number[] }).line_indexes);
  const candidate = renderSessionBytes(session.source, plan.edits);
  const tail = tailStartLine(session.transcript.items, 2);

  const has = (set: ProbeSet, kind: string, text: string) => set.probes.find((p) => p.kind === kind && p.bytes.toString() === text);

  it('samples the planted strings where they were planted and nothing from the dead record', () => {
    expect(elided).toEqual(new Set(session.resultLines.slice(0, 4)));
    expect(has(probes, 'path', '/srv/app/config/settings.yaml')?.line_index).toBe(session.assistantLines[0]);
    expect(has(probes, 'command', 'npm run lint')?.line_index).toBe(session.assistantLines[1]);
    expect(has(probes, 'path', '/var/log/app/server.log')?.line_index).toBe(session.resultLines[2]);
    expect(has(probes, 'path', 'src/auth/session.rs')?.line_index).toBe(session.resultLines[4]);
    expect(has(probes, 'path', './scripts/deploy.sh')?.line_index).toBe(session.resultLines[5]);
    expect(has(probes, 'identifier', 'test_redirect')?.line_index).toBe(session.resultLines[1]);
    expect(probes.probes.some((p) => p.bytes.toString().includes('dead'))).toBe(false);
  });

  it('counts a probe recalled exactly when its record survived, per kind and in total', () => {
    const score = scoreProbes(probes, candidate, tail);
    const lost = probes.probes.filter((p) => elided.has(p.line_index));
    expect(lost.length).toBeGreaterThan(0);
    expect(score.probes_total).toBe(probes.probes.length);
    expect(score.probes_recalled).toBe(probes.probes.length - lost.length);
    expect(score.recall).toBeCloseTo((probes.probes.length - lost.length) / probes.probes.length, 10);
    for (const tally of score.by_kind) {
      const ofKind = probes.probes.filter((p) => p.kind === tally.kind);
      expect(tally).toEqual({ kind: tally.kind, total: ofKind.length, recalled: ofKind.filter((p) => !elided.has(p.line_index)).length });
    }
    expect(score.by_kind.map((k) => k.kind)).toEqual(['path', 'command', 'decision', 'error_signature', 'file_name', 'identifier']);
  });

  it('lists the first 8 missed probes in source order by kind, line, length and short hash, never by text', () => {
    const score = scoreProbes(probes, candidate, tail);
    const lost = probes.probes.filter((p) => elided.has(p.line_index));
    expect(score.missed_probes).toHaveLength(Math.min(8, lost.length));
    expect(score.missed_probes.map((m) => [m.kind, m.line_index, m.bytes])).toEqual(lost.slice(0, 8).map((p) => [p.kind, p.line_index, p.bytes.length]));
    const json = JSON.stringify(score);
    for (const p of probes.probes) expect(json).not.toContain(p.bytes.toString());
    for (const m of score.missed_probes) expect(m.sha256_prefix).toMatch(/^[0-9a-f]{12}$/);
  });

  it('reports the tail intact when the protected outputs survive, and broken when one is lost', () => {
    const score = scoreProbes(probes, candidate, tail);
    expect(tail).toBe(session.resultLines[4]);
    const tailProbes = probes.probes.filter((p) => p.line_index >= tail!);
    expect(score.tail_probes_total).toBe(tailProbes.length);
    expect(score.tail_probes_recalled).toBe(tailProbes.length);
    expect(score.tail_intact).toBe(true);
    const greedy = renderSessionBytes(session.source, [{ op: 'elide', line_indexes: session.resultLines, stub_template: '[gone]' }]);
    const broken = scoreProbes(probes, greedy, tail);
    expect(broken.tail_intact).toBe(false);
    expect(broken.tail_probes_recalled).toBeLessThan(broken.tail_probes_total);
  });

  it('scores an untouched copy as full recall and an empty probe set as 1', () => {
    expect(scoreProbes(probes, session.source, tail).recall).toBe(1);
    expect(scoreProbes({ probes: [] }, Buffer.from('x'), null)).toMatchObject({ probes_total: 0, recall: 1, tail_intact: true });
  });
});

describe('scoring against the source lines that hold each probe', () => {
  const naive = (set: ProbeSet) => ({ probes: set.probes });
  const lines = [
    '{"type":"user","text":"open /srv/app/main.rs and run cargo test --all"}',
    '{"type":"tool","text":"error: mismatched types in src/lib.rs at parse_config"}',
    '{"type":"tool","text":"see /srv/app/main.rs again; run cargo test --all"}',
    '{"type":"assistant","text":"we decided to keep parse_config pure and test it"}',
    '{"type":"tool","text":"FAILED tests/test_io.py::test_roundtrip\r"}',
    '{"type":"tool","text":"ready: ./scripts/deploy.sh and /var/log/app/server.log"}',
  ];
  const source = Buffer.from(lines.join('\n') + '\n');
  const set = extractProbes(source, live(lines.length));
  const swap = (at: number, text: string) => Buffer.from(lines.map((l, i) => (i === at ? text : l)).join('\n') + '\n');
  const candidates: Array<[string, Buffer]> = [
    ['the source itself', source],
    ['one line replaced', swap(1, '{"type":"tool","text":"[elided]"}')],
    ['a line whose probe also sits elsewhere replaced', swap(0, '{"type":"user","text":"[elided]"}')],
    ['a probe moved into an appended card', Buffer.concat([swap(5, '{}'), Buffer.from('{"card":"deploy with ./scripts/deploy.sh"}\n')])],
    ['lines dropped, so indexes shift', Buffer.from(lines.slice(2).join('\n') + '\n')],
    ['no trailing newline', Buffer.from(lines.join('\n'))],
    ['two changed lines that only match if joined', Buffer.from(['{"a":"/srv/app/', 'main.rs"}'].join('\n'))],
    ['unrelated bytes', Buffer.from('nothing to see here')],
    ['empty', Buffer.alloc(0)],
  ];
  it.each(candidates)('%s: the same score as searching the whole candidate', (_name, candidate) => {
    expect(set.lines).toBeDefined();
    expect(scoreProbes(set, candidate, 3)).toEqual(scoreProbes(naive(set), candidate, 3));
  });
});

describe('a probe found on very many lines', () => {
  const many = Array.from({ length: 200 }, (_, i) => `{"text":"step ${i}: cargo build --release in /srv/app/${i % 3}"}`);
  const source = Buffer.from(many.join('\n') + '\n');
  const set = extractProbes(source, live(many.length));
  it.each([
    ['every line kept', source],
    ['every line but the last changed', Buffer.from(many.map((l, i) => (i < 199 ? '{}' : l)).join('\n') + '\n')],
    ['every line changed', Buffer.from(many.map(() => '{}').join('\n') + '\n')],
  ])('%s: the same score as searching the whole candidate', (_name, candidate) => {
    expect(scoreProbes(set, candidate, null)).toEqual(scoreProbes({ probes: set.probes }, candidate, null));
  });
});

describe('probes on a large session', () => {
  it('samples a 10 MiB session and recalls every probe from an untouched copy', () => {
    const lines: string[] = [];
    let bytes = 0;
    let i = 0;
    while (bytes < 10 * 1024 * 1024) {
      const line = JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `run ${i}: ` + filler(2000) + ` /work/src/mod${i % 50}/file${i}.ts` }] } });
      lines.push(line);
      bytes += line.length + 1;
      i++;
    }
    const source = Buffer.from(lines.join('\n') + '\n');
    const set = extractProbes(source, live(lines.length));
    const score = scoreProbes(set, source, lines.length - 8);
    expect(set.probes.length).toBeGreaterThan(0);
    expect(score.recall).toBe(1);
    const elided = Buffer.from(lines.map((l, k) => (k < lines.length - 8 ? '{}' : l)).join('\n') + '\n');
    expect(scoreProbes(set, elided, lines.length - 8)).toEqual(scoreProbes({ probes: set.probes }, elided, lines.length - 8));
  });
});
