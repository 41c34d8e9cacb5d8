/**
 * Render reads the lines it does not edit as skeletons (no JSON.parse); the uuid tree, the live
 * branch and the session's identity it builds from them must be exactly the ones parse builds.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { computeLiveBranch } from '../../../plugins/provider-claude-code/src/branch.js';
import { recordSessionIdSpans, topLevelSessionIdSpans } from '../../../plugins/provider-claude-code/src/elide-line.js';
import { EnvelopeTracker } from '../../../plugins/provider-claude-code/src/envelope.js';
import { lineContext, type LineContext } from '../../../plugins/provider-claude-code/src/record-reader.js';
import { readLine, type LineProblem } from '../../../plugins/provider-claude-code/src/scan.js';
import { SkeletonReader } from '../../../plugins/provider-claude-code/src/skeleton.js';
import { readTreeLine } from '../../../plugins/provider-claude-code/src/tree-line.js';
import { breakages } from '../../fixtures/claude/breakages.js';
import { ClaudeSessionBuilder } from '../../fixtures/claude/session-builder.js';
import { branchedSession, compactedSession, modernSession, oldSession, subagentTranscript } from '../../fixtures/claude/sessions.js';

const limits = { maxBytes: Number.MAX_SAFE_INTEGER, maxRecords: Number.MAX_SAFE_INTEGER, maxRecordBytes: 32 * 1024 * 1024 };
const realDir = join(fileURLToPath(new URL('../../..', import.meta.url)), '..', 'shared', 'fixtures', 'real', 'claude');

interface Read {
  ctx: LineContext;
  envelope: EnvelopeTracker;
  problems: LineProblem[];
  spans: Array<Array<{ start: number; end: number }> | null>;
}

function readAll(text: string, tree: boolean): Read {
  const ctx = lineContext();
  const envelope = new EnvelopeTracker();
  const problems: LineProblem[] = [];
  const skeletons = new SkeletonReader();
  const spans: Read['spans'] = [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    const buf = Buffer.from(line, 'utf8');
    if (tree) spans.push(readTreeLine(skeletons, buf, i, limits, ctx, envelope, problems, false).sessionIdSpans as Read['spans'][number]);
    else readLine(buf, i, limits, ctx, envelope, problems, false);
  });
  return { ctx, envelope, problems, spans };
}

/** What the live branch, pairing, card placement and refusals read from a table. */
function treeView(r: Read) {
  const t = r.ctx.table;
  const rows = [];
  for (let i = 0; i < t.length; i += 1) {
    rows.push({
      state: t.state(i),
      type: t.type[i],
      uuid: t.uuid[i],
      parentUuid: t.parentUuid[i],
      flags: t.flags[i],
      response: t.response[i],
      kind: t.kind(i),
      toolUseIds: t.toolUseIds[i],
      toolResultIds: t.toolResultIds[i],
      leafUuid: t.leafUuid.get(i) ?? null,
    });
  }
  const branch = computeLiveBranch(t, { uuidLine: r.ctx.uuidLine, duplicateUuids: r.ctx.duplicateUuids });
  const { parentOf: _fn, ...facts } = branch;
  const e = r.envelope;
  return {
    rows,
    branch: { ...facts, live: [...facts.live] },
    envelope: { sessionId: e.sessionId, cwd: e.cwd, versionAnomaly: e.versionAnomaly, claude: e.claudeRecords, foreign: e.foreignRecords },
    problems: r.problems.filter((p) => p.state !== 'invalid_block').map((p) => [p.line, p.state]),
  };
}

function expectSameTree(text: string): void {
  const tree = readAll(text, true);
  expect(treeView(tree)).toEqual(treeView(readAll(text, false)));
  // A fork rendered from a parse looks for sessionId values with a walk of the top level alone
  // (render-from-parse.ts): on every line the tree read as a record it must find the same ones.
  const lines = text.split('\n');
  tree.spans.forEach((spans, i) => {
    if (tree.ctx.table.state(i) !== 'ok') return;
    expect(spans, `line ${i + 1} is followed by the skeleton`).not.toBeNull();
    expect(topLevelSessionIdSpans(Buffer.from(lines[i]!, 'utf8')), `line ${i + 1}`).toEqual(spans);
    expect(recordSessionIdSpans(Buffer.from(lines[i]!, 'utf8')), `line ${i + 1}, the short walk`).toEqual(spans);
  });
}

const realFiles = existsSync(realDir) ? readdirSync(realDir).filter((f) => f.endsWith('.jsonl')) : [];

describe('the skeleton read builds the tree parse builds', () => {
  it.each([
    ['modern', () => modernSession().toJsonl()],
    ['branched', () => branchedSession().b.toJsonl()],
    ['compacted', () => compactedSession().b.toJsonl()],
    ['old', () => oldSession().b.toJsonl()],
    ['sub-agent', () => subagentTranscript().toJsonl()],
  ])('on a %s session', (_name, text) => expectSameTree(text()));

  it.each(breakages().map((b) => [b.id, b.text]))('on the %s breakage', (_id, text) => expectSameTree(text));

  it('on lines that are not records, or records of odd shapes', () => {
    const b = new ClaudeSessionBuilder();
    b.user('hi');
    const lines = [
      ...b.lines(),
      '',
      '   ',
      '["an","array"]',
      '{"type":"user","message":{"role":"user","content":"x"}} trailing',
      '{"type":"user", "uuid" : "sp-1" , "parentUuid":null,"message":{ "role" : "user" , "content" : [ ] }}',
      '{"type":"assistant","uuid":"esc-1","parentUuid":"sp-1","message":{"id":"m\\u0031","content":[{"type":"tool_use","id":"t\\"1","input":{"a":[1,{"b":"}"}]}},7,null,"s"]}}',
      '{"type":"user","uuid":"esc-2","parentUuid":"esc-1","message":{"content":[{"type":"tool_result","tool_use_id":"t\\"1","content":[{"type":"text","text":"{[\\"]}"}]}]}}',
      '{"type":"last-prompt","leafUuid":"esc-2","payload":1}',
      '{"type":"session_meta","payload":{"id":"x"},"ordinal":3}',
      '{"type":"system","subtype":"compact_boundary","uuid":"cb","parentUuid":null,"isSidechain":true}',
      '{"type":"user","uuid":"dup","uuid":"dup2","parentUuid":"cb","message":{"role":"user","content":"a"},"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"zz"}]}}',
      '{"type":"user","message":{"content":"unterminated}',
      '{"typ\\u0065":"user","uu\\u0069d":"esc-3","uuid":7,"uu\\u0069d":"esc-4","parentUuid":"esc-2","m\\u0065ssage":{"r\\u006fle":"user","c\\u006fntent":[{"typ\\u0065":"tool_result","tool_use_\\u0069d":"t\\"1"}]}}',
      '{"type":"assistant","uuid":"esc-5","parentUuid":"esc-4","isSidechain":true,"isSid\\u0065chain":false,"message":{"\\u0069d":"m2","content":[{"type":"tool_use","\\u0069d":"t2"}]}}',
      '{"type":"user","uuid":"bad-key","parentUuid":"esc-5","k\\x":1}',
      '{"type":"user","uuid":"tab\there","parentUuid":"esc-5","message":{"role":"user","content":"x"}}',
    ];
    expectSameTree(lines.join('\n') + '\n');
  });

  it('locates every top-level sessionId, and none inside values', () => {
    const line = '{"sessionId":"a","message":{"sessionId":"inner","content":"\\"sessionId\\":\\"x\\""},"type":"user","sessionId" : "b"}';
    const [spans] = readAll(line + '\n', true).spans;
    expect(spans!.map((s) => line.slice(s.start, s.end))).toEqual(['"a"', '"b"']);
    expect(topLevelSessionIdSpans(Buffer.from(line))).toEqual(spans);
    // A key written with escapes is the key it decodes to, for the walk as for JSON.parse.
    const escaped = '{"type":"user","session\\u0049d":"a","x":{"sessionId":"b"},"message":{"role":"user","content":"x"}}';
    const [escapedSpans] = readAll(escaped + '\n', true).spans;
    expect(escapedSpans!.map((s) => escaped.slice(s.start, s.end))).toEqual(['"a"']);
    expect(topLevelSessionIdSpans(Buffer.from(escaped))).toEqual(escapedSpans);
    expect(recordSessionIdSpans(Buffer.from(line))).toEqual(spans);
    expect(recordSessionIdSpans(Buffer.from(escaped))).toEqual(escapedSpans);
  });

  it('the short walk of a parsed record finds what the whole walk finds when sessionId is spelled once or not at all', () => {
    const cases = [
      '{"type":"user","sessionId":"a","message":{"role":"user","content":"x"}}',
      '{"type":"user","message":{"role":"user","content":"x"},"sessionId":"last"}',
      '{"type":"user","message":{"sessionId":"nested only"}}',
      '{"type":"user","sessionIdx":"a longer key","message":{"content":"x"}}',
      '{"type":"user","message":{"content":"the word sessionId in a text"}}',
      '{"type":"user","message":{"content":"no id here"}}',
      '{"type":"user","sessionId":"a","message":{"content":"and sessionId in a text"}}',
      '{"type":"user","sessionId":"a","sessionId":"b"}',
      '{"type":"user","message":{"content":"\\u0041"},"sessionId":"after a backslash and a u"}',
      '{"type":"user","session\\u0049d":"escaped","message":{}}',
      '  {"sessionId" : "spaced" , "n": [1, {"sessionId": 2}]}  ',
    ];
    for (const line of cases) expect(recordSessionIdSpans(Buffer.from(line)), line).toEqual(topLevelSessionIdSpans(Buffer.from(line)));
    // Each case is also read as part of a session, where the tree read's spans are the reference.
    expectSameTree(cases.join('\n') + '\n');
  });

  it.each(realFiles)('on the real transcript %s', (name) => expectSameTree(readFileSync(join(realDir, name), 'utf8')));
});
