import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { render } from '../../../plugins/provider-codex/src/render.js';
import { verify } from '../../../plugins/provider-codex/src/verify.js';
import { parseStateCard, type Edit, type ProviderRenderParams } from '../../../sdk/index.js';
import { validateProviderRenderResult } from '../../../schemas/generated/validators.js';
import { RolloutBuilder, filler, item, type Payload } from '../../fixtures/codex/rollout-builder.js';
import { compactedSession, legacySession, paginatedSession } from '../../fixtures/codex/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'codex-render-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const STUB = '[output elided by gobstopper: {bytes} bytes]';
const NOW = '2026-03-01T10:00:00.000Z';
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

function setup(b: RolloutBuilder, text?: string) {
  const d = join(dir, String(n++));
  const source = b.writeTo(d, { text });
  const staging = join(d, 'staging.jsonl');
  writeFileSync(staging, '');
  const sourceText = readFileSync(source, 'utf8');
  return { source, staging, sourceText };
}

function params(source: string, staging: string, sourceText: string, edits: Edit[], extra: Partial<ProviderRenderParams> = {}): ProviderRenderParams {
  return { provider_id: 'codex', path: source, source_sha256: sha(sourceText), edits, staging_path: staging, new_session_id: null, now: NOW, ...extra };
}

const elide = (lines: number[], per?: Record<string, string>): Edit => ({ op: 'elide', line_indexes: lines, stub_template: STUB, ...(per ? { per_item_stubs: per } : {}) });
const digest: Edit = { op: 'inject_digest', digest: { goal: 'Add a --json flag', files_touched: ['src/cli.ts'], open_tasks: ['update docs'], covers_items: 12 } };

describe('provider-codex render: elide', () => {
  it('replaces a string output with the stub and copies every other line byte for byte', async () => {
    const { builder, lines } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    const result = await render(params(source, staging, sourceText, [elide([lines.shellOutput])]));
    expect(validateProviderRenderResult(result)).toBe(true);
    const out = readFileSync(staging, 'utf8');
    expect(result).toMatchObject({ bytes: Buffer.byteLength(out), output_sha256: sha(out), record_count: builder.lineCount, elided_records: 1, appended_records: 0 });
    const a = sourceText.split('\n');
    const b = out.split('\n');
    expect(b).toHaveLength(a.length);
    for (let i = 0; i < a.length; i += 1) if (i !== lines.shellOutput) expect(b[i]).toBe(a[i]);
    const before = JSON.parse(a[lines.shellOutput]!);
    const after = JSON.parse(b[lines.shellOutput]!);
    expect(after.payload.output).toBe('[output elided by gobstopper: 1200 bytes]');
    after.payload.output = before.payload.output;
    expect(after).toEqual(before);
  });

  it('keeps the input_text array shape: stub in the first block, later blocks emptied', async () => {
    const { builder, lines } = paginatedSession();
    const { source, staging, sourceText } = setup(builder);
    await render(params(source, staging, sourceText, [elide([lines.patchOutputArray!, lines.patchOutputString])]));
    const out = readFileSync(staging, 'utf8').split('\n');
    expect(JSON.parse(out[lines.patchOutputArray!]!).payload.output).toEqual([
      { type: 'input_text', text: '[output elided by gobstopper: 709 bytes]' },
      { type: 'input_text', text: '' },
    ]);
    expect(JSON.parse(out[lines.patchOutputString]!).payload.output).toBe('[output elided by gobstopper: 700 bytes]');
    const v = await verify({ provider_id: 'codex', path: staging });
    expect(v.findings.filter((f) => f.code !== 'file_name_without_id')).toEqual([]);
  });

  it('uses per-item stubs verbatim', async () => {
    const { builder, lines } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    await render(params(source, staging, sourceText, [elide([lines.shellOutput], { [lines.shellOutput]: '[parser.ts listing, 40 lines]' })]));
    expect(JSON.parse(readFileSync(staging, 'utf8').split('\n')[lines.shellOutput]!).payload.output).toBe('[parser.ts listing, 40 lines]');
  });

  it('elides eligible outputs inside a compacted replacement history, and only those', async () => {
    const { builder, lines } = compactedSession();
    const { source, staging, sourceText } = setup(builder);
    const result = await render(params(source, staging, sourceText, [elide([lines.compacted, lines.liveOutput])]));
    expect(result.elided_records).toBe(2);
    const history = JSON.parse(readFileSync(staging, 'utf8').split('\n')[lines.compacted]!).payload.replacement_history;
    expect(history[3].output).toBe('[output elided by gobstopper: 600 bytes]');
    expect(history.filter((h: { type: string }) => h.type !== 'function_call_output')).toEqual(
      JSON.parse(sourceText.split('\n')[lines.compacted]!).payload.replacement_history.filter((h: { type: string }) => h.type !== 'function_call_output'),
    );
    const t = await parse({ provider_id: 'codex', path: staging });
    expect(t.items[lines.compacted]!.elidable_bytes ?? null).toBeNull();
    expect(t.items[lines.liveOutput]!.elidable_bytes ?? null).toBeNull();
  });

  it('is a fixed point: eliding the rendered copy again changes nothing', async () => {
    const { builder, lines } = legacySession();
    const first = setup(builder);
    await render(params(first.source, first.staging, first.sourceText, [elide([lines.shellOutput, lines.patchOutputString])]));
    const once = readFileSync(first.staging, 'utf8');
    const second = join(dir, `again-${n++}.jsonl`);
    writeFileSync(second, '');
    const result = await render(params(first.staging, second, once, [elide([lines.shellOutput, lines.patchOutputString])]));
    expect(result.elided_records).toBe(0);
    expect(readFileSync(second, 'utf8')).toBe(once);
  });

  it('keeps how the command ended when an older build wrote the output as {"output", "metadata"} JSON', async () => {
    const b = new RolloutBuilder({ paginated: false });
    b.sessionMeta().preamble().turnContext().tokenCount(null);
    b.user('Run the tests');
    b.shell('call_test', 'npm test', null);
    const line = b.nextLine;
    const metadata = { exit_code: 1, duration_seconds: 2.5 };
    const encoded = JSON.stringify({ output: 'FAILED tests/parser.test.ts\n' + filler(1500), metadata });
    b.response(item.functionOutput('call_test', encoded));
    b.assistant('One test fails.');
    const first = setup(b);
    const result = await render(params(first.source, first.staging, first.sourceText, [elide([line])]));
    expect(result.elided_records).toBe(1);
    const once = readFileSync(first.staging, 'utf8');
    const output = JSON.parse(once.split('\n')[line]!).payload.output;
    expect(JSON.parse(output)).toEqual({ output: `[output elided by gobstopper: ${Buffer.byteLength(encoded)} bytes]`, metadata });
    expect(once).not.toContain('FAILED tests/parser.test.ts');
    expect((await verify({ provider_id: 'codex', path: first.staging })).findings.filter((f) => f.severity === 'error')).toEqual([]);
    // Eliding the rendered copy again changes nothing.
    const second = join(dir, `again-${n++}.jsonl`);
    writeFileSync(second, '');
    expect((await render(params(first.staging, second, once, [elide([line])]))).elided_records).toBe(0);
    expect(readFileSync(second, 'utf8')).toBe(once);
  });

  it('replaces a string that only looks like {"output", "metadata"} JSON whole', async () => {
    const b = new RolloutBuilder({ paginated: false });
    b.sessionMeta().preamble().turnContext().tokenCount(null);
    b.user('Show the config');
    b.shell('call_cat', 'cat config.json', null);
    const line = b.nextLine;
    const text = JSON.stringify({ output: filler(800), metadata: { exit_code: 0 }, extra: true });
    b.response(item.functionOutput('call_cat', text));
    const s = setup(b);
    await render(params(s.source, s.staging, s.sourceText, [elide([line])]));
    expect(JSON.parse(readFileSync(s.staging, 'utf8').split('\n')[line]!).payload.output).toBe(`[output elided by gobstopper: ${Buffer.byteLength(text)} bytes]`);
  });

  it('refuses a line that holds no replaceable output, and lines past the end', async () => {
    const { builder } = legacySession();
    const a = setup(builder);
    await expect(render(params(a.source, a.staging, a.sourceText, [elide([0])]))).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('line 0') });
    const b = setup(builder);
    await expect(render(params(b.source, b.staging, b.sourceText, [elide([9999])]))).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('past the end') });
  });

  it('answers source_changed when the bytes are not the ones the plan was made for', async () => {
    const { builder, lines } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    await expect(render(params(source, staging, sourceText + 'x', [elide([lines.shellOutput])]))).rejects.toMatchObject({ code: -32001 });
    expect(readFileSync(source, 'utf8')).toBe(sourceText);
  });

  it('writes only into an empty staging file', async () => {
    const { builder, lines } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    writeFileSync(staging, 'already here');
    await expect(render(params(source, staging, sourceText, [elide([lines.shellOutput])]))).rejects.toMatchObject({ code: -32002 });
    expect(readFileSync(staging, 'utf8')).toBe('already here');
  });
});

describe('provider-codex render: inject_digest', () => {
  it('appends the card with the next ordinal and a real timestamp on a paginated rollout', async () => {
    const { builder } = paginatedSession();
    const { source, staging, sourceText } = setup(builder);
    const result = await render(params(source, staging, sourceText, [digest]));
    expect(result).toMatchObject({ appended_records: 1, record_count: builder.lineCount + 1 });
    const out = readFileSync(staging, 'utf8');
    expect(out.startsWith(sourceText)).toBe(true);
    const appended = JSON.parse(out.slice(sourceText.length));
    expect(Object.keys(appended)).toEqual(['timestamp', 'ordinal', 'type', 'payload']);
    expect(appended).toMatchObject({ timestamp: NOW, ordinal: builder.lineCount, type: 'response_item', payload: { type: 'message', role: 'user' } });
    expect(appended.payload.content).toHaveLength(1);
    expect(appended.payload.content[0].type).toBe('input_text');
    expect(parseStateCard(appended.payload.content[0].text)).toMatchObject({ goal: 'Add a --json flag', files_touched: ['src/cli.ts'], covers_items: 12 });
    const v = await verify({ provider_id: 'codex', path: staging });
    expect(v.findings.filter((f) => f.code !== 'file_name_without_id')).toEqual([]);
  });

  it('appends without an ordinal on a legacy rollout', async () => {
    const { builder } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    await render(params(source, staging, sourceText, [digest]));
    const appended = JSON.parse(readFileSync(staging, 'utf8').slice(sourceText.length));
    expect(Object.keys(appended)).toEqual(['timestamp', 'type', 'payload']);
    const t = await parse({ provider_id: 'codex', path: staging });
    expect(t.items.at(-1)).toMatchObject({ kind: 'user', summary: '[gobstopper state card]' });
  });

  it('terminates an unterminated final line before appending, and refuses to append after a torn one', async () => {
    const { builder } = legacySession();
    const whole = setup(builder, builder.text().slice(0, -1));
    await render(params(whole.source, whole.staging, whole.sourceText, [digest]));
    const out = readFileSync(whole.staging, 'utf8');
    expect(out.startsWith(whole.sourceText + '\n')).toBe(true);
    const torn = setup(builder, builder.text() + '{"timestamp":"2026');
    await expect(render(params(torn.source, torn.staging, torn.sourceText, [digest]))).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('torn') });
  });

  it('refuses to append after a final line that is not JSON even when a newline ends it, and copies it when nothing is appended', async () => {
    const { builder, lines } = legacySession();
    const torn = setup(builder, builder.text() + '{"timestamp":"2026-03-01T09:00:00.000Z","type":"response_item","payload":{"type":"mess\n');
    const before = (await verify({ provider_id: 'codex', path: torn.source })).findings.filter((f) => f.severity !== 'info');
    expect(before.map((f) => [f.code, f.severity])).toContainEqual(['torn_final_line', 'warning']);
    await expect(render(params(torn.source, torn.staging, torn.sourceText, [elide([lines.shellOutput]), digest]))).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('torn') });
    await render(params(torn.source, torn.staging, torn.sourceText, [elide([lines.shellOutput])]));
    const after = (await verify({ provider_id: 'codex', path: torn.staging })).findings.filter((f) => f.severity !== 'info');
    expect(after.map((f) => [f.code, f.severity, f.line_index])).toEqual(before.map((f) => [f.code, f.severity, f.line_index]));
    // A blank last line is no torn write: the card goes after it.
    const blank = setup(builder, builder.text() + '  \n');
    await render(params(blank.source, blank.staging, blank.sourceText, [digest]));
    expect(readFileSync(blank.staging, 'utf8').startsWith(blank.sourceText)).toBe(true);
  });

  it('adds no finding when the session stopped during a call (the client answers it "aborted" either way)', async () => {
    const { builder } = paginatedSession();
    builder.shell('call_cut', 'sleep 100', null);
    const { source, staging, sourceText } = setup(builder);
    const before = (await verify({ provider_id: 'codex', path: source })).findings;
    expect(before.map((f) => f.code)).toEqual(['unpaired_tool_call']);
    await render(params(source, staging, sourceText, [digest]));
    const after = (await verify({ provider_id: 'codex', path: staging })).findings.filter((f) => f.code !== 'file_name_without_id');
    expect(after.map((f) => [f.code, f.severity, f.line_index])).toEqual(before.map((f) => [f.code, f.severity, f.line_index]));
  });

  it('renders nothing for control-plane edits', async () => {
    const { builder } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    const result = await render(params(source, staging, sourceText, [{ op: 'provider_compact', control: 'thread/compact/start' }, { op: 'cache_edit', tool_use_ids: ['x'] }]));
    expect(readFileSync(staging, 'utf8')).toBe(sourceText);
    expect(result).toMatchObject({ elided_records: 0, appended_records: 0 });
  });
});

describe('provider-codex render: new session id', () => {
  it('rewrites payload.id and payload.session_id of the thread\'s session_meta only', async () => {
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta({ session_id: b.id, forked_from_id: 'parent-1' }).user(`mention ${b.id} in text`);
    b.push('session_meta', { id: 'another-thread', cwd: '/x' });
    b.shell('c1', 'ls', filler(300));
    const { source, staging, sourceText } = setup(b);
    const newId = '019e0000-1111-7222-8333-444455556666';
    await render(params(source, staging, sourceText, [], { new_session_id: newId }));
    const a = sourceText.split('\n');
    const out = readFileSync(staging, 'utf8').split('\n');
    expect(out[0]).toBe(a[0]!.replaceAll(b.id, newId));
    expect(JSON.parse(out[0]!).payload.forked_from_id).toBe('parent-1');
    for (let i = 1; i < a.length; i += 1) expect(out[i]).toBe(a[i]);
  });

  it('refuses an id that cannot be a file name', async () => {
    const { builder } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    await expect(render(params(source, staging, sourceText, [], { new_session_id: '../evil' }))).rejects.toMatchObject({ code: -32002 });
  });

  it('refuses a stub template that spans lines', async () => {
    const { builder, lines } = legacySession();
    const { source, staging, sourceText } = setup(builder);
    await expect(render(params(source, staging, sourceText, [{ op: 'elide', line_indexes: [lines.shellOutput], stub_template: 'a\nb' }]))).rejects.toMatchObject({ code: -32002 });
  });
});

describe('provider-codex render: appended record shape matches a hand-built client append', () => {
  it('equals the record a test would append by hand for resume (ordinal = last + 1, ISO timestamp)', async () => {
    const { builder } = paginatedSession();
    const { source, staging, sourceText } = setup(builder);
    await render(params(source, staging, sourceText, [digest]));
    const appended = readFileSync(staging, 'utf8').slice(sourceText.length).trimEnd();
    const lastOrdinal = JSON.parse(sourceText.trimEnd().split('\n').at(-1)!).ordinal;
    const card = JSON.parse(appended).payload.content[0].text;
    expect(appended).toBe(JSON.stringify({ timestamp: NOW, ordinal: lastOrdinal + 1, type: 'response_item', payload: item.user(card) }));
  });
});

describe('provider-codex render: line endings', () => {
  it('a CRLF rollout stays CRLF on every line, rewritten and appended ones included', async () => {
    const { builder, lines } = paginatedSession();
    const crlf = builder.text().replace(/\n/g, '\r\n');
    const { source, staging, sourceText } = setup(builder, crlf);
    await render(params(source, staging, sourceText, [elide([lines.patchOutputString]), digest], { new_session_id: '0199aaaa-0000-7000-8000-000000000001' }));
    const out = readFileSync(staging, 'utf8');
    const written = out.split('\n').slice(0, -1);
    expect(written).toHaveLength(builder.lineCount + 1);
    for (const line of written) expect(line.endsWith('\r'), line.slice(0, 80)).toBe(true);
    expect(JSON.parse(written[lines.patchOutputString]!).payload.output).toMatch(/^\[output elided by gobstopper/);
    expect((await verify({ provider_id: 'codex', path: staging })).findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('provider-codex render: bytes of a changed line that no edit changes', () => {
  const newId = '019e0000-1111-7222-8333-444455556666';

  it('keeps numbers past 2^53 and escapes as written in an elided line and a fork\'s session_meta', async () => {
    const { builder, lines } = legacySession();
    const plain = builder.text().split('\n');
    // Written as serde_json might: a u64 past 2^53, an escaped slash, a \u escape.
    plain[0] = plain[0]!.replace('"cwd":', '"seq":18446744073709551615,"note":"caf\\u00e9 \\/ bar","cwd":');
    plain[lines.shellOutput] = plain[lines.shellOutput]!.replace('"call_id":', '"big":12345678901234567890123,"call_id":');
    const { source, staging, sourceText } = setup(builder, plain.join('\n'));
    await render(params(source, staging, sourceText, [elide([lines.shellOutput])], { new_session_id: newId }));
    const out = readFileSync(staging, 'utf8').split('\n');
    const a = sourceText.split('\n');
    expect(out[0]).toBe(a[0]!.replaceAll(builder.id, newId));
    const output = JSON.parse(a[lines.shellOutput]!).payload.output as string;
    expect(out[lines.shellOutput]).toBe(a[lines.shellOutput]!.replace(JSON.stringify(output), JSON.stringify('[output elided by gobstopper: 1200 bytes]')));
    expect(out[lines.shellOutput]).toContain('"big":12345678901234567890123');
  });

  it('forks a rollout whose session_meta nests deeper than an encoder\'s stack', async () => {
    const { builder } = legacySession();
    const plain = builder.text().split('\n');
    const depth = 20_000;
    plain[0] = plain[0]!.replace('"cwd":', `"deep":${'['.repeat(depth)}${']'.repeat(depth)},"cwd":`);
    const { source, staging, sourceText } = setup(builder, plain.join('\n'));
    await render(params(source, staging, sourceText, [], { new_session_id: newId }));
    expect(readFileSync(staging, 'utf8')).toBe(sourceText.replaceAll(builder.id, newId));
  });

  it('keeps every byte of a replacement history but the outputs it elides', async () => {
    const { builder, lines } = compactedSession();
    const { source, staging, sourceText } = setup(builder);
    await render(params(source, staging, sourceText, [elide([lines.compacted])]));
    const before = sourceText.split('\n')[lines.compacted]!;
    const after = readFileSync(staging, 'utf8').split('\n')[lines.compacted]!;
    const history = JSON.parse(before).payload.replacement_history as { output?: unknown }[];
    const elided = JSON.parse(after).payload.replacement_history as { output?: unknown }[];
    let expected = before;
    history.forEach((entry, i) => {
      if (JSON.stringify(entry.output) !== JSON.stringify(elided[i]!.output)) expected = expected.replace(JSON.stringify(entry.output), JSON.stringify(elided[i]!.output));
    });
    expect(after).not.toBe(before);
    expect(after).toBe(expected);
  });

  it('encodes the whole record when the output it read is under a key written with escapes', async () => {
    const { builder, lines } = legacySession();
    const plain = builder.text().split('\n');
    // JSON.parse keeps the last "output", spelled with an escape; the plain one before it is dead.
    plain[lines.shellOutput] = plain[lines.shellOutput]!.replace('"output":', '"output":"short","outp\\u0075t":');
    const { source, staging, sourceText } = setup(builder, plain.join('\n'));
    await render(params(source, staging, sourceText, [elide([lines.shellOutput])]));
    const line = readFileSync(staging, 'utf8').split('\n')[lines.shellOutput]!;
    expect(JSON.parse(line).payload.output).toBe('[output elided by gobstopper: 1200 bytes]');
    expect(line).not.toContain('\\u0075');
  });
});

describe('provider-codex render: many changes in one line', () => {
  it('elides thousands of outputs of one replacement history in one walk of the line', async () => {
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta().user('go on');
    const history: Payload[] = [];
    for (let i = 0; i < 3000; i += 1) history.push(item.functionCall(`h${i}`, 'shell', { command: ['ls'] }), item.functionOutput(`h${i}`, `out ${i} ${filler(3000)}`));
    const line = b.nextLine;
    b.compacted(history);
    b.user('and now?');
    const { source, staging, sourceText } = setup(b);
    const result = await render(params(source, staging, sourceText, [elide([line])]));
    expect(result.elided_records).toBe(1);
    const before = JSON.parse(sourceText.split('\n')[line]!);
    const after = JSON.parse(readFileSync(staging, 'utf8').split('\n')[line]!);
    const outputs = after.payload.replacement_history.filter((h: { type: string }) => h.type === 'function_call_output');
    expect(outputs).toHaveLength(3000);
    for (const o of outputs) expect(o.output).toMatch(/^\[output elided by gobstopper: \d+ bytes\]$/);
    before.payload.replacement_history.forEach((h: { output?: unknown }, i: number) => {
      if (h.output !== undefined) h.output = after.payload.replacement_history[i].output;
    });
    expect(after).toEqual(before);
  });

  it('writes a record anew when a changed key is written twice, so no reader finds the old value', async () => {
    const { builder } = legacySession();
    const plain = builder.text().split('\n');
    plain[0] = plain[0]!.replace(`"id":"${builder.id}"`, `"id":"stale","id":"${builder.id}"`);
    const { source, staging, sourceText } = setup(builder, plain.join('\n'));
    const newId = '019e0000-1111-7222-8333-444455556666';
    await render(params(source, staging, sourceText, [], { new_session_id: newId }));
    const first = readFileSync(staging, 'utf8').split('\n')[0]!;
    expect(first).not.toContain('stale');
    expect(JSON.parse(first).payload.id).toBe(newId);
  });
});

describe('provider-codex render: an envelope written with escapes', () => {
  it('reads a session_meta whose type or key is spelled with escapes as the client does, and forks it', async () => {
    for (const spelling of ['"type":"session\\u005fmeta"', '"typ\\u0065":"session_meta"']) {
      const { builder } = legacySession();
      const plain = builder.text().split('\n');
      plain[0] = plain[0]!.replace('"type":"session_meta"', spelling);
      const { source, staging, sourceText } = setup(builder, plain.join('\n'));
      const newId = '019e0000-1111-7222-8333-444455556666';
      await render(params(source, staging, sourceText, [], { new_session_id: newId }));
      const first = readFileSync(staging, 'utf8').split('\n')[0]!;
      expect(JSON.parse(first).payload.id, spelling).toBe(newId);
    }
  });
});
