import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { usage } from '../../../plugins/provider-codex/src/identify.js';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { validateTranscript } from '../../../schemas/generated/validators.js';
import { writeLargeRollout } from '../../fixtures/codex/large-rollout.js';
import { RolloutBuilder, filler, item, type Payload } from '../../fixtures/codex/rollout-builder.js';
import { BIG_OUTPUT, BIG_PATCH_OUTPUT, compactedSession, legacySession, paginatedSession } from '../../fixtures/codex/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'codex-parse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function write(b: RolloutBuilder, text?: string): string {
  return b.writeTo(join(dir, String(n++)), { text });
}
const run = (path: string) => parse({ provider_id: 'codex', path });

describe('provider-codex parse: legacy rollouts', () => {
  it('gives one schema-valid item per physical line, hashed and counted', async () => {
    const { builder } = legacySession();
    const path = write(builder);
    const t = await run(path);
    expect(validateTranscript(t), JSON.stringify(validateTranscript.errors)).toBe(true);
    expect(t.items.map((i) => i.line_index)).toEqual([...Array(builder.lineCount).keys()]);
    expect(t.record_count).toBe(builder.lineCount);
    expect(t.source_sha256).toBe(createHash('sha256').update(builder.text()).digest('hex'));
    expect(t.session).toMatchObject({ provider: 'codex', session_id: builder.id, cwd: '/work/project', kind: 'session', bytes: Buffer.byteLength(builder.text()) });
    expect(t.record_types?.['response_item:function_call_output']).toBe(2);
    expect(t.record_types?.['event_msg:token_count']).toBe(3);
  });

  it('classifies records and labels tools by name, never by payload text', async () => {
    const { builder, lines } = legacySession();
    const t = await run(write(builder));
    const kinds = t.items.map((i) => i.kind);
    expect(kinds[0]).toBe('meta');
    expect(t.items.filter((i) => i.kind === 'system').map((i) => i.label)).toEqual(['developer', 'preamble']);
    const output = t.items[lines.shellOutput]!;
    expect(output).toMatchObject({ kind: 'tool_result', label: 'exec_command', tool_use_ids: ['call_read'] });
    expect(output.summary).toBe(`exec_command cmd=cat src/parser.ts -> ${BIG_OUTPUT.length} bytes`);
    const call = t.items[lines.shellOutput - 1]!;
    expect(call).toMatchObject({ kind: 'tool_call', label: 'exec_command', summary: 'exec_command cmd=cat src/parser.ts' });
    expect(t.items[lines.patchOutputString]!.label).toBe('apply_patch');
    expect(t.items.find((i) => i.kind === 'user')!.summary).toBe('Fix the failing test in parser.ts');
    for (const i of t.items) {
      expect(i.label).not.toContain('parser');
      expect(Buffer.byteLength(i.summary ?? '')).toBeLessThanOrEqual(512);
    }
  });

  it('counts tokens only for records that reach the model, by the payload the client sends', async () => {
    const { builder } = legacySession();
    const t = await run(write(builder));
    const lines = builder.text().split('\n');
    for (const i of t.items) {
      if (i.kind === 'meta') {
        expect(i.est_tokens).toBe(0);
        continue;
      }
      const record = JSON.parse(lines[i.line_index]!) as { payload: unknown };
      expect(i.est_tokens).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(record.payload)) / 4));
      expect(i.est_tokens).toBeLessThan(Math.ceil(Buffer.byteLength(lines[i.line_index]!) / 4));
    }
  });

  it('marks large string outputs elidable with a payload hash, small ones not', async () => {
    const { builder, lines } = legacySession();
    const t = await run(write(builder));
    expect(t.items[lines.shellOutput]).toMatchObject({ elidable_bytes: BIG_OUTPUT.length, elidable_parts: 1 });
    expect(t.items[lines.shellOutput]!.payload_sha256).toBe(createHash('sha256').update(BIG_OUTPUT).digest('hex'));
    expect(t.items[lines.patchOutputString]).toMatchObject({ elidable_bytes: BIG_PATCH_OUTPUT.length, elidable_parts: 1 });
    expect(t.items[lines.smallOutput]!.elidable_bytes ?? null).toBeNull();
    expect(t.items[lines.smallOutput]!.summary).toBe('exec_command cmd=npm test -> 15 bytes, exit 0');
  });

  it('names what failed in a failed command\'s summary, in each way builds state how a command ended', async () => {
    const progress = Array.from({ length: 40 }, (_, i) => `  compiling crate ${i}`).join('\n');
    const compilerError = 'error[E0308]: mismatched types in src/lexer.rs:12:5';
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta().preamble().turnContext().user('Build it');
    b.shell('call_plain', 'cargo build', `Exit code: 101\nWall time: 2.1 seconds\nOutput:\n${progress}\n${compilerError}\n`);
    const plain = b.nextLine - 1;
    b.shell('call_unified', 'npm test', `Chunk ID: 4f1a\nWall time: 0.4 seconds\nProcess exited with code 1\nOriginal token count: 90\nOutput:\n> vitest\nFAIL test/lexer.test.ts > reads numbers\n`);
    const unified = b.nextLine - 1;
    // An older build puts the exit code after the output, so a long output hides it from the head.
    const encoded = JSON.stringify({ output: `${progress}\nfatal: not a git repository\n`, metadata: { exit_code: 128, duration_seconds: 0.1 } });
    b.shell('call_encoded', 'git status', encoded);
    const older = b.nextLine - 1;
    b.shell('call_quiet', 'false', 'Exit code: 1\nWall time: 0 seconds\nOutput:\n');
    const quiet = b.nextLine - 1;
    b.shell('call_ok', 'cargo build', `Exit code: 0\nWall time: 2.1 seconds\nOutput:\n${progress}\nwarning: unused error: variable\n`);
    const ok = b.nextLine - 1;
    b.shell('call_quoted', 'cat ci.log', 'Exit code: 0\nWall time: 0 seconds\nOutput:\nstep 1\nExit code: 3\n');
    const quoted = b.nextLine - 1;
    b.shell('call_headless', 'cat notes.txt', 'notes\nExit code: 3 means a lint failure\n');
    const headless = b.nextLine - 1;
    const t = await run(write(b));
    const summary = (line: number) => t.items[line]!.summary;
    expect(summary(plain)).toMatch(/^exec_command cmd=cargo build -> \d+ bytes, failed with exit 101: error\[E0308\]: mismatched types in src\/lexer\.rs:12:5$/);
    expect(summary(unified)).toMatch(/, failed with exit 1: FAIL test\/lexer\.test\.ts > reads numbers$/);
    expect(summary(older)).toMatch(/, failed with exit 128: fatal: not a git repository$/);
    expect(summary(quiet)).toMatch(/, failed with exit 1$/);
    expect(summary(ok)).toMatch(/, exit 0$/);
    // An exit code the command's own text quotes is not how the command ended.
    expect(summary(quoted)).toMatch(/ -> \d+ bytes, exit 0$/);
    expect(summary(headless)).toMatch(/ -> \d+ bytes$/);
  });

  it('names what a call acted on in its summary and its output\'s: the command, the path, the patched file', async () => {
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta().preamble().turnContext().user('Look around');
    b.response(item.functionCall('call_argv', 'shell', { command: ['bash', '-lc', 'ls src'], timeout_ms: 1000 }));
    b.response(item.functionOutput('call_argv', 'a.ts\nb.ts'));
    const argvOutput = b.nextLine - 1;
    b.response(item.functionCall('call_view', 'view_image', { path: '/work/project/shot.png' }));
    const view = b.nextLine - 1;
    b.response(item.functionCall('call_plan', 'update_plan', { plan: [], explanation: 'x' }));
    const plan = b.nextLine - 1;
    b.response({ type: 'function_call', name: 'exec_command', arguments: '{not json', call_id: 'call_bad' });
    const bad = b.nextLine - 1;
    b.response(item.customCall('call_patch', 'apply_patch', '*** Begin Patch\n*** Update File: src/lexer.ts\n@@\n-a\n+b\n*** End Patch'));
    b.response(item.customOutput('call_patch', 'Success. Updated the following files:\nM src/lexer.ts'));
    const patchOutput = b.nextLine - 1;
    b.response(item.functionOutput('call_unknown', 'orphan'));
    const orphan = b.nextLine - 1;
    const t = await run(write(b));
    const summary = (line: number) => t.items[line]!.summary;
    expect(summary(argvOutput - 1)).toBe('shell command=bash -lc ls src');
    expect(summary(argvOutput)).toBe('shell command=bash -lc ls src -> 9 bytes');
    expect(summary(view)).toBe('view_image path=/work/project/shot.png');
    expect(summary(plan)).toBe('update_plan(plan, explanation)');
    expect(summary(bad)).toBe('exec_command(9 chars)');
    expect(summary(patchOutput - 1)).toBe('apply_patch Update File: src/lexer.ts');
    expect(summary(patchOutput)).toBe('apply_patch Update File: src/lexer.ts -> 52 bytes');
    expect(summary(orphan)).toBe('tool_output -> 6 bytes');
    for (const i of t.items) expect(i.label).not.toMatch(/lexer|src|bash/);
  });

  it('takes context from the newest last_token_usage and lifetime from total_token_usage, skipping info: null', async () => {
    const { builder } = legacySession();
    builder.tokenCount(null);
    const t = await run(write(builder));
    expect(t.usage).toMatchObject({
      context_state: 'reported',
      context_tokens: 12345,
      lifetime_input_tokens: 21000,
      lifetime_cached_tokens: 12000,
      lifetime_scope: 'full',
      model_context_window: 258400,
      model: 'gpt-5.3-codex',
    });
    expect(t.findings).toEqual([]);
  });

  it('reports usage absent when nothing was reported', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('hello').tokenCount(null);
    const t = await run(write(b));
    expect(t.usage).toMatchObject({ context_state: 'absent', context_tokens: 0, lifetime_scope: 'absent' });
  });
});

describe('provider-codex parse: paginated rollouts', () => {
  it('parses 0.171 shapes: ordinals, world_state, input_text array outputs', async () => {
    const { builder, lines } = paginatedSession();
    const t = await run(write(builder));
    expect(validateTranscript(t)).toBe(true);
    expect(t.findings).toEqual([]);
    expect(t.items[lines.patchOutputArray!]).toMatchObject({ kind: 'tool_result', label: 'apply_patch', elidable_bytes: BIG_PATCH_OUTPUT.length + 'tail note'.length, elidable_parts: 1 });
    expect(t.items[lines.patchOutputString]).toMatchObject({ elidable_bytes: BIG_PATCH_OUTPUT.length });
    expect(t.usage).toMatchObject({ context_tokens: 30500, model_context_window: 272000, context_state: 'reported' });
    expect(t.items[1]).toMatchObject({ kind: 'meta', est_tokens: 0, record_type: 'world_state' });
  });

  it('leaves the client\'s own bookkeeping on an item and a compaction\'s envelope out of the estimate', async () => {
    const history: Payload[] = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Earlier question' }], internal_chat_message_metadata_passthrough: { turn_id: 'turn-1', kinds: ['input_text'] } },
      { type: 'function_call_output', call_id: 'c0', output: filler(600) },
    ];
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta();
    const compactedLine = b.nextLine;
    b.compacted(history);
    const userLine = b.nextLine;
    const bookkeeping = { turn_id: 'turn-2', kinds: ['input_text'], note: 'x'.repeat(400) };
    b.response({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Next question' }], internal_chat_message_metadata_passthrough: bookkeeping });
    const t = await run(write(b));
    const tokens = (value: unknown) => Math.ceil(Buffer.byteLength(JSON.stringify(value)) / 4);
    expect(t.items[userLine]!.est_tokens).toBe(tokens({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Next question' }] }));
    const withoutBookkeeping = history.map(({ internal_chat_message_metadata_passthrough: _kept, ...rest }) => rest);
    expect(t.items[compactedLine]!.est_tokens).toBe(tokens(withoutBookkeeping));
  });

  it('does not treat an array output holding an image as elidable', async () => {
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta().user('look').response(item.customCall('c1', 'view_image', 'x.png'));
    const line = b.nextLine;
    b.response({ type: 'custom_tool_call_output', call_id: 'c1', output: [{ type: 'input_text', text: filler(500) }, { type: 'input_image', image_url: 'data:' }] });
    const t = await run(write(b));
    expect(t.items[line]!.kind).toBe('tool_result');
    expect(t.items[line]!.elidable_bytes ?? null).toBeNull();
  });
});

describe('provider-codex parse: compacted windows', () => {
  for (const paginated of [false, true]) {
    it(`zeroes records behind the newest compaction and counts the history's outputs (${paginated ? 'paginated' : 'legacy'})`, async () => {
      const { builder, lines } = compactedSession({ paginated });
      const t = await run(write(builder));
      expect(t.findings).toEqual([]);
      for (const i of t.items.filter((x) => x.line_index < lines.compacted)) {
        expect(i.est_tokens).toBe(0);
        expect(i.elidable_bytes ?? null).toBeNull();
      }
      expect(t.items[lines.compacted]).toMatchObject({ kind: 'tool_result', label: 'compacted', elidable_bytes: 600, elidable_parts: 1 });
      // Its history's calls and outputs go back to the model as items of their own.
      expect(t.items[lines.compacted]!.replayed).toEqual({ tool_calls: 2, tool_results: 1 });
      expect(t.items.filter((i) => i.line_index !== lines.compacted).every((i) => i.replayed === undefined)).toBe(true);
      expect(t.items[lines.compacted]!.est_tokens).toBeGreaterThan(0);
      expect(t.items[lines.answeredAfter]).toMatchObject({ kind: 'tool_result', tool_use_ids: ['call_pending'] });
      expect(t.items[lines.answeredAfter]!.est_tokens).toBeGreaterThan(0);
      expect(t.items[lines.liveOutput]).toMatchObject({ elidable_bytes: 900 });
      expect(t.usage).toMatchObject({ context_state: 'reported', context_tokens: 20300, lifetime_input_tokens: 420000 });
    });
  }

  it("counts a history's outputs only with their calls, and nothing on an older compaction", async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble();
    const older = b.nextLine;
    b.compacted([item.user('a'), item.functionCall('c1', 'exec_command', { cmd: 'ls' }), item.functionOutput('c1', 'x')]);
    const newest = b.nextLine;
    b.compacted([
      item.user('a'),
      item.functionOutput('c_orphan', 'dropped by the client'),
      item.functionOutput('c3', 'its call comes later; the client pairs them anyway'),
      item.functionCall('c2', 'exec_command', { cmd: 'ls' }),
      item.functionOutput('c2', 'y'),
      item.functionCall('c3', 'exec_command', { cmd: 'pwd' }),
    ]);
    const t = await run(write(b));
    expect(t.items[newest]!.replayed).toEqual({ tool_calls: 2, tool_results: 2 });
    expect(t.items[older]!.replayed).toBeUndefined();
  });

  it('reports a reset context when a compaction follows the newest report', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('a').tokenCount({ input: 5000, output: 10 }, { input: 9000, cached: 100, output: 20 }).compacted([item.user('a'), item.user('summary')]);
    const t = await run(write(b));
    expect(t.usage).toMatchObject({ context_state: 'reset', context_tokens: 0, lifetime_input_tokens: 9000, model_context_window: 258400 });
  });

  it('keeps the reset when the client reports an all-zero last usage right after the compaction', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('a').tokenCount({ input: 5000, output: 10 }, { input: 9000, cached: 100, output: 20 });
    b.tokenCount({ input: 0, output: 0 }, { input: 9000, cached: 100, output: 20 }).compacted([item.user('a'), item.user('summary')]);
    b.tokenCount({ input: 0, output: 0 }, { input: 9500, cached: 100, output: 20 });
    const path = write(b);
    const t = await run(path);
    expect(t.usage).toMatchObject({ context_state: 'reset', context_tokens: 0, lifetime_input_tokens: 9500 });
    expect(usage({ provider_id: 'codex', path }).usage).toEqual(t.usage);
  });

  it('does not move the window for a compacted record the client cannot load', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('a').shell('c1', 'ls', filler(400));
    const bad = b.nextLine;
    b.push('compacted', { message: '', replacement_history: [item.user('a'), 7] });
    const t = await run(write(b));
    expect(t.items[bad]).toMatchObject({ kind: 'meta', est_tokens: 0 });
    expect(t.items[bad - 1]).toMatchObject({ elidable_bytes: 400 });
    expect(t.items[bad - 1]!.est_tokens).toBeGreaterThan(0);
  });

  it('reads a summary-only compaction, as older clients wrote them, as the start of a new window', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble().user('Run the tests').shell('c1', 'npm test', filler(4000));
    b.tokenCount({ input: 5000, output: 10 }, { input: 9000, cached: 100, output: 20 });
    const compaction = b.nextLine;
    b.push('compacted', { message: 'Summary: the tests ran.' }).push('event_msg', { type: 'context_compacted' });
    b.user('and now?').shell('c2', 'npm run lint', filler(3000));
    const t = await run(write(b));
    expect(t.findings).toEqual([]);
    // The client sends nothing before it again but the user messages, carried into the rebuilt window.
    for (const i of t.items.filter((x) => x.line_index < compaction)) {
      expect(i.est_tokens).toBe(0);
      expect(i.elidable_bytes ?? null).toBeNull();
    }
    expect(t.items[compaction]).toMatchObject({ kind: 'system', label: 'compacted' });
    expect(t.items[compaction]!.est_tokens).toBeGreaterThan(Math.ceil('Summary: the tests ran.'.length / 4));
    expect(t.items.filter((i) => (i.elidable_bytes ?? 0) > 0).map((i) => i.elidable_bytes)).toEqual([3000]);
    expect(t.usage).toMatchObject({ context_state: 'reset', context_tokens: 0, lifetime_input_tokens: 9000 });
  });

  it('leaves the turns a rollback took back out of the context: nothing in them is counted or offered for elision', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble().user('first').shell('c1', 'cat a', filler(4000)).assistant('read a');
    const second = b.nextLine;
    b.user('second').shell('c2', 'cat b', filler(3000)).assistant('read b');
    b.user('third').shell('c3', 'cat c', filler(2500));
    const rollback = b.nextLine;
    b.push('event_msg', { type: 'thread_rolled_back', num_turns: 2 });
    b.user('second, again').shell('c4', 'cat d', filler(2000)).assistant('read d');
    const t = await run(write(b));
    expect((t.findings ?? []).filter((f) => f.severity === 'error')).toEqual([]);
    const taken = t.items.filter((i) => i.line_index >= second && i.line_index < rollback);
    expect(taken.length).toBeGreaterThan(0);
    for (const i of taken) {
      expect(i.est_tokens).toBe(0);
      expect(i.elidable_bytes ?? null).toBeNull();
    }
    // The first turn and the one after the rollback are the context.
    expect(t.items.filter((i) => (i.elidable_bytes ?? 0) > 0).map((i) => i.elidable_bytes)).toEqual([4000, 2000]);
  });

  it('counts back past the messages the client writes itself (an interrupted turn, a ! command) to the user turn a rollback takes', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble().user('first').shell('c1', 'cat a', filler(4000)).assistant('read a');
    const second = b.nextLine;
    b.user('second').shell('c2', 'cat b', filler(3000));
    b.response(item.user('<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>'));
    b.response(item.user('<user_shell_command>\n<command>\nls\n</command>\n<result>\na.txt\n</result>\n</user_shell_command>'));
    const rollback = b.nextLine;
    b.push('event_msg', { type: 'thread_rolled_back', num_turns: 1 });
    const t = await run(write(b));
    for (const i of t.items.filter((x) => x.line_index >= second && x.line_index < rollback)) expect(i.est_tokens).toBe(0);
    expect(t.items.filter((i) => (i.elidable_bytes ?? 0) > 0).map((i) => i.elidable_bytes)).toEqual([4000]);
  });

  it('does not take the report before a rollback for the context: it still counts the turns taken back', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble().user('first').shell('c1', 'cat a', filler(4000)).assistant('read a');
    b.user('second').shell('c2', 'cat b', filler(30_000)).assistant('read b').tokenCount({ input: 12_000, output: 50 }, { input: 20_000, output: 80 });
    b.push('event_msg', { type: 'thread_rolled_back', num_turns: 1 });
    const path = write(b);
    const t = await run(path);
    expect(t.usage).toMatchObject({ context_state: 'reset', context_tokens: 0, lifetime_input_tokens: 20_000 });
    expect(usage({ provider_id: 'codex', path }).usage).toEqual(t.usage);
    // The next report measures what is left, and counts again.
    b.user('second, again').tokenCount({ input: 2_500, output: 40 }, { input: 22_500, output: 120 });
    expect((await run(write(b))).usage).toMatchObject({ context_state: 'reported', context_tokens: 2_540 });
  });

  it('ignores a rollback of no turns, or of more turns than the window holds past its own start', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble().user('first').shell('c1', 'cat a', filler(4000));
    b.push('event_msg', { type: 'thread_rolled_back', num_turns: 0 });
    b.push('event_msg', { type: 'thread_rolled_back', num_turns: 'one' });
    expect((await run(write(b))).items.filter((i) => (i.elidable_bytes ?? 0) > 0).map((i) => i.elidable_bytes)).toEqual([4000]);
    const all = new RolloutBuilder();
    all.sessionMeta().turnContext().preamble().user('first').shell('c1', 'cat a', filler(4000));
    all.push('event_msg', { type: 'thread_rolled_back', num_turns: 5 });
    all.user('again').shell('c2', 'cat b', filler(1000));
    expect((await run(write(all))).items.filter((i) => (i.elidable_bytes ?? 0) > 0).map((i) => i.elidable_bytes)).toEqual([1000]);
  });

  it('makes every item inert and usage unknown when call ids are ambiguous', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('a').shell('dup', 'ls', filler(400)).shell('dup', 'ls', filler(400)).tokenCount({ input: 100, output: 1 });
    const t = await run(write(b));
    expect(t.items.every((i) => i.est_tokens === 0 && (i.elidable_bytes ?? null) === null)).toBe(true);
    expect(t.usage).toMatchObject({ context_state: 'unknown', context_reason: 'invalid_record' });
    expect(t.findings!.map((f) => f.code)).toContain('duplicate_tool_call_id');
  });
});

describe('provider-codex parse: odd records never crash', () => {
  it('keeps unparseable and foreign lines as meta items with findings', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().raw('not json').raw('').raw('42').raw('{"type":7}').push('response_item', { type: 'function_call_output', call_id: 'x', output: 12 });
    b.push('event_msg', { type: 'token_count', info: { last_token_usage: { input_tokens: 'many', output_tokens: 1 } } });
    b.push('unknown_future_record', { anything: true }).user('fine');
    const t = await run(write(b));
    expect(validateTranscript(t), JSON.stringify(validateTranscript.errors)).toBe(true);
    expect(t.items).toHaveLength(b.lineCount);
    expect(t.items.slice(1, 5).map((i) => [i.kind, i.est_tokens])).toEqual([['meta', 0], ['meta', 0], ['meta', 0], ['meta', 0]]);
    expect(t.findings!.map((f) => [f.code, f.line_index])).toEqual(
      expect.arrayContaining([['invalid_json', 1], ['blank_line', 2], ['invalid_record', 3], ['invalid_record', 4], ['orphaned_tool_result', 5]]),
    );
    expect(t.usage).toMatchObject({ context_state: 'unknown', context_reason: 'malformed_component' });
  });

  it('a line of only spaces or tabs is a blank line (a warning), as in Claude files, not broken JSON', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('hi');
    const blank = b.lineCount;
    b.raw('   ').raw('\t').raw(' \r').user('again');
    const t = await run(write(b));
    expect(t.findings!.filter((f) => f.code === 'blank_line' || f.code === 'invalid_json').map((f) => [f.severity, f.code, f.line_index])).toEqual([
      ['warning', 'blank_line', blank],
      ['warning', 'blank_line', blank + 1],
      ['warning', 'blank_line', blank + 2],
    ]);
  });

  it('cuts long first lines into bounded summaries without splitting characters', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('é'.repeat(2000));
    const t = await run(write(b));
    const summary = t.items.find((i) => i.kind === 'user')!.summary!;
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(256);
    expect(summary).toMatch(/^é+$/);
  });

  it('reads the dialects-v1 shape: a string message content and a token_usage_record', async () => {
    const path = join(dir, 'window.jsonl');
    writeFileSync(
      path,
      [
        '{"type":"session_meta","ordinal":0,"payload":{"id":"fixture","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/project","originator":"codex_cli_rs","cli_version":"0.171.0"}}',
        '{"type":"token_usage_record","payload":{"usage":{"input_tokens":100,"output_tokens":7},"thread_token_usage":{"input_tokens":500,"cached_input_tokens":900}}}',
        '{"type":"response_item","ordinal":2,"payload":{"type":"message","role":"user","content":"Live goal."}}',
      ].join('\n') + '\n',
    );
    const t = await run(path);
    expect(t.items[2]).toMatchObject({ kind: 'user', summary: 'Live goal.' });
    expect(t.usage).toMatchObject({ context_tokens: 107, lifetime_input_tokens: 500, lifetime_cached_tokens: 500 });
  });
});

describe('provider-codex parse: long tool outputs count as the client sends them', () => {
  /** A session with one shell output per size, under an optional recorded truncation policy. */
  function outputs(sizes: number[], policy?: { mode: string; limit: number }) {
    const b = new RolloutBuilder();
    b.sessionMeta();
    if (policy) b.push('turn_context', { turn_id: 't1', cwd: '/work/project', model: 'gpt-5.3-codex', truncation_policy: policy });
    else b.turnContext();
    b.preamble();
    sizes.forEach((size, k) => b.user(`step ${k}`).shell(`call_${k}`, `cat f${k}`, 'z'.repeat(size)));
    return b;
  }
  const outputItems = async (b: RolloutBuilder) => (await run(write(b))).items.filter((i) => i.kind === 'tool_result');

  it('cuts outputs over 48,000 bytes to that budget when the rollout records no policy, and keeps every byte elidable', async () => {
    const [short, atLimit, long] = await outputItems(outputs([20_000, 48_000, 200_000]));
    expect(short!.est_tokens).toBeGreaterThan(5_000);
    expect(short!.est_tokens).toBeLessThan(5_100);
    // At the budget nothing is cut; beyond it the output costs the budget, not its size.
    expect(atLimit!.est_tokens).toBeGreaterThan(12_000);
    expect(long!.est_tokens).toBeGreaterThan(12_000);
    expect(long!.est_tokens).toBeLessThan(12_100);
    expect(long!.elidable_bytes).toBe(200_000);
  });

  it('follows the newest recorded policy, in tokens or in bytes', async () => {
    const [byTokens] = await outputItems(outputs([200_000], { mode: 'tokens', limit: 2_000 }));
    expect(byTokens!.est_tokens).toBeGreaterThan(2_400);
    expect(byTokens!.est_tokens).toBeLessThan(2_500);
    const [byBytes] = await outputItems(outputs([200_000], { mode: 'bytes', limit: 10_000 }));
    expect(byBytes!.est_tokens).toBeGreaterThan(3_000);
    expect(byBytes!.est_tokens).toBeLessThan(3_100);
  });
});

describe('provider-codex parse: a large rollout', () => {
  it('is hashed on another thread while it is parsed, to the same sha256 and transcript as the bytes', async () => {
    const path = join(dir, 'rollout-2026-02-23T12-54-34-019c9999-0000-7000-8000-000000000017.jsonl');
    writeLargeRollout(path, { records: 14_000, bytes: 17 * 1024 * 1024, id: '019c9999-0000-7000-8000-000000000017' });
    const bytes = readFileSync(path);
    expect(bytes.length).toBeGreaterThan(16 * 1024 * 1024);
    const t = await parse({ provider_id: 'codex', path });
    expect(t.source_sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(t.items.length).toBe(14_000);
    // The same file parsed as a smaller one is (hashed on the reading thread) gives the same items.
    const small = join(dir, 'rollout-2026-02-23T12-54-34-019c9999-0000-7000-8000-000000000018.jsonl');
    writeFileSync(small, bytes.subarray(0, bytes.indexOf(0x0a, 8 * 1024 * 1024) + 1));
    const head = await parse({ provider_id: 'codex', path: small });
    expect(head.items).toEqual(t.items.slice(0, head.items.length));
    await expect(parse({ provider_id: 'codex', path, expected_sha256: 'f'.repeat(64) })).rejects.toThrow(/expected sha256/);
  });
});
