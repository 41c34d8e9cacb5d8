import { describe, expect, it } from 'vitest';
import { ClaudeSessionBuilder, longOutput } from '../../fixtures/claude/session-builder.js';
import { branchedSession, compactedSession, modernSession, oldSession } from '../../fixtures/claude/sessions.js';
import { parse, scratch } from './support.js';

const tmp = scratch('claude-branch-');
const liveLines = (t: Awaited<ReturnType<typeof parse>>) => t.items.filter((i) => i.est_tokens > 0).map((i) => i.line_index);

describe('the live branch', () => {
  it('counts every main-chain record of a 2.1.x session, recovering parallel tool results off the chain', async () => {
    const b = modernSession();
    const t = await parse(tmp.file('modern.jsonl', b.toJsonl()));
    // Every tool call is answered on the branch: the results hanging under their own tool_use
    // record (not on the parent chain) are live too.
    const calls = t.items.filter((i) => i.kind === 'tool_call' && i.est_tokens > 0).flatMap((i) => i.tool_use_ids ?? []);
    const results = t.items.filter((i) => i.kind === 'tool_result' && i.est_tokens > 0).flatMap((i) => i.tool_use_ids ?? []);
    expect(calls).toHaveLength(5);
    expect(results.sort()).toEqual([...calls].sort());
    // Progress records are in the tree but never reach the model.
    for (const i of t.items.filter((x) => x.record_type === 'progress')) expect(i.est_tokens).toBe(0);
    expect(t.findings).toEqual([]);
  });

  it('gives dead branches no tokens and nothing elidable', async () => {
    const { b, deadLines, deadResultLine } = branchedSession();
    const t = await parse(tmp.file('branched.jsonl', b.toJsonl()));
    for (const line of deadLines) expect(t.items[line]!.est_tokens, `line ${line}`).toBe(0);
    expect(t.items[deadResultLine]!.elidable_bytes).toBeUndefined();
    const liveResult = t.items.find((i) => i.kind === 'tool_result' && i.est_tokens > 0)!;
    expect(liveResult.elidable_bytes).toBeGreaterThan(256);
    // The edited prompt's replacement (written later) is the live one.
    expect(t.items.filter((i) => i.kind === 'user' && i.est_tokens > 0).map((i) => i.summary)).toEqual([
      'Summarise the repository',
      'Now list only the source files',
    ]);
  });

  it('follows the last last-prompt leaf onto a branch written earlier in the file', async () => {
    const { b, deadLines } = branchedSession();
    // The abandoned branch's tip is a leaf; naming it selects that branch.
    const deadTip = b.records[deadLines.at(-1)!]!.uuid as string;
    b.lastPrompt(deadTip);
    const t = await parse(tmp.file('leaf.jsonl', b.toJsonl()));
    for (const line of deadLines.filter((l) => b.records[l]!.type !== 'progress')) expect(t.items[line]!.est_tokens).toBeGreaterThan(0);
    expect(t.items.filter((i) => i.summary === 'Now list only the source files')[0]!.est_tokens).toBe(0);
  });

  it('ignores a last-prompt that names a record with replies, and one that names nothing', async () => {
    for (const leaf of ['first-prompt', 'ffffffff-0000-4000-8000-000000000000']) {
      const { b, deadLines } = branchedSession();
      b.lastPrompt(leaf === 'first-prompt' ? (b.records[0]!.uuid as string) : leaf);
      const t = await parse(tmp.file('fallback.jsonl', b.toJsonl()));
      // The last leaf in file order wins: the rewritten branch.
      for (const line of deadLines) expect(t.items[line]!.est_tokens).toBe(0);
      expect(t.items.find((i) => i.summary === 'Now list only the source files')!.est_tokens).toBeGreaterThan(0);
    }
  });

  it('ignores timestamps when choosing the last leaf', async () => {
    const { b, deadLines } = branchedSession();
    // Make the abandoned branch look newer: the file order still decides.
    for (const line of deadLines) b.records[line]!.timestamp = '2030-01-01T00:00:00.000Z';
    const t = await parse(tmp.file('time.jsonl', b.toJsonl()));
    for (const line of deadLines) expect(t.items[line]!.est_tokens).toBe(0);
  });

  it('cuts at a compact_boundary: records before it, linked or not, are not context', async () => {
    const { b, boundaryLine, preCompactLines } = compactedSession();
    const t = await parse(tmp.file('compacted.jsonl', b.toJsonl()));
    for (const line of preCompactLines) expect(t.items[line]!.est_tokens, `line ${line}`).toBe(0);
    expect(t.items[boundaryLine]!.est_tokens).toBe(0);
    expect(liveLines(t).every((l) => l > boundaryLine)).toBe(true);
    // The compaction summary is context, but not a goal for the state card.
    const summary = t.items[boundaryLine + 1]!;
    expect(summary.kind).toBe('user');
    expect(summary.est_tokens).toBeGreaterThan(0);
    expect(summary.summary).toBeUndefined();
  });

  it('reads 1.0.x files: inline sub-agent chains are off the branch', async () => {
    const { b, sidechainLines } = oldSession();
    const t = await parse(tmp.file('old.jsonl', b.toJsonl()));
    expect(t.session.kind).toBe('session');
    for (const line of sidechainLines) expect(t.items[line]!.est_tokens).toBe(0);
    expect(t.items[0]!.record_type).toBe('summary');
    expect(t.session.title).toBe('Parser fix');
    // Both parallel calls and both results are live in the linear 1.0.x layout.
    expect(t.items.filter((i) => i.est_tokens > 0 && i.kind === 'tool_result')).toHaveLength(2);
    expect(t.findings).toEqual([]);
  });

  it('recovers an off-chain tool_use only through its shared message.id, like the client', async () => {
    // Layout A of realclients.md §1.5: the second tool_use hangs under the first, the chain
    // continues from the first result, so the second call and its result are off the chain.
    const build = (sameId: boolean) => {
      const b = new ClaudeSessionBuilder({ version: '2.1.39' });
      b.user('Run two things');
      const msg = 'msg_01ParallelPair000000';
      const first = b.assistant([{ type: 'tool_use', id: 'toolu_a', name: 'Bash', input: { command: 'a' } }], { messageId: msg })[0]!;
      const second = b.assistant([{ type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'b' } }], { messageId: sameId ? msg : 'msg_01Other000000000000' })[0]!;
      b.byUuid(second).parentUuid = first;
      const resultB = b.user('', {});
      Object.assign(b.byUuid(resultB), { parentUuid: second, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b', content: longOutput('b') }] } });
      b.branchFrom(first);
      const resultA = b.user('', {});
      Object.assign(b.byUuid(resultA), { parentUuid: first, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: longOutput('a') }] } });
      b.text('Both done.');
      return { b, second: b.lineOf(second), resultB: b.lineOf(resultB) };
    };
    const shared = build(true);
    let t = await parse(tmp.file('layout-a.jsonl', shared.b.toJsonl()));
    expect(t.items[shared.second]!.est_tokens).toBeGreaterThan(0);
    expect(t.items[shared.resultB]!.est_tokens).toBeGreaterThan(0);
    const other = build(false);
    t = await parse(tmp.file('layout-a-other.jsonl', other.b.toJsonl()));
    expect(t.items[other.second]!.est_tokens).toBe(0);
    expect(t.items[other.resultB]!.est_tokens).toBe(0);
  });

  it('treats a sidechain-only file as a sub-agent transcript with its own branch', async () => {
    const b = new ClaudeSessionBuilder().asSidechain();
    b.user('Search');
    b.tools([{ name: 'Grep', input: { pattern: 'x' }, output: longOutput('grep') }]);
    b.text('Done.');
    const t = await parse(tmp.file('sidechain.jsonl', b.toJsonl()));
    expect(t.session.kind).toBe('subagent');
    expect(t.items.filter((i) => i.est_tokens > 0).length).toBeGreaterThan(3);
  });
});
