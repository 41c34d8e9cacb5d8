import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateTranscript } from '../../../schemas/generated/validators.js';
import { ClaudeSessionBuilder, longOutput } from '../../fixtures/claude/session-builder.js';
import { modernSession } from '../../fixtures/claude/sessions.js';
import { parse, scratch } from './support.js';

const tmp = scratch('claude-items-');

/** ceil(bytes/4) of a message as the Messages API request carries it. */
const sentTokens = (message: unknown) => Math.ceil(Buffer.byteLength(JSON.stringify(message)) / 4);

describe('normalized items', () => {
  it('has one item per physical line, valid against the Transcript schema', async () => {
    const b = modernSession();
    const text = b.toJsonl();
    const t = await parse(tmp.file('modern.jsonl', text));
    expect(t.items.map((i) => i.line_index)).toEqual(b.records.map((_, i) => i));
    expect(t.record_count).toBe(b.records.length);
    expect(t.bytes).toBe(Buffer.byteLength(text));
    expect(t.source_sha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(validateTranscript(t), JSON.stringify(validateTranscript.errors)).toBe(true);
    expect(t.record_types).toEqual({ 'file-history-snapshot': 1, progress: 8, user: 7, assistant: 10, system: 1, 'last-prompt': 1 });
  });

  it('classifies records and costs live ones ceil(bytes/4) of the message the client sends', async () => {
    const b = modernSession();
    const t = await parse(tmp.file('kinds.jsonl', b.toJsonl()));
    const byLine = (i: number) => t.items[i]!;
    const kinds = t.items.map((i) => i.kind);
    expect(kinds.slice(0, 8)).toEqual(['meta', 'meta', 'user', 'reasoning', 'assistant', 'tool_call', 'meta', 'tool_result']);
    // A string prompt goes out as one text block; the envelope (uuids, cwd, timestamps) never does.
    const prompt = b.records[2]!.message as { role: string; content: string };
    expect(byLine(2).est_tokens).toBe(sentTokens({ role: 'user', content: [{ type: 'text', text: prompt.content }] }));
    for (const line of [3, 4, 5, 7]) {
      const message = b.records[line]!.message as { role: string; content: unknown };
      expect(byLine(line).est_tokens, `line ${line}`).toBe(sentTokens({ role: message.role, content: message.content }));
      expect(byLine(line).est_tokens).toBeLessThan(Math.ceil(Buffer.byteLength(b.lines()[line]!) / 4) / 2);
    }
    // turn_duration is UI bookkeeping; last-prompt and snapshots never reach the model.
    const turn = t.items.find((i) => i.record_type === 'system')!;
    expect([turn.kind, turn.est_tokens]).toEqual(['meta', 0]);
    expect(t.items.at(-1)!.record_type).toBe('last-prompt');
    expect(t.items.at(-1)!.est_tokens).toBe(0);
  });

  it('does not count what the client leaves out: the toolUseResult UI copy, tool_use callers, blank text blocks', async () => {
    const build = (uiCopies: number) => {
      const b = new ClaudeSessionBuilder();
      b.user('List the sources');
      b.assistant([{ type: 'text', text: '\n\n' }]);
      b.tools([{ name: 'Bash', input: { command: 'ls' }, output: longOutput('ls', 30) }]);
      const call = b.records.find((r) => (r.message as { content?: Array<{ type?: string }> } | undefined)?.content?.[0]?.type === 'tool_use')!;
      ((call.message as { content: Array<Record<string, unknown>> }).content[0]!).caller = { type: 'direct' };
      const result = b.records.find((r) => r.toolUseResult !== undefined)!;
      (result.toolUseResult as { stdout: string }).stdout = longOutput('ls', 30 * uiCopies);
      b.text('Done.');
      return b;
    };
    const small = build(1);
    const large = build(4);
    const t1 = await parse(tmp.file('ui-1.jsonl', small.toJsonl()));
    const t4 = await parse(tmp.file('ui-4.jsonl', large.toJsonl()));
    expect(Buffer.byteLength(large.toJsonl())).toBeGreaterThan(Buffer.byteLength(small.toJsonl()) + 3000);
    expect(t4.items.map((i) => i.est_tokens)).toEqual(t1.items.map((i) => i.est_tokens));
    const callLine = small.records.findIndex((r) => (r.message as { content?: Array<{ type?: string }> } | undefined)?.content?.[0]?.type === 'tool_use');
    const callBlock = { ...((small.records[callLine]!.message as { content: Array<Record<string, unknown>> }).content[0]!) };
    delete callBlock.caller;
    expect(t1.items[callLine]!.est_tokens).toBe(sentTokens({ role: 'assistant', content: [callBlock] }));
    // A record the client drops entirely still costs the minimum of one token.
    const blank = t1.items.findIndex((i) => i.kind === 'assistant');
    expect(t1.items[blank]!.est_tokens).toBe(1);
  });

  it('costs a local command as the user text the client sends for it', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('hello');
    b.system('local_command', { content: '<local-command-stdout>Kept model as Default</local-command-stdout>' });
    b.text('Hi.');
    const t = await parse(tmp.file('local.jsonl', b.toJsonl()));
    expect(t.items[1]!.kind).toBe('system');
    expect(t.items[1]!.est_tokens).toBe(sentTokens({ role: 'user', content: [{ type: 'text', text: '<local-command-stdout>Kept model as Default</local-command-stdout>' }] }));
  });

  it('labels tool items by tool name and summarises what they touched, never with payload text in labels', async () => {
    const t = await parse(tmp.file('labels.jsonl', modernSession().toJsonl()));
    const read = t.items.find((i) => i.kind === 'tool_call' && i.label === 'Read')!;
    expect(read.summary).toBe('Read file_path=/home/dev/projects/demo/src/parse.ts');
    const result = t.items.find((i) => i.kind === 'tool_result' && i.label === 'Read')!;
    expect(result.summary).toBe('Read file_path=/home/dev/projects/demo/src/parse.ts -> 1280 bytes');
    expect(t.items.find((i) => i.label === 'Bash' && i.kind === 'tool_call')!.summary).toBe('Bash command=npm test');
    for (const item of t.items) {
      expect(item.label).toMatch(/^[A-Za-z0-9_.:-]{1,64}$/);
      if (item.kind !== 'tool_call' && item.kind !== 'tool_result') expect(item.label).toBe(item.kind);
    }
    const user = t.items.find((i) => i.kind === 'user')!;
    expect(user.summary).toBe('Fix the failing parser test in src/parse.ts');
  });

  it('sanitises crafted tool names and bounds summaries at a UTF-8 boundary', async () => {
    const b = new ClaudeSessionBuilder();
    b.user(`${'é'.repeat(400)} and more\nsecond line`);
    b.tools([{ name: 'rm -rf /; echo "secret"', input: { command: `${'ü'.repeat(300)}` }, output: 'ok', isError: true }]);
    const t = await parse(tmp.file('crafted.jsonl', b.toJsonl()));
    const call = t.items.find((i) => i.kind === 'tool_call')!;
    expect(call.label).toBe('rm_-rf_echo_secret_');
    for (const item of t.items) {
      if (item.summary) {
        expect(Buffer.byteLength(item.summary)).toBeLessThanOrEqual(512);
        expect(item.summary).not.toContain('\uFFFD');
        expect(item.summary).not.toContain('\n');
      }
    }
    const user = t.items.find((i) => i.kind === 'user')!;
    expect(Buffer.byteLength(user.summary!)).toBeLessThanOrEqual(240);
    expect(user.summary!.startsWith('é')).toBe(true);
    // A failed call says so, so the state card files it under errors.
    expect(t.items.find((i) => i.kind === 'tool_result')!.summary).toMatch(/-> error: ok$/);
  });

  it("summarises a failed call by the line that says what failed, not the output's first line", async () => {
    const b = new ClaudeSessionBuilder();
    b.user('migrate');
    const progress = Array.from({ length: 30 }, (_, i) => `step ${i}: applied, 0 errors so far`).join('\n');
    b.tools([{ name: 'Bash', input: { command: 'npm run migrate' }, output: `${progress}\nError: ECONNREFUSED 127.0.0.1:5433\n    at Migrator.run`, isError: true }]);
    b.tools([{ name: 'Bash', input: { command: 'cargo test' }, output: 'running 3 tests\ntest parse ... FAILED', isError: true }]);
    b.tools([{ name: 'Bash', input: { command: 'false' }, output: '\n  nothing to see\nexit 1', isError: true }]);
    const t = await parse(tmp.file('failures.jsonl', b.toJsonl()));
    const results = t.items.filter((i) => i.kind === 'tool_result').map((i) => i.summary);
    expect(results).toEqual([
      'Bash command=npm run migrate -> error: Error: ECONNREFUSED 127.0.0.1:5433',
      'Bash command=cargo test -> error: test parse ... FAILED',
      // Nothing reads as a failure: the first non-blank line, as before.
      'Bash command=false -> error: nothing to see',
    ]);
  });

  it('makes only live tool-result payload text over 256 bytes elidable, with a payload hash for dedupe', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('go');
    const same = longOutput('same', 12);
    b.tools([
      { name: 'Read', input: { file_path: '/a' }, output: same },
      { name: 'Read', input: { file_path: '/b' }, output: 'x'.repeat(256) },
      { name: 'Read', input: { file_path: '/c' }, output: [{ type: 'text', text: 'y'.repeat(200) }, { type: 'text', text: 'z'.repeat(100) }] },
      { name: 'Read', input: { file_path: '/d' }, output: [{ type: 'text', text: 'w'.repeat(400) }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
      { name: 'Read', input: { file_path: '/e' }, output: same },
    ]);
    b.text('done');
    const t = await parse(tmp.file('elidable.jsonl', b.toJsonl()));
    const results = t.items.filter((i) => i.kind === 'tool_result');
    expect(results.map((r) => r.elidable_bytes)).toEqual([Buffer.byteLength(same), undefined, 300, undefined, Buffer.byteLength(same)]);
    expect(results.map((r) => r.elidable_parts)).toEqual([1, undefined, 1, undefined, 1]);
    // Nothing elidable, nothing to dedupe by.
    expect(results.map((r) => r.payload_sha256 === undefined)).toEqual([false, true, false, true, false]);
    expect(results[0]!.payload_sha256).toBe(createHash('sha256').update(same).digest('hex'));
    expect(results[0]!.payload_sha256).toBe(results[4]!.payload_sha256);
    expect(results[2]!.payload_sha256).toBe(createHash('sha256').update(`${'y'.repeat(200)}\u0000${'z'.repeat(100)}`).digest('hex'));
    // Tool calls, prompts and replies are never elidable.
    for (const i of t.items.filter((x) => x.kind !== 'tool_result')) expect(i.elidable_bytes).toBeUndefined();
  });

  it('keeps blank and unparseable lines as zero-cost meta items with findings', async () => {
    const lines = modernSession().lines();
    lines.splice(3, 0, '', '{"type": "user", "message": ');
    const t = await parse(tmp.file('blank.jsonl', lines.join('\n') + '\n'));
    expect(t.items).toHaveLength(lines.length);
    for (const i of [3, 4]) expect(t.items[i]).toEqual({ line_index: i, kind: 'meta', est_tokens: 0, label: 'meta' });
    expect(t.findings!.map((f) => [f.code, f.line_index])).toEqual([
      ['blank_line', 3],
      ['invalid_json', 4],
    ]);
  });
});
