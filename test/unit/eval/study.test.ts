import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RetentionManifest } from '../../../schemas/generated/types.js';
import { validateEvalStudyCommandResult, validateRetentionStudyReport } from '../../../schemas/generated/validators.js';
import {
  assertRounds, assertStudySourceSize, bindManifest, classifyCandidate, CLASSIFY_MARKS, mayHoldCandidates, parseManifest, prepareManifest, readManifestFile, manifestJson,
} from '../../../kernel/eval/study-manifest.js';
import { extractSlots, messageShapeSlots } from '../../../kernel/eval/study-slots.js';
import { contentTokens, lexicalCoverage } from '../../../kernel/eval/study-text.js';
import { scoreRetention } from '../../../kernel/eval/study-score.js';
import { sha256Hex } from '../../../kernel/digest.js';
import { auditRetention, retentionCard, runRetentionStudy, type StudyDeps } from '../../../kernel/eval/study-replay.js';
import type { BoundCheck } from '../../../kernel/eval/study-manifest.js';
import { prepareManifestFile, renderStudyLines } from '../../../kernel/eval/study-output.js';
import { candidateSlots, retentionBaseline } from '../../../kernel/eval/applied-retention.js';
import { buildSession, filler, parseSessionBytes, planElide, renderSessionBytes, testPolicy, verifySessionBytes, type BuiltSession } from '../../fixtures/eval/session-builder.js';

const dir = mkdtempSync(join(tmpdir(), 'gob-study-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Planted: a fact and a constraint in the first (elidable) tool output, an open task and a procedure
 * in the second, a fact in a protected output; a constraint and an open task in the goal, a procedure
 * and a fact in assistant text; and a paraphrase of the first fact in a kept assistant record.
 */
function studySession(): BuiltSession {
  return buildSession({
    goal: 'Refactor the billing module.\nNever commit directly to main.\n- [ ] add retry tests',
    turns: [
      { say: 'Plan:\nnpm run test -- billing', command: 'ls', output: 'error: billing total mismatch for invoice 42\nDo not edit generated files in src/gen.\n' + filler(900) },
      { say: 'decision: keep cents as integers', command: 'ls', output: 'todo: migrate the currency table\ngit rebase origin/main\n' + filler(900) },
      { say: 'The invoice total mismatch in billing showed up again.', command: 'ls', output: filler(900) },
      { command: 'ls', output: 'failed to reach the staging database\n' + filler(300) },
      { command: 'ls', output: filler(300) },
    ],
  });
}

const session = studySession();
const manifest = prepareManifest(session.source, session.transcript.items);
const manifestBytes = Buffer.from(manifestJson(manifest));
const [r0, r1, , r3] = session.resultLines;
const [a0, a1] = session.assistantLines;

function deps(): StudyDeps {
  return {
    parse: async (bytes) => parseSessionBytes(bytes),
    proposeElide: async ({ transcript, policy }) => planElide(transcript, policy),
    render: async (bytes, edits) => renderSessionBytes(bytes, edits),
    verify: async (bytes) => verifySessionBytes(bytes),
  };
}

describe('heuristic manifest preparation', () => {
  it('skips only texts none of whose lines would be classified', () => {
    // Pieces near the marks: other cases, letters that lowercase oddly, blanks of every kind,
    // dashes and backticks before a start, marks cut by a line break.
    const pieces = ['never ', 'NEVER ', 'must not ', 'Do Not ', 'only if ', 'ONLY İF ', 'ı', 'K', 'ſ', '- [ ]', '- [x]', 'todo:', 'TODO:', 'pending:', 'error:', 'Decision:', 'failed',
      'FAILED', 'cargo ', 'NPM ', 'bun ', 'pytest ', 'python3 ', 'git ', 'run `', '- ', '`', ' ', '\t', '\u00a0', '\ufeff', '\r', '\n', '\n', 'x', 'note', 'ever', 'do', ' not'];
    let seed = 11;
    const next = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    let classified = 0;
    for (let round = 0; round < 5000; round += 1) {
      const text = Array.from({ length: 1 + next(8) }, () => pieces[next(pieces.length)]).join('');
      const lines = text.split(/(?<=\n)/).map((line) => line.trim());
      const any = lines.some((line) => line !== '' && classifyCandidate(line) !== null);
      if (any) {
        classified += 1;
        expect(mayHoldCandidates(text), JSON.stringify(text)).toBe(true);
      }
    }
    // The generator reaches both sides.
    expect(classified).toBeGreaterThan(500);
    expect(mayHoldCandidates('plain output\nwith nothing to keep\n')).toBe(false);
  });

  it('keeps every mark one the case-blind prefilter can stand for', () => {
    // The Kelvin sign is the one character that lowercases to a lone ASCII letter (k); a mark with a
    // k, or outside ASCII, could be matched by toLowerCase where the prefilter does not look.
    for (const mark of CLASSIFY_MARKS) {
      expect(mark, mark).toMatch(/^[\x20-\x7e]+$/);
      expect(mark.includes('k'), mark).toBe(false);
      expect(mayHoldCandidates(mark), mark).toBe(true);
      expect(mayHoldCandidates(mark.toUpperCase()), mark).toBe(true);
    }
    for (let code = 0x80; code <= 0x10ffff; code += 1) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const lower = String.fromCodePoint(code).toLowerCase();
      if (/^[\x00-\x7f]+$/.test(lower)) expect(lower).toBe('k');
    }
  });

  it('classifies lines: constraint, open task, procedure, fact, first match wins', () => {
    expect(classifyCandidate('Never push on Fridays')).toBe('constraint');
    expect(classifyCandidate('todo: never skip tests')).toBe('constraint');
    expect(classifyCandidate('- [ ] write docs')).toBe('open_task');
    expect(classifyCandidate('pending: review')).toBe('open_task');
    expect(classifyCandidate('- `git push`')).toBe('procedure');
    expect(classifyCandidate('run `make check` first')).toBe('procedure');
    expect(classifyCandidate('Failed: timeout')).toBe('fact');
    expect(classifyCandidate('decision: use sqlite')).toBe('fact');
    expect(classifyCandidate('just prose')).toBeNull();
  });

  it('takes elidable records first, then the rest in source order, binding each span by pointer and hash', () => {
    expect(manifest.schema).toBe('gobstopper-retention-v1');
    expect(manifest.label_source).toBe('heuristic');
    expect(manifest.source_sha256).toBe(sha256Hex(session.source));
    expect(manifest.checks.map((c) => [c.id, c.kind, c.record_index, c.pointer])).toEqual([
      ['check-0', 'fact', r0, '/message/content/0/content'],
      ['check-1', 'constraint', r0, '/message/content/0/content'],
      ['check-2', 'open_task', r1, '/message/content/0/content'],
      ['check-3', 'procedure', r1, '/message/content/0/content'],
      ['check-4', 'fact', r3, '/message/content/0/content'],
      ['check-5', 'constraint', 0, '/message/content'],
      ['check-6', 'open_task', 0, '/message/content'],
      ['check-7', 'procedure', a0, '/message/content/0/text'],
      ['check-8', 'fact', a1, '/message/content/0/text'],
    ]);
    const goal = 'Refactor the billing module.\nNever commit directly to main.\n- [ ] add retry tests';
    const c5 = manifest.checks[5]!;
    expect(Buffer.from(goal).subarray(c5.start_byte, c5.end_byte).toString()).toBe('Never commit directly to main.');
    expect(c5.sha256).toBe(sha256Hex('Never commit directly to main.'));
  });

  it('holds no transcript text', () => {
    const json = manifestJson(manifest);
    for (const planted of ['billing', 'Never commit', 'currency', 'git rebase', 'staging', 'cents']) expect(json).not.toContain(planted);
  });

  it('keeps at most 16 candidates per kind and each text once', () => {
    const many = buildSession({ goal: 'g', turns: [{ command: 'ls', output: Array.from({ length: 40 }, (_, i) => `todo: item ${i % 30}`).join('\n') }, { command: 'ls', output: 'x' }] });
    const m = prepareManifest(many.source, many.transcript.items);
    expect(m.checks.filter((c) => c.kind === 'open_task')).toHaveLength(16);
    expect(new Set(m.checks.map((c) => c.sha256)).size).toBe(m.checks.length);
  });

  it('names no span of a coloured tool output, so the manifest it writes binds to its source', () => {
    const coloured = buildSession({
      goal: 'g',
      turns: [{ command: 'ls', output: 'error: \u001b[31mECONNREFUSED\u001b[0m 127.0.0.1:5432\nerror: the plain one\n' + filler(300) }, { command: 'ls', output: 'x' }],
    });
    const m = prepareManifest(coloured.source, coloured.transcript.items);
    expect(m.checks).toHaveLength(1);
    expect(() => bindManifest(m, coloured.source, coloured.transcript.items, extractSlots(coloured.source, coloured.transcript.items))).not.toThrow();
  });

  it('refuses a session with no candidates', () => {
    const plain = buildSession({ goal: 'hello', turns: [{ command: 'ls', output: filler(100) }] });
    expect(() => prepareManifest(plain.source, plain.transcript.items)).toThrow('no heuristic retention candidates in this session; write a reviewed manifest instead');
  });

  it('writes the manifest to a new file only', () => {
    const path = join(dir, 'manifest.json');
    const { result } = prepareManifestFile(path, session.source, session.transcript.items);
    expect(result).toEqual({ checks: 9, label_source: 'heuristic', study_run: false, manifest_path: path, by_kind: { fact: 3, constraint: 2, open_task: 2, procedure: 2 }, replay_fits: true });
    expect(validateEvalStudyCommandResult(result)).toBe(true);
    expect(parseManifest(readFileSync(path))).toEqual(manifest);
    writeFileSync(path, 'mine');
    expect(() => prepareManifestFile(path, session.source, session.transcript.items)).toThrow(/already exists/);
    expect(readFileSync(path, 'utf8')).toBe('mine');
  });
});

describe('manifest validation: each bad input gets its own clear error', () => {
  const slots = extractSlots(session.source, session.transcript.items);
  const bind = (m: RetentionManifest, source = session.source, items = session.transcript.items, s = slots) => bindManifest(m, source, items, s);
  const edit = (f: (m: RetentionManifest) => void): RetentionManifest => {
    const copy = structuredClone(manifest);
    f(copy);
    return copy;
  };

  it('binds a good manifest: text, origin, elidability and pinning per check', () => {
    const bound = bind(parseManifest(manifestBytes));
    expect(bound.map((c) => [c.origin, c.elidable, c.pinned])).toEqual([
      ['tool', true, false], ['tool', true, true], ['tool', true, true], ['tool', true, true], ['tool', true, false],
      ['user', false, true], ['user', false, true], ['assistant', false, true], ['assistant', false, false],
    ]);
    expect(bound[0]!.text).toBe('error: billing total mismatch for invoice 42');
  });

  it('a manifest bound to another source', () => {
    const other = studySession();
    const otherBytes = Buffer.concat([other.source, Buffer.from('{"type":"user","message":{"role":"user","content":"more"}}\n')]);
    const otherItems = parseSessionBytes(otherBytes).items;
    expect(() => bind(manifest, otherBytes, otherItems, extractSlots(otherBytes, otherItems))).toThrow(/^retention manifest is bound to another source \(manifest [0-9a-f]{12}…, this source [0-9a-f]{12}…\): the session changed after the manifest was prepared, or the manifest is another session's; prepare a new one with --prepare-manifest <new file>$/);
  });

  it('a wrong span hash', () => {
    const bad = edit((m) => (m.checks[2]!.sha256 = sha256Hex('something else')));
    expect(() => bind(bad)).toThrow('check check-2: span hash does not match the source bytes at record ' + r1);
  });

  it('a manifest saved with a byte-order mark reads as the same manifest; one that is not JSON says where', () => {
    expect(parseManifest(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), manifestBytes]))).toEqual(parseManifest(manifestBytes));
    const broken = Buffer.from(manifestBytes.toString('utf8').replace(/\n/, '\n,'));
    expect(() => parseManifest(broken)).toThrow(/^retention manifest is not valid JSON: .* at line 2, column 1$/);
  });

  it('a span that is not text: a cut UTF-8 character, control characters, a blank span, past the end', () => {
    const s = buildSession({ goal: 'g', turns: [{ command: 'ls', output: 'Never use the café printer\nbeep\u0007beep never again\n    \nend' }, { command: 'ls', output: 'x' }] });
    const sSlots = extractSlots(s.source, s.transcript.items);
    const base = prepareManifest(s.source, s.transcript.items);
    const text = Buffer.from('Never use the café printer\nbeep\u0007beep never again\n    \nend');
    const span = (start: number, end: number, id = 'x1') => ({ ...base, label_source: 'reviewed' as const, checks: [{ ...base.checks[0]!, id, start_byte: start, end_byte: end, sha256: sha256Hex(text.subarray(start, end)) }] });
    const cafe = text.indexOf('é');
    expect(() => bindManifest(span(0, cafe + 1), s.source, s.transcript.items, sSlots)).toThrow(/^check x1: bytes 0\.\.\d+ of record \d+ are not text \(it cuts a UTF-8 character\)$/);
    const bell = text.indexOf('beep');
    expect(() => bindManifest(span(bell, bell + 9), s.source, s.transcript.items, sSlots)).toThrow(/are not text \(it holds control characters\)/);
    const blank = text.indexOf('    ');
    expect(() => bindManifest(span(blank, blank + 4), s.source, s.transcript.items, sSlots)).toThrow(/are not text \(it is blank\)/);
    expect(() => bindManifest(span(text.length - 2, text.length + 5), s.source, s.transcript.items, sSlots)).toThrow(/are not text \(it ends past the slot's/);
    // A span on whole characters binds.
    expect(bindManifest(span(0, cafe + 2), s.source, s.transcript.items, sSlots)[0]!.text).toBe('Never use the café');
  });

  it('more than 256 checks, and none', () => {
    const many = { ...manifest, checks: Array.from({ length: 257 }, (_, i) => ({ ...manifest.checks[0]!, id: `c${i}` })) };
    expect(() => parseManifest(Buffer.from(JSON.stringify(many)))).toThrow('retention manifest has 257 checks; at most 256 are allowed');
    expect(() => parseManifest(Buffer.from(JSON.stringify({ ...manifest, checks: [] })))).toThrow('retention manifest has no checks; it needs 1 to 256');
  });

  it('a span over 4 KiB, a duplicate id, a pointer that is not live text', () => {
    expect(() => bind(edit((m) => (m.checks[0]!.end_byte = m.checks[0]!.start_byte + 4097)))).toThrow('check check-0: span is 4097 bytes; at most 4096 are allowed');
    expect(() => bind(edit((m) => (m.checks[1]!.id = 'check-0')))).toThrow('retention manifest repeats check id check-0');
    expect(() => bind(edit((m) => (m.checks[0]!.pointer = '/message/content/0/tool_use_id')))).toThrow(`check check-0: record ${r0} at /message/content/0/tool_use_id is not live text in this source`);
    expect(() => bind(edit((m) => (m.checks[0]!.record_index = 999)))).toThrow(/record 999 at .* is not live text/);
  });

  it('bad JSON, a wrong schema, unknown fields, growth schedules, an oversized file', () => {
    expect(() => parseManifest(Buffer.from('{'))).toThrow('retention manifest is not valid JSON');
    expect(() => parseManifest(Buffer.from(JSON.stringify({ ...manifest, schema: 'gobstopper-retention-v2' })))).toThrow('retention manifest schema must be gobstopper-retention-v1');
    expect(() => parseManifest(Buffer.from(JSON.stringify({ ...manifest, growth: [] })))).toThrow(/growth schedules are not supported/);
    expect(() => parseManifest(Buffer.from(JSON.stringify({ ...manifest, checks: [{ ...manifest.checks[0], text: 'leak' }] })))).toThrow(/does not match gobstopper-retention-v1 at \/checks\/0: must NOT have additional properties/);
    // An offset JSON cannot hold exactly is refused as out of range, not as an empty span.
    const far = { ...manifest, checks: [{ ...manifest.checks[0], start_byte: 90071992547409930 }] };
    expect(() => parseManifest(Buffer.from(JSON.stringify(far)))).toThrow(/does not match gobstopper-retention-v1 at \/checks\/0\/start_byte: must be <= 536870912/);
    expect(() => parseManifest(Buffer.from(JSON.stringify({ ...manifest, checks: [{ ...manifest.checks[0], kind: 'rumour' }] })))).toThrow(/at \/checks\/0\/kind: must be one of "constraint", /);
    const big = join(dir, 'big.json');
    writeFileSync(big, Buffer.alloc(1024 * 1024 + 1, 0x20));
    expect(() => readManifestFile(big)).toThrow(/is 1048577 bytes; at most 1 MiB is allowed/);
    expect(() => readManifestFile(join(dir, 'absent.json'))).toThrow(/does not exist/);
  });

  it('rounds outside 1-10 and sources over the limits', () => {
    for (const bad of [0, 11, 1.5, -1]) expect(() => assertRounds(bad)).toThrow(`--rounds must be a whole number from 1 to 10, got ${bad}`);
    expect(() => assertRounds(Number('99999999999999999999'))).toThrow('--rounds must be a whole number from 1 to 10, got a number far past 10');
    for (const good of [1, 10]) expect(() => assertRounds(good)).not.toThrow();
    expect(() => assertStudySourceSize(64 * 1024 * 1024 + 1, 'replay')).toThrow(/replay reads at most 64 MiB; score an already-compacted file with --against instead/);
    expect(() => assertStudySourceSize(64 * 1024 * 1024 + 1, 'audit')).not.toThrow();
    expect(() => assertStudySourceSize(512 * 1024 * 1024 + 1, 'prepare')).toThrow(/manifest preparation reads at most 512 MiB/);
  });
});

describe('retention tiers', () => {
  it('normalizes content tokens: lowercase alphanumerics of 4+ chars, stopwords out', () => {
    expect([...contentTokens('Error: the Billing total WOULD mismatch for invoice-42 über alles')]).toEqual(['error', 'billing', 'total', 'mismatch', 'invoice', 'über', 'alles']);
    expect(lexicalCoverage(contentTokens('alpha beta gamma delta'), contentTokens('delta gamma beta'))).toBe(0.75);
    expect(lexicalCoverage(new Set(), new Set(['x']))).toBe(0);
  });

  it('lexical: one slot must cover 75% of the distinct tokens; coverage split across slots does not count', () => {
    const slots = extractSlots(session.source, session.transcript.items);
    const [check] = bindManifest(manifest, session.source, session.transcript.items, slots);
    const base = { record: 99, pointer: '/x', origin: 'assistant' as const };
    // "error: billing total mismatch for invoice 42" -> error, billing, total, mismatch, invoice
    expect(scoreRetention([check!], [{ ...base, text: 'billing total mismatch invoice' }]).lexical_retained).toBe(1);
    expect(scoreRetention([check!], [{ ...base, text: 'billing total mismatch' }]).lexical_retained).toBe(0);
    expect(scoreRetention([check!], [{ ...base, text: 'billing total mismatch' }, { ...base, text: 'invoice error' }]).lexical_retained).toBe(0);
  });

  it('same origin and source bound are stricter than text presence', () => {
    const slots = extractSlots(session.source, session.transcript.items);
    const [check] = bindManifest(manifest, session.source, session.transcript.items, slots);
    const elsewhere = { record: 99, pointer: '/x', text: `quoted: ${check!.text}` };
    expect(scoreRetention([check!], [{ ...elsewhere, origin: 'user' }])).toMatchObject({ retained: 1, same_origin_retained: 0, source_bound_retained: 0, missing_ids: ['check-0'] });
    expect(scoreRetention([check!], [{ ...elsewhere, origin: 'tool' }])).toMatchObject({ retained: 1, same_origin_retained: 1, source_bound_retained: 0 });
    expect(scoreRetention([check!], slots)).toMatchObject({ retained: 1, same_origin_retained: 1, source_bound_retained: 1, elidable_total: 1, elidable_retained: 1, missing_ids: [] });
  });
});

describe('replaying the three arms', () => {
  const policy = testPolicy({ floor_tokens: 0, keep_recent_tool_outputs: 2, min_savings_tokens: 0 });

  it('scores each arm by kind with the losses known by construction', async () => {
    const told: string[] = [];
    const report = await runRetentionStudy(deps(), { provider: 'claude_code', source: session.source, manifest, manifest_sha256: sha256Hex(manifestBytes), policy, rounds: 2, onRound: (done, total) => told.push(`${done}/${total}`) });
    // Progress is told before the first round and after each one, out of arms × rounds.
    expect(told).toEqual(['0/6', '1/6', '2/6', '3/6', '4/6', '5/6', '6/6']);
    expect(validateRetentionStudyReport(report), JSON.stringify(validateRetentionStudyReport.errors)).toBe(true);
    expect(report).toMatchObject({ schema: 'gobstopper-retention-study-v1', replay_mode: 'static_stress', provider_calls: 0, checks_total: 9, rounds: 2, source_verify_errors: 0 });
    expect(report.rows.map((r) => [r.arm, r.round, r.status, r.applied_rounds])).toEqual([
      ['observation_masking', 1, 'applied', 1], ['observation_masking', 2, 'no_change', 1],
      ['typed_masking', 1, 'applied', 1], ['typed_masking', 2, 'no_change', 1],
      ['typed_digest', 1, 'applied', 1], ['typed_digest', 2, 'no_change', 1],
    ]);
    const [masking, , typed, , digest] = report.rows;

    // Observation masking elides outputs 0-2: the fact, constraint, open task and procedure planted there are gone.
    expect(masking!.retention).toMatchObject({ total: 9, retained: 5, same_origin_retained: 5, source_bound_retained: 5, elidable_total: 5, elidable_retained: 1, missing_ids: ['check-0', 'check-1', 'check-2', 'check-3'] });
    // The paraphrase in a kept assistant record covers the lost fact's words: lexical keeps it.
    expect(masking!.retention.lexical_retained).toBe(6);
    expect(masking!.retention.by_kind).toEqual([
      { kind: 'constraint', total: 2, retained: 1, same_origin_retained: 1, source_bound_retained: 1, lexical_retained: 1 },
      { kind: 'procedure', total: 2, retained: 1, same_origin_retained: 1, source_bound_retained: 1, lexical_retained: 1 },
      { kind: 'open_task', total: 2, retained: 1, same_origin_retained: 1, source_bound_retained: 1, lexical_retained: 1 },
      { kind: 'fact', total: 3, retained: 2, same_origin_retained: 2, source_bound_retained: 2, lexical_retained: 3 },
    ]);

    // Typed masking keeps the records holding pinned spans (outputs 0 and 1, the goal, the first assistant record).
    expect(typed!.pinned_records).toBe(4);
    expect(typed!.retention).toMatchObject({ retained: 9, source_bound_retained: 9, missing_ids: [] });
    expect(typed!.estimated_context_after).toBeGreaterThan(masking!.estimated_context_after);

    // Typed digest elides like masking but carries the six pinned spans on the card, a user record:
    // the three lost tool-output spans are present again, but neither with their origin nor at their source.
    expect(digest!.card_items).toBe(6);
    expect(digest!.retention).toMatchObject({ retained: 8, same_origin_retained: 5, source_bound_retained: 5, missing_ids: ['check-0', 'check-1', 'check-2', 'check-3'] });
    for (const row of report.rows) expect([row.verify_errors, row.new_verify_errors, row.preexisting_verify_errors]).toEqual([0, 0, 0]);
    expect(masking!.floor_reached).toBe(false);
    expect(masking!.estimated_context_after).toBeLessThan(masking!.estimated_context_before);
    // The table's context is an estimate; the reader is told what the trigger was compared with.
    expect(renderStudyLines(report, { width: 400 }).join('\n')).toContain(`reaches the trigger of ${report.trigger_tokens.toLocaleString('en-US')} tokens`);
    // On a narrow terminal each arm's rounds stay apart: the round column is never dropped.
    const narrow = renderStudyLines(report, { width: 60 });
    expect(narrow.find((l) => l.startsWith('arm '))).toMatch(/^arm\s+round\s/);
    expect(narrow.join('\n')).toMatch(/observation_masking\s+1\s/);
  });

  it('fits a narrow terminal: arm, round, context after and the exact and source tiers stay, the rest goes in a stated order', async () => {
    const report = await runRetentionStudy(deps(), { provider: 'claude_code', source: session.source, manifest, manifest_sha256: sha256Hex(manifestBytes), policy, rounds: 2 });
    const rounds = (lines: string[]) => lines.slice(lines.findIndex((l) => l.startsWith('arm ')), lines.findIndex((l) => l.startsWith('arm ')) + 1 + report.rows.length);
    const kinds = (lines: string[]) => lines.slice(lines.findIndex((l) => l.startsWith('kind ')));
    const leftOut = (lines: string[]) => [...lines.map((l) => l.trim()).join(' ').matchAll(/not shown at \d+ columns: (.*?); widen/g)].map((m) => m[1]);
    // Piped output keeps every column under its full header.
    const piped = renderStudyLines(report);
    expect(rounds(piped)[0]).toMatch(/^arm\s+round\s+status\s+applied\s+before\s+after\s+exact\s+origin\s+source\s+lexical\s+new errors\s+floor$/);
    expect(kinds(piped)[0]).toMatch(/^kind\s+observation_masking\s+typed_masking\s+typed_digest$/);
    expect(leftOut(piped)).toEqual([]);
    const expected: Record<number, { header: RegExp; leftOut: string[]; kinds: RegExp }> = {
      69: { header: /^arm\s+round\s+after\s+exact\s+origin\s+source\s+lexical$/, leftOut: ['status, applied, before, new errors, floor'], kinds: /^kind\s+observation_masking\s+typed_masking\s+typed_digest$/ },
      60: { header: /^arm\s+round\s+after\s+exact\s+source\s+lexical$/, leftOut: ['status, applied, before, origin, new errors, floor'], kinds: /^kind\s+observation_masking\s+typed_masking\s+typed_digest$/ },
      50: { header: /^arm\s+round\s+after\s+exact\s+source$/, leftOut: ['status, applied, before, origin, lexical, new errors, floor', 'typed_digest'], kinds: /^kind\s+observation\s+typed_masking$/ },
    };
    for (const width of [69, 60, 50]) {
      const lines = renderStudyLines(report, { width });
      for (const line of lines) expect([...line].length, `${width}: ${line}`).toBeLessThanOrEqual(width);
      const table = rounds(lines);
      expect(table[0], String(width)).toMatch(expected[width]!.header);
      // Each arm's rounds stay apart, under the arm's whole name.
      expect(table.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(' ')), String(width)).toEqual(report.rows.map((r) => `${r.arm} ${r.round}`));
      expect(kinds(lines)[0], String(width)).toMatch(expected[width]!.kinds);
      expect(leftOut(lines), String(width)).toEqual(expected[width]!.leftOut);
    }
    // A round with new verify errors keeps that column at any width, under its short header.
    const broken = { ...report, rows: report.rows.map((r, i) => (i === 2 ? { ...r, new_verify_errors: 1 } : r)) };
    const narrow = rounds(renderStudyLines(broken, { width: 50 }));
    expect(narrow[0]).toMatch(/^arm\s+round\s+exact\s+source\s+new err$/);
    expect(narrow[3]).toMatch(/^typed_masking\s+1\s+9\/9\s+9\/9\s+1$/);
  });

  it('counts pre-existing and new verify errors apart', async () => {
    const broken = buildSession({ goal: 'Never force push.', orphanTurn: 0, turns: [{ command: 'ls', output: 'todo: fix flaky test\n' + filler(900) }, { command: 'ls', output: filler(900) }, { command: 'ls', output: filler(300) }] });
    const m = prepareManifest(broken.source, broken.transcript.items);
    const d = deps();
    const render = d.render;
    // A render that also drops the second tool call adds a new orphan.
    d.render = async (bytes, edits) => Buffer.from((await render(bytes, edits)).toString().replace('"id":"call_1"', '"id":"call_lost"'));
    const report = await runRetentionStudy(d, { provider: 'claude_code', source: broken.source, manifest: m, manifest_sha256: 'a'.repeat(64), policy: testPolicy({ keep_recent_tool_outputs: 1 }), rounds: 1 });
    expect(report.source_verify_errors).toBe(1);
    const masking = report.rows[0]!;
    expect([masking.verify_errors, masking.preexisting_verify_errors, masking.new_verify_errors]).toEqual([2, 1, 1]);
  });

  it('clears the plan when the savings gate fails, and refuses bad rounds and oversized sources before doing anything', async () => {
    const report = await runRetentionStudy(deps(), { provider: 'claude_code', source: session.source, manifest, manifest_sha256: sha256Hex(manifestBytes), policy: testPolicy({ min_savings_tokens: 1_000_000 }), rounds: 1 });
    expect(report.rows.every((r) => r.status === 'no_change' && r.card_items === 0)).toBe(true);
    let parsed = 0;
    const counting = { ...deps(), parse: async (b: Buffer) => (parsed++, parseSessionBytes(b)) };
    await expect(runRetentionStudy(counting, { provider: 'claude_code', source: session.source, manifest, manifest_sha256: 'a'.repeat(64), policy, rounds: 11 })).rejects.toThrow('--rounds must be a whole number from 1 to 10, got 11');
    await expect(runRetentionStudy(counting, { provider: 'claude_code', source: Buffer.alloc(64 * 1024 * 1024 + 1), manifest, manifest_sha256: 'a'.repeat(64), policy, rounds: 1 })).rejects.toThrow(/64 MiB/);
    expect(parsed).toBe(0);
  });

  it('stops with a clear error when a typed arm loses pinned content', async () => {
    const d = deps();
    d.render = async (bytes, edits) => renderSessionBytes(bytes, edits.map((e) => (e.op === 'elide' ? { ...e, line_indexes: [...e.line_indexes, r0] } : e)));
    await expect(runRetentionStudy(d, { provider: 'claude_code', source: session.source, manifest, manifest_sha256: 'a'.repeat(64), policy, rounds: 1 })).rejects.toThrow(/^typed masking lost pinned check check-1 at round 1/);
  });
});

describe('the retention card', () => {
  const check = (id: string, kind: BoundCheck['kind'], text: string): BoundCheck => ({ id, kind, record: 1, pointer: '/p', origin: 'tool', elidable: true, pinned: ['constraint', 'procedure', 'open_task'].includes(kind), text, tokens: contentTokens(text) });

  it('carries pinned spans verbatim by kind, skips facts and multi-line spans, and stops at the digest byte limit', () => {
    const { digest, carried } = retentionCard([check('a', 'constraint', 'never x'), check('b', 'fact', 'error: y'), check('c', 'procedure', 'git pull'), check('d', 'open_task', 'todo: two\nlines'), check('e', 'open_task', '- [ ] z')], 3);
    expect(carried.map((c) => c.id)).toEqual(['a', 'c', 'e']);
    expect(digest).toMatchObject({ covers_items: 3, decisions: ['constraint: never x'], concepts: ['procedure: git pull'], open_tasks: ['- [ ] z'] });
    const big = Array.from({ length: 12 }, (_, i) => check(`k${i}`, 'constraint', 'x'.repeat(4000)));
    const full = retentionCard(big, 1);
    expect(full.carried).toHaveLength(8);
  });
});

describe('--against: scoring an already-compacted file', () => {
  it('scores a masked copy like the masking arm, without replaying', () => {
    const plan = planElide(session.transcript, { floor_tokens: 0, keep_recent_tool_outputs: 2 })!;
    const after = renderSessionBytes(session.source, plan.edits);
    const report = auditRetention({
      provider: 'claude_code', source: session.source, source_transcript: session.transcript, source_findings: verifySessionBytes(session.source),
      after, after_transcript: parseSessionBytes(after), after_findings: verifySessionBytes(after), manifest, manifest_sha256: sha256Hex(manifestBytes),
    });
    expect(validateRetentionStudyReport(report)).toBe(true);
    expect(report).toMatchObject({ replay_mode: 'realized_audit', after_sha256: sha256Hex(after), rows: [{ arm: 'realized', status: 'realized', round: 1 }] });
    expect(report.rows[0]!.retention).toMatchObject({ retained: 5, source_bound_retained: 5, lexical_retained: 6, missing_ids: ['check-0', 'check-1', 'check-2', 'check-3'] });
    const lines = renderStudyLines(report);
    expect(lines[0]).toBe('gobstopper-retention-study-v1: realized_audit (no provider calls; 9 checks, labels heuristic)');
    expect(lines.join('\n')).toMatch(/realized\s+1\s+realized/);
    expect(lines.join('\n')).not.toContain('billing');
    // Nothing was replayed: no floor to reach, no rounds applied, so neither column is shown (an
    // "applied 0" beside a fork with elisions would read as "nothing was compacted").
    expect(report.rows[0]!.floor_reached).toBeNull();
    const header = lines.find((l) => l.startsWith('arm '))!;
    expect(header).toMatch(/^arm\s+round\s+status\s+before\s+after\s+exact\s+origin\s+source\s+lexical\s+new errors$/);
    expect(lines[lines.indexOf(header) + 1]!.trimEnd()).toMatch(/^realized\s+1\s+realized\s+[\d,]+\s+[\d,]+\s+5\/9\s+\d+\/9\s+5\/9\s+6\/9\s+0$/);
    expect(lines.join('\n')).not.toContain('reaches the trigger');
  });

  it('refuses a manifest of another source', () => {
    const other = buildSession({ goal: 'Never deploy on Friday.', turns: [{ command: 'ls', output: 'x' }] });
    const otherManifest = prepareManifest(other.source, other.transcript.items);
    expect(() =>
      auditRetention({ provider: 'claude_code', source: session.source, source_transcript: session.transcript, source_findings: [], after: session.source, after_transcript: session.transcript, after_findings: [], manifest: otherManifest, manifest_sha256: 'a'.repeat(64) }),
    ).toThrow(/bound to another source/);
  });
});

describe('a span holding a lone surrogate (a cut emoji)', () => {
  const cut = buildSession({
    goal: 'Never push to main \ud83d without review.',
    turns: [
      { command: 'ls', output: '- [ ] retry the upload \udca9 later\n' + filler(900) },
      { command: 'ls', output: filler(900) },
      { command: 'ls', output: filler(300) },
    ],
  });
  const cutManifest = prepareManifest(cut.source, cut.transcript.items);

  it('is found in the unchanged session, as its bytes decode', () => {
    expect(cutManifest.checks.map((c) => c.kind)).toEqual(['open_task', 'constraint']);
    const report = auditRetention({
      provider: 'claude_code', source: cut.source, source_transcript: cut.transcript, source_findings: [],
      after: cut.source, after_transcript: cut.transcript, after_findings: [], manifest: cutManifest, manifest_sha256: 'a'.repeat(64),
    });
    expect(report.rows[0]!.retention).toMatchObject({ total: 2, retained: 2, same_origin_retained: 2, source_bound_retained: 2, missing_ids: [] });
  });

  it('is kept in place by typed masking and carried by typed digest, not reported lost', async () => {
    const policy = testPolicy({ floor_tokens: 0, keep_recent_tool_outputs: 1, min_savings_tokens: 0 });
    const report = await runRetentionStudy(deps(), { provider: 'claude_code', source: cut.source, manifest: cutManifest, manifest_sha256: 'a'.repeat(64), policy, rounds: 1 });
    const [masking, typed, digest] = report.rows;
    expect(masking!.retention).toMatchObject({ retained: 1, missing_ids: ['check-0'] });
    expect(typed!.retention).toMatchObject({ retained: 2, source_bound_retained: 2, missing_ids: [] });
    expect(digest).toMatchObject({ card_items: 2, retention: { retained: 2, source_bound_retained: 1 } });
  });

  it('counts as kept in the retention an applied compaction records, when its record is untouched', () => {
    const baseline = retentionBaseline(cut.source, cut.transcript.items)!;
    expect(scoreRetention(baseline.checks, candidateSlots(baseline, cut.source, cut.source))).toMatchObject({ total: 2, source_bound_retained: 2 });
  });
});

describe('text slots', () => {
  it('finds message text wherever the chat-message shape sits, with RFC 6901 pointers', () => {
    const codexLike = { type: 'compacted', payload: { replacement_history: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] } };
    expect(messageShapeSlots(codexLike, 3)).toEqual([{ record: 3, pointer: '/payload/replacement_history/0/content/0/text', origin: 'user', text: 'hi' }]);
    const output = { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c', output: 'done' } };
    expect(messageShapeSlots(output, 1)).toEqual([{ record: 1, pointer: '/payload/output', origin: 'tool', text: 'done' }]);
    const odd = { 'a/b~c': { role: 'assistant', content: 'x' }, tool: { arguments: 'not text' } };
    expect(messageShapeSlots(odd, 0)).toEqual([{ record: 0, pointer: '/a~1b~0c/content', origin: 'assistant', text: 'x' }]);
  });
});
