import { describe, expect, it } from 'vitest';
import { validateProviderVerifyResult } from '../../../schemas/generated/validators.js';
import { breakages, tornFinalLine } from '../../fixtures/claude/breakages.js';
import { ClaudeSessionBuilder } from '../../fixtures/claude/session-builder.js';
import { branchedSession, compactedSession, modernSession, oldSession, subagentTranscript } from '../../fixtures/claude/sessions.js';
import { errors, parse, scratch, verify } from './support.js';

const tmp = scratch('claude-verify-');

describe('verify', () => {
  it.each([
    ['a 2.1.x session with parallel tool calls', () => modernSession().toJsonl()],
    ['a branched session', () => branchedSession().b.toJsonl()],
    ['a compacted session', () => compactedSession().b.toJsonl()],
    ['a 1.0.x session with inline sub-agent chains', () => oldSession().b.toJsonl()],
  ])('finds nothing wrong with %s', async (_name, text) => {
    const result = await verify(tmp.file('valid.jsonl', text()));
    expect(result.findings).toEqual([]);
    expect(result.session_kind).toBe('session');
    expect(validateProviderVerifyResult(result)).toBe(true);
  });

  // Each of these resumes without an error in the real client while it sends another context.
  it.each(breakages().map((b) => [b.id, b] as const))('catches %s', async (_id, breakage) => {
    const found = (await verify(tmp.file('broken.jsonl', breakage.text))).findings;
    expect(found.filter((f) => f.severity === breakage.severity).map((f) => f.code)).toContain(breakage.code);
    for (const f of found) expect(f.message).not.toMatch(/changelog|parser test/i);
  });

  it('gives parse the same findings, so the host can skip a separate verify', async () => {
    for (const text of [modernSession().toJsonl(), tornFinalLine(), breakages().find((b) => b.code === 'orphan_tool_use')!.text]) {
      const path = tmp.file('same.jsonl', text);
      const t = await parse(path);
      expect(t.findings_complete).toBe(true);
      expect(t.findings).toEqual((await verify(path)).findings);
    }
  });

  it('warns about a torn final line without calling it an error', async () => {
    const result = await verify(tmp.file('torn.jsonl', tornFinalLine()));
    expect(result.findings.map((f) => [f.severity, f.code])).toEqual([['warning', 'torn_final_line']]);
  });

  it('reports a sub-agent transcript as one the client refuses', async () => {
    const result = await verify(tmp.file('agent-a2898e3.jsonl', subagentTranscript().toJsonl()));
    expect(result.session_kind).toBe('subagent');
    expect(result.findings.map((f) => f.code)).toEqual(['sidechain_only']);
  });

  it('reports files it cannot read as findings, not crashes', async () => {
    const cases: Array<[string, string | Buffer, string]> = [
      ['empty', '', 'empty_transcript'],
      ['binary', Buffer.from([0x7b, 0x00, 0x01, 0x0a]), 'binary_content'],
      ['utf8', Buffer.concat([Buffer.from(modernSession().lines()[2]!), Buffer.from([0x0a, 0xff, 0xfe, 0x0a])]), 'invalid_utf8'],
      ['array', '[1,2,3]\n', 'not_an_object'],
      ['types', '{"type":"user","uuid":42,"message":{"role":"user","content":"x"}}\n', 'invalid_record'],
      ['no-conversation', '{"type":"summary","summary":"x"}\n', 'no_conversation'],
    ];
    for (const [name, text, code] of cases) {
      const result = await verify(tmp.file(`${name}.jsonl`, text));
      expect(result.findings.map((f) => f.code), name).toContain(code);
      expect(validateProviderVerifyResult(result)).toBe(true);
    }
  });

  it('lists a long run of one problem once per line up to a cap, then counts the rest', async () => {
    const lines = modernSession().lines();
    const text = [...lines.slice(0, 5), ...Array.from({ length: 120 }, () => ''), ...lines.slice(5)].join('\n') + '\n';
    const findings = (await verify(tmp.file('blanks.jsonl', text))).findings.filter((f) => f.code === 'blank_line');
    expect(findings).toHaveLength(51);
    expect(findings.at(-1)!.message).toBe('70 more findings like the above');
  });

  it('keeps a session resumed by an older client a session, and reports placeholder versions as a composite', async () => {
    const b = modernSession();
    b.records[10]!.version = '2.0.5';
    expect((await verify(tmp.file('two-installs.jsonl', b.toJsonl()))).session_kind).toBe('session');
    const c = modernSession();
    c.records[3]!.version = '[trimmed for fixture]';
    const path = tmp.file('composite.jsonl', c.toJsonl());
    const result = await verify(path);
    expect(result.session_kind).toBe('composite');
    expect(result.findings.map((f) => f.code)).toContain('composite_file');
    // A composite parses, as what it is: nothing in it counts as context or may be edited.
    const t = await parse(path);
    expect(t.session.kind).toBe('composite');
    expect(t.items.every((i) => i.est_tokens === 0 && i.elidable_bytes === null)).toBe(true);
  });

  it('flags a missing leaf, a non-terminal leaf and an empty leaf differently', async () => {
    const b = modernSession();
    b.lastPrompt(b.records[2]!.uuid as string);
    expect((await verify(tmp.file('nonterminal.jsonl', b.toJsonl()))).findings.map((f) => [f.severity, f.code])).toEqual([['warning', 'leaf_not_terminal']]);
    const c = modernSession();
    c.push({ type: 'last-prompt', lastPrompt: 'x', sessionId: c.sessionId });
    expect((await errors(tmp.file('noleaf.jsonl', c.toJsonl()))).map((f) => f.code)).toEqual(['invalid_leaf']);
  });

  it('says whether a last-prompt leaf is absent or names a record that is there but invalid', async () => {
    const absent = modernSession();
    absent.lastPrompt('no-such-uuid');
    const absentPath = tmp.file('absent-leaf.jsonl', absent.toJsonl());
    expect((await errors(absentPath))).toEqual([
      {
        severity: 'error',
        code: 'missing_leaf',
        message: `the last-prompt record on line ${absent.records.length} names a leaf that does not exist; the client falls back to the last leaf in the file`,
        line_index: absent.records.length - 1,
      },
    ]);
    const invalid = modernSession();
    const leaf = invalid.user('the leaf');
    (invalid.records.at(-1) as { message: unknown }).message = 'not an object';
    const leafLine = invalid.records.length;
    invalid.lastPrompt(leaf);
    const found = await errors(tmp.file('invalid-leaf.jsonl', invalid.toJsonl()));
    expect(found.map((f) => [f.code, f.line_index])).toEqual([
      ['invalid_record', leafLine - 1],
      ['missing_leaf', leafLine],
    ]);
    expect(found[1]!.message).toBe(
      `the last-prompt record on line ${leafLine + 1} names the record on line ${leafLine} as its leaf, but that record is invalid (line ${leafLine} is a user record whose "message" is not an object) and cannot be the leaf; the client falls back to the last leaf in the file`,
    );
  });

  it('warns about a dangling parent off the live branch', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('main');
    b.text('reply');
    const stray = b.system('api_error');
    b.byUuid(stray).parentUuid = 'ffffffff-0000-4000-8000-00000000beef';
    b.branchFrom(b.records[1]!.uuid as string);
    b.user('next');
    b.text('done');
    const result = await verify(tmp.file('stray.jsonl', b.toJsonl()));
    expect(result.findings.map((f) => [f.severity, f.code, f.line_index])).toEqual([['warning', 'dangling_parent_off_branch', 2]]);
  });
});
