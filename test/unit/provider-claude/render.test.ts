import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTranscript } from '../../../plugins/provider-claude-code/src/parse.js';
import { renderCandidate } from '../../../plugins/provider-claude-code/src/render.js';
import { PluginErrorCodes } from '../../../sdk/protocol.js';
import { parseStateCard, STATE_CARD_MARKER } from '../../../sdk/state-card.js';
import type { DigestBlock, Edit } from '../../../schemas/generated/types.js';
import { validateProviderRenderResult } from '../../../schemas/generated/validators.js';
import { ClaudeSessionBuilder, longOutput } from '../../fixtures/claude/session-builder.js';
import { branchedSession, modernSession, oldSession, subagentTranscript } from '../../fixtures/claude/sessions.js';
import { parse, render, scratch, staging, STUB, verify } from './support.js';
import { elidableLines } from '../../helpers/elide-targets.js';

const tmp = scratch('claude-render-');
const digest: DigestBlock = { goal: 'Fix the parser', covers_items: 3, files_touched: ['src/parse.ts'], concepts: ['read'], decisions: [], errors: [], open_tasks: ['update changelog'] };
const NEW_ID = '7d1f6c2a-0b3e-4f5a-9c8d-2e4f6a8b0c1d';

async function source(text: string) {
  const path = tmp.file('source.jsonl', text);
  const t = await parse(path);
  const elidable = elidableLines(t.items);
  return { path, t, elidable, lines: text.split('\n') };
}

describe('render', () => {
  it('elides tool-result payloads in place, leaving every other line and byte as it was', async () => {
    const s = await source(modernSession().toJsonl());
    expect(s.elidable.length).toBe(3);
    const { result, path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: s.elidable, stub_template: STUB }]);
    expect(validateProviderRenderResult(result)).toBe(true);
    expect(result).toMatchObject({ elided_records: 3, appended_records: 0, record_count: s.t.record_count });
    const out = readFileSync(path, 'utf8').split('\n');
    expect(out).toHaveLength(s.lines.length);
    for (let i = 0; i < out.length; i += 1) {
      if (!s.elidable.includes(i)) {
        expect(out[i], `line ${i}`).toBe(s.lines[i]);
        continue;
      }
      const before = JSON.parse(s.lines[i]!);
      const after = JSON.parse(out[i]!);
      const bytes = s.t.items[i]!.elidable_bytes!;
      expect(after.message.content[0].content).toBe(`[output elided by gobstopper: ${bytes} bytes]`);
      // The UI copy of the same output gets the same stub.
      expect(after.toolUseResult.stdout).toBe(`[output elided by gobstopper: ${bytes} bytes]`);
      // Only the payload and its UI copy changed: put them back and the record is the same.
      after.message.content[0].content = before.message.content[0].content;
      after.toolUseResult.stdout = before.toolUseResult.stdout;
      expect(after).toEqual(before);
    }
    expect(result.bytes).toBeLessThan(s.t.bytes);
    expect((await verify(path)).findings).toEqual([]);
  });

  it('stubs the text of the toolUseResult UI copy too, keeping its shape and the paths it names, so the elided text is nowhere in the fork', async () => {
    const marker = (tool: string) => `UNIQUE-${tool}-OUTPUT-7f3a`;
    const body = (tool: string) => `${marker(tool)}\n${longOutput(tool, 12)}`;
    // Longer than the stub: only their being single short lines keeps them.
    const deep = '/home/dev/projects/a-rather-long-project-name/packages/the-parser-package/src/internal/parse.ts';
    const uiCopies: Record<string, unknown> = {
      Read: { type: 'text', file: { filePath: deep, content: body('Read'), numLines: 13, startLine: 1, totalLines: 13 } },
      Bash: { stdout: `${marker('Bash')} ${'y'.repeat(2000)}`, stderr: 'warning: the parser package is deprecated, use the new one', interrupted: false },
      Glob: { filenames: [deep, `${deep}.map`], durationMs: 3, numFiles: 2, truncated: false },
      Edit: {
        filePath: deep.replace('parse.ts', 'edit.ts'),
        oldString: 'a',
        newString: 'b',
        originalFile: body('Edit'),
        structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-a', '+b'] }],
        userModified: false,
        replaceAll: false,
      },
      Failing: `Error: ${body('Failing')}`,
      Mcp: [{ type: 'text', text: body('Mcp') }],
    };
    const b = new ClaudeSessionBuilder();
    b.user('Look at everything');
    for (const tool of Object.keys(uiCopies)) {
      b.tools([{ name: tool, input: { file_path: `/x/${tool}` }, output: body(tool), isError: tool === 'Failing' }]);
      const result = b.records.at(-1)!;
      result.toolUseResult = uiCopies[tool];
    }
    b.text('Done.');
    const s = await source(b.toJsonl());
    expect(s.elidable).toHaveLength(6);
    const { result, path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: s.elidable, stub_template: STUB }, { op: 'inject_digest', digest }], { newSessionId: NEW_ID });
    expect(result.elided_records).toBe(6);
    const text = readFileSync(path, 'utf8');
    for (const tool of Object.keys(uiCopies)) {
      expect(text).not.toContain(marker(tool));
      expect(text).not.toContain(JSON.stringify(body(tool)).slice(1, -1));
    }
    // Same keys, same value types; numbers, booleans and short strings untouched.
    const shape = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(shape) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : typeof v;
    const out = text.split('\n');
    for (const [n, tool] of Object.keys(uiCopies).entries()) {
      const line = s.elidable[n]!;
      const copy = JSON.parse(out[line]!).toolUseResult;
      expect(shape(copy)).toEqual(shape(uiCopies[tool]));
      // Each stubbed string says how many bytes it held itself.
      const stub = (text: string) => `[output elided by gobstopper: ${Buffer.byteLength(text, 'utf8')} bytes]`;
      if (tool === 'Read') expect(copy).toEqual({ type: 'text', file: { filePath: deep, content: stub(body('Read')), numLines: 13, startLine: 1, totalLines: 13 } });
      if (tool === 'Bash') expect(copy).toEqual({ ...(uiCopies.Bash as object), stdout: stub((uiCopies.Bash as { stdout: string }).stdout) });
      if (tool === 'Glob') expect(copy).toEqual(uiCopies.Glob);
      if (tool === 'Edit') expect(copy).toMatchObject({ filePath: deep.replace('parse.ts', 'edit.ts'), originalFile: stub(body('Edit')), oldString: 'a', structuredPatch: [{ lines: ['-a', '+b'] }], userModified: false });
      if (tool === 'Failing') expect(copy).toBe(stub(uiCopies.Failing as string));
      if (tool === 'Mcp') expect(copy).toEqual([{ type: 'text', text: stub(body('Mcp')) }]);
    }
    // Lines that were not elided keep their UI copies byte for byte.
    for (let i = 0; i < s.t.record_count; i += 1) if (!s.elidable.includes(i)) expect(out[i]!.replaceAll(NEW_ID, b.sessionId)).toBe(s.lines[i]);
    expect((await verify(path)).findings).toEqual([]);
    const after = await parse(path);
    for (const line of s.elidable) expect(after.items[line]!.est_tokens).toBeLessThan(s.t.items[line]!.est_tokens);
  });

  it("counts the UI copy's own bytes in its stub: a persisted output the model saw as a short note is far larger in the copy", async () => {
    // Claude Code 2.x gives the model a <persisted-output> note for an output too large to send and
    // keeps the whole output only in the toolUseResult copy (141 KB against a 2 KB note on a real session).
    const note = `<persisted-output>\nOutput too large (60KB). Full output saved to: /home/dev/.claude/projects/x/tool-results/t1.txt\n\nPreview (first 2KB):\n${longOutput('Bash', 20)}\n</persisted-output>`;
    const full = `${longOutput('Bash', 20)}\n${'z'.repeat(60_000)}`;
    const b = new ClaudeSessionBuilder();
    b.user('Run the whole suite');
    b.tools([{ name: 'Bash', input: { command: 'mix test' }, output: note }]);
    b.records.at(-1)!.toolUseResult = { stdout: full, stderr: '', interrupted: false, isImage: false, noOutputExpected: false };
    b.text('Done.');
    const s = await source(b.toJsonl());
    expect(s.elidable).toHaveLength(1);
    const line = s.elidable[0]!;
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: [line], stub_template: STUB }]);
    const after = JSON.parse(readFileSync(path, 'utf8').split('\n')[line]!);
    expect(after.message.content[0].content).toBe(`[output elided by gobstopper: ${Buffer.byteLength(note, 'utf8')} bytes]`);
    expect(after.toolUseResult.stdout).toBe(`[output elided by gobstopper: ${Buffer.byteLength(full, 'utf8')} bytes]`);
    expect((await verify(path)).findings).toEqual([]);
  });

  it('gives the UI copy a per-item stub as it is: a fixed text has no size to count', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('go');
    b.tools([{ name: 'Bash', input: { command: 'ls' }, output: longOutput('Bash', 12) }]);
    b.text('ok');
    const s = await source(b.toJsonl());
    const line = s.elidable[0]!;
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: [line], stub_template: STUB, per_item_stubs: { [String(line)]: '[listing elided]' } }]);
    const after = JSON.parse(readFileSync(path, 'utf8').split('\n')[line]!);
    expect([after.message.content[0].content, after.toolUseResult.stdout]).toEqual(['[listing elided]', '[listing elided]']);
  });

  it('elides an array payload into its first text block and empties the others', async () => {
    const b = new ClaudeSessionBuilder();
    b.user('go');
    b.tools([{ name: 'Read', input: { file_path: '/a' }, output: [{ type: 'text', text: 'é'.repeat(150) }, { type: 'text', text: 'tail' }] }]);
    b.text('ok');
    const s = await source(b.toJsonl());
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: s.elidable, stub_template: '[elided]' }]);
    const line = JSON.parse(readFileSync(path, 'utf8').split('\n')[s.elidable[0]!]!);
    expect(line.message.content[0].content).toEqual([
      { type: 'text', text: '[elided]' },
      { type: 'text', text: '' },
    ]);
  });

  it('uses a per-item stub when the plan gives one', async () => {
    const s = await source(modernSession().toJsonl());
    const [first, second] = s.elidable;
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, [
      { op: 'elide', line_indexes: [first!, second!], stub_template: STUB, per_item_stubs: { [String(first)]: '[kept: see vault]' } },
    ]);
    const out = readFileSync(path, 'utf8').split('\n');
    expect(JSON.parse(out[first!]!).message.content[0].content).toBe('[kept: see vault]');
    expect(JSON.parse(out[second!]!).message.content[0].content).toMatch(/^\[output elided by gobstopper: \d+ bytes\]$/);
  });

  it('refuses to elide anything but a live elidable tool result', async () => {
    const { b, deadResultLine } = branchedSession();
    const s = await source(b.toJsonl());
    const prompt = s.t.items.find((i) => i.kind === 'user')!.line_index;
    const progress = s.t.items.find((i) => i.record_type === 'progress')!.line_index;
    for (const line of [deadResultLine, prompt, progress, 10_000]) {
      await expect(render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: [line], stub_template: STUB }])).rejects.toMatchObject({
        code: PluginErrorCodes.InvalidInput,
      });
    }
  });

  it('forks by rewriting only the sessionId values', async () => {
    const s = await source(oldSession().b.toJsonl());
    const { result, path } = await render(tmp.dir, s.path, s.t.source_sha256, [], { newSessionId: NEW_ID });
    expect(result.elided_records).toBe(0);
    const out = readFileSync(path, 'utf8').split('\n');
    const oldId = 'fe5e1c67-0000-4000-8000-00000000abcd';
    for (let i = 0; i < out.length; i += 1) expect(out[i]).toBe(s.lines[i]!.replaceAll(`"sessionId":"${oldId}"`, `"sessionId":"${NEW_ID}"`));
    expect(out.join('\n')).not.toContain(oldId);
    // The summary title record has no sessionId and is untouched.
    expect(out[0]).toBe(s.lines[0]);
  });

  it('finds the payload, its UI copy and the sessionId under keys spelled with escapes, and changes nothing else', async () => {
    const plain = modernSession().toJsonl();
    const first = (await source(plain)).elidable[0]!;
    const lines = plain.split('\n');
    // The keys a client could spell another way: JSON.parse reads the same record.
    lines[first] = lines[first]!.replace('"message"', '"m\\u0065ssage"').replace('"toolUseResult"', '"toolUse\\u0052esult"').replace('"sessionId"', '"session\\u0049d"').replace('"content"', '"c\\u006fntent"');
    const s = await source(lines.join('\n'));
    expect(s.elidable).toContain(first);
    const { result, path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: [first], stub_template: STUB }], { newSessionId: NEW_ID });
    expect(result.elided_records).toBe(1);
    const out = readFileSync(path, 'utf8').split('\n');
    const before = JSON.parse(s.lines[first]!);
    const after = JSON.parse(out[first]!);
    const stub = `[output elided by gobstopper: ${s.t.items[first]!.elidable_bytes} bytes]`;
    expect([after.message.content[0].content, after.toolUseResult.stdout, after.sessionId]).toEqual([stub, stub, NEW_ID]);
    after.message.content[0].content = before.message.content[0].content;
    after.toolUseResult.stdout = before.toolUseResult.stdout;
    after.sessionId = before.sessionId;
    expect(after).toEqual(before);
    // The escaped spellings stay as they were written.
    expect(out[first]).toContain('"m\\u0065ssage"');
    expect(out[first]).toContain('"session\\u0049d"');
    expect((await verify(path)).findings).toEqual([]);
  });

  it('appends the state card as a user prompt chained to the live leaf, and a last-prompt naming it', async () => {
    const { b } = branchedSession();
    const s = await source(b.toJsonl());
    const leaf = b.records.at(-1)!;
    const { result, path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'inject_digest', digest }, { op: 'provider_compact', control: '/compact' }, { op: 'cache_edit', tool_use_ids: ['x'] }], {
      newSessionId: NEW_ID,
      now: '2026-03-01T10:00:00Z',
    });
    expect(result).toMatchObject({ appended_records: 2, record_count: s.t.record_count + 2 });
    const out = readFileSync(path, 'utf8').split('\n');
    expect(out.at(-1)).toBe('');
    const card = JSON.parse(out.at(-3)!);
    const lastPrompt = JSON.parse(out.at(-2)!);
    expect(card).toMatchObject({
      type: 'user',
      parentUuid: leaf.uuid,
      isSidechain: false,
      sessionId: NEW_ID,
      cwd: leaf.cwd,
      version: leaf.version,
      gitBranch: leaf.gitBranch,
      userType: 'external',
      permissionMode: 'default',
      timestamp: '2026-03-01T10:00:00.000Z',
      message: { role: 'user' },
    });
    expect(card.message.id).toBeUndefined();
    expect(b.records.some((r) => r.uuid === card.uuid)).toBe(false);
    expect(card.message.content.startsWith(STATE_CARD_MARKER)).toBe(true);
    expect(parseStateCard(card.message.content)).toMatchObject({ goal: 'Fix the parser', files_touched: ['src/parse.ts'], open_tasks: ['update changelog'], covers_items: 3 });
    expect(lastPrompt).toEqual({ type: 'last-prompt', lastPrompt: card.message.content, leafUuid: card.uuid, sessionId: NEW_ID });
    // The candidate resumes onto the card: it is the live leaf, and nothing new is wrong.
    const t = await parse(path);
    expect(t.items.at(-2)).toMatchObject({ kind: 'user', summary: STATE_CARD_MARKER, uuid: card.uuid });
    expect(t.items.at(-2)!.est_tokens).toBeGreaterThan(0);
    expect((await verify(path)).findings).toEqual([]);
  });

  it('terminates an unterminated last line before appending', async () => {
    const text = modernSession().toJsonl().replace(/\n$/, '');
    const s = await source(text);
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'inject_digest', digest }]);
    const out = readFileSync(path, 'utf8').split('\n');
    expect(out[s.t.record_count - 1]).toBe(text.split('\n').at(-1));
    expect((await verify(path)).findings).toEqual([]);
  });

  it('without a digest, keeps a missing final newline missing', async () => {
    const text = modernSession().toJsonl().replace(/\n$/, '');
    const s = await source(text);
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, []);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('refuses to append after a torn final line', async () => {
    const lines = modernSession().lines();
    const text = lines.slice(0, -1).join('\n') + '\n' + lines.at(-1)!.slice(0, 30);
    const s = await source(text);
    await expect(render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'inject_digest', digest }])).rejects.toMatchObject({
      code: PluginErrorCodes.InvalidInput,
      message: expect.stringMatching(/torn record/),
    });
  });

  it('says so when the live leaf a card would follow is not valid JSON, rather than calling the file changed', async () => {
    // A malformed number: parse sets the line aside, the skeleton read (which steps over values) takes it as the leaf.
    const lines = modernSession().toJsonl().split('\n');
    const leafLine = lines.length - 3;
    lines[leafLine] = lines[leafLine]!.replace('{', '{"n":01,');
    const s = await source(lines.join('\n'));
    await expect(render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'inject_digest', digest }])).rejects.toMatchObject({
      code: PluginErrorCodes.InvalidInput,
      message: expect.stringMatching(new RegExp(`line ${leafLine + 1}, the live leaf a state card would follow, is not valid JSON`)),
    });
  });

  it('refuses a source that does not match the bound hash, before or while copying', async () => {
    const s = await source(modernSession().toJsonl());
    await expect(render(tmp.dir, s.path, 'b'.repeat(64), [])).rejects.toMatchObject({ code: PluginErrorCodes.SourceChanged });
    const edits: Edit[] = [{ op: 'elide', line_indexes: s.elidable, stub_template: STUB }];
    await expect(
      render(tmp.dir, s.path, s.t.source_sha256, edits, {
        hooks: {
          afterLine: (line) => {
            if (line === 3) appendFileSync(s.path, s.lines[2] + '\n');
          },
        },
      }),
    ).rejects.toMatchObject({ code: PluginErrorCodes.SourceChanged });
  });

  it('writes nowhere but an empty staging file', async () => {
    const s = await source(modernSession().toJsonl());
    const used = staging(tmp.dir);
    writeFileSync(used, 'already here\n');
    await expect(
      renderCandidate({ provider_id: 'claude_code', path: s.path, source_sha256: s.t.source_sha256, edits: [], staging_path: used, new_session_id: null, now: '2026-03-01T00:00:00Z' }),
    ).rejects.toThrow(/empty regular file/);
    expect(readFileSync(used, 'utf8')).toBe('already here\n');
    expect(readFileSync(s.path, 'utf8')).toBe(s.lines.join('\n'));
  });

  it('refuses sub-agent transcripts, file-name-unsafe ids and multi-line stubs', async () => {
    const sub = await source(subagentTranscript().toJsonl());
    await expect(render(tmp.dir, sub.path, sub.t.source_sha256, [])).rejects.toMatchObject({ code: PluginErrorCodes.InvalidInput, message: expect.stringMatching(/subagent/) });
    const s = await source(modernSession().toJsonl());
    await expect(render(tmp.dir, s.path, s.t.source_sha256, [], { newSessionId: '../escape' })).rejects.toMatchObject({ code: PluginErrorCodes.InvalidInput });
    await expect(render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: s.elidable, stub_template: 'two\nlines' }])).rejects.toMatchObject({
      code: PluginErrorCodes.InvalidInput,
    });
  });

  it('elides and injects together into a candidate that parses smaller and verifies clean', async () => {
    const b = modernSession();
    b.user('one more');
    b.tools([{ name: 'Bash', input: { command: 'cat big.log' }, output: longOutput('log', 200) }]);
    b.text('done');
    const s = await source(b.toJsonl());
    const { path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: s.elidable, stub_template: STUB }, { op: 'inject_digest', digest }], { newSessionId: NEW_ID });
    const after = await parseTranscript({ provider_id: 'claude_code', path });
    const live = (items: typeof after.items) => items.reduce((n, i) => n + i.est_tokens, 0);
    expect(live(after.items)).toBeLessThan(live(s.t.items));
    expect((await verify(path)).findings).toEqual([]);
  });
});

describe('render: line endings', () => {
  it('a CRLF transcript stays CRLF, the appended state card and last-prompt included', async () => {
    const s = await source(modernSession().toJsonl().replace(/\n/g, '\r\n'));
    const { result, path } = await render(tmp.dir, s.path, s.t.source_sha256, [{ op: 'elide', line_indexes: s.elidable, stub_template: STUB }, { op: 'inject_digest', digest }], { newSessionId: NEW_ID });
    expect(result.appended_records).toBe(2);
    const written = readFileSync(path, 'utf8').split('\n').slice(0, -1);
    expect(written).toHaveLength(s.t.record_count + 2);
    for (const line of written) expect(line.endsWith('\r'), line.slice(0, 80)).toBe(true);
    expect((await verify(path)).findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});
