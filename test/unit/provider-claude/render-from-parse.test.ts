/**
 * A render of the source this process has just parsed starts from that parse's tree instead of
 * reading every record again (render-from-parse.ts). It must write exactly what a full render
 * writes, and refuse exactly as it refuses: the same bytes, the same result, the same error. Each
 * render below is done twice, right after a parse and with the parse forgotten, and compared.
 */
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgetParsed, parsedSourceCounts } from '../../../plugins/provider-claude-code/src/parsed-source.js';
import { targetPartsCounts } from '../../../plugins/provider-claude-code/src/render-from-parse.js';
import { sourceLinesTaken } from '../../../plugins/provider-claude-code/src/source-lines.js';
import type { RenderHooks } from '../../../plugins/provider-claude-code/src/render.js';
import type { DigestBlock, Edit, ProviderRenderResult } from '../../../schemas/generated/types.js';
import { writeBigSession } from '../../fixtures/claude/big-session.js';
import { breakages, tornFinalLine } from '../../fixtures/claude/breakages.js';
import { branchedSession, compactedSession, modernSession, subagentTranscript } from '../../fixtures/claude/sessions.js';
import { ClaudeSessionBuilder } from '../../fixtures/claude/session-builder.js';
import { spreadSessionLines } from '../../fixtures/claude/spread-session.js';
import { everyKindOfSession, parse, render, scratch, STUB } from './support.js';
import { elidableLines } from '../../helpers/elide-targets.js';

const tmp = scratch('claude-render-from-parse-');
const digest: DigestBlock = { goal: 'Fix the parser', covers_items: 3, files_touched: ['src/parse.ts'], concepts: [], decisions: ['keep the reader'], errors: [], open_tasks: [] };
const NEW_ID = '7d1f6c2a-0b3e-4f5a-9c8d-2e4f6a8b0c1d';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Ask {
  edits: Edit[];
  newSessionId?: string | null;
  sha?: string;
  /** Changes the source once the render has passed this line. */
  changeAfterLine?: number;
}

type Rendered = { result: ProviderRenderResult; text: string } | { error: { code: unknown; message: string } };

/** A render's result and bytes, or its error; a state card's fresh uuids are masked, as its own uuids are random. */
async function renderOf(source: string, sha: string, ask: Ask, original: Buffer, restore = true): Promise<Rendered> {
  const known = new Set(original.toString('utf8').match(UUID));
  const hooks: RenderHooks = {};
  if (ask.changeAfterLine !== undefined) {
    const at = ask.changeAfterLine;
    hooks.afterLine = (line) => {
      if (line === at) appendFileSync(source, '{"type":"summary","summary":"appended while rendering","leafUuid":"x"}\n');
    };
  }
  try {
    const { result, path } = await render(tmp.dir, source, ask.sha ?? sha, ask.edits, { newSessionId: ask.newSessionId ?? null, hooks });
    const written = readFileSync(path, 'utf8');
    const text = written.replace(UUID, (uuid) => (known.has(uuid) || uuid === NEW_ID ? uuid : 'fresh-uuid'));
    return { result: text === written ? result : { ...result, output_sha256: 'differs by fresh uuids' }, text };
  } catch (e) {
    const error = e as { code?: unknown; message: string };
    // Whether the reader still meets the appended line depends on when its next read happens, so
    // either refusal of a changed source may come, from either side.
    const message = ask.changeAfterLine !== undefined && /changed (since it was hashed|while the candidate was written)/.test(error.message) ? 'changed' : error.message;
    return { error: { code: error.code ?? null, message } };
  } finally {
    // Written only when asked: a write moves the file's change time, and a render that follows notices.
    if (restore) writeFileSync(source, original);
  }
}

/**
 * Renders `source` for each ask right after parsing `parsedPath` (the source itself unless given),
 * then again with no parse remembered, and expects the two to be equal. Returns the renders and
 * how many started from the parse.
 */
async function expectSameAsFull(source: string, asks: Ask[], parsedPath = source) {
  const original = readFileSync(source);
  const expected: Rendered[] = [];
  let reused = 0;
  for (const ask of asks) {
    forgetParsed();
    const sha = (await parse(parsedPath).catch(() => ({ source_sha256: 'f'.repeat(64) }))).source_sha256;
    const before = parsedSourceCounts().reused;
    const fromParse = await renderOf(source, sha, ask, original);
    reused += parsedSourceCounts().reused - before;
    forgetParsed();
    const full = await renderOf(source, sha, ask, original);
    expect(fromParse, JSON.stringify({ source, edits: ask.edits.map((e) => e.op), fork: ask.newSessionId ?? null })).toStrictEqual(full);
    expected.push(full);
  }
  return { expected, reused };
}

async function elidable(source: string): Promise<number[]> {
  const t = await parse(source);
  return elidableLines(t.items);
}

const elide = (lines: number[]): Edit => ({ op: 'elide', line_indexes: lines, stub_template: STUB });

/**
 * Six bytes at `at` of line `target` become one `\u` escape (same length, another decoded text).
 * After a parse of `text`, a render of the file so changed eliding `target` must be refused, and a
 * render of the restored file must equal a full render: nothing learned from the changed bytes stays.
 */
async function expectChangedCopyForgotten(source: string, text: string, target: number, at: number, escape: string): Promise<void> {
  const rows = text.split('\n');
  const changed = [...rows];
  changed[target] = rows[target]!.slice(0, at) + escape + rows[target]!.slice(at + 6);
  expect(escape).toHaveLength(6);
  const ask: Ask = { edits: [elide([target])] };
  const original = Buffer.from(text);
  forgetParsed();
  const sha = (await parse(source)).source_sha256;
  forgetParsed();
  const expected = await renderOf(source, sha, ask, original);
  await parse(source);
  // The render of the changed file reads the target, then finds the hash differs and refuses.
  writeFileSync(source, changed.join('\n'));
  expect(await renderOf(source, sha, ask, Buffer.from(changed.join('\n')))).toMatchObject({ error: { message: expect.stringMatching(/changed/) } });
  writeFileSync(source, original);
  expect(await renderOf(source, sha, ask, original)).toStrictEqual(expected);
}

const asksFor = (lines: number[]): Ask[] => [
  { edits: [] },
  { edits: [elide(lines)] },
  { edits: [elide(lines.filter((_, i) => i % 2 === 0))] },
  { edits: [elide(lines), { op: 'inject_digest', digest }] },
  { edits: [{ op: 'inject_digest', digest }] },
  { edits: [], newSessionId: NEW_ID },
  { edits: [elide(lines), { op: 'inject_digest', digest }], newSessionId: NEW_ID },
];
const ASKS = 7;

const jsonl = (lines: readonly string[]) => lines.join('\n') + '\n';

/** Tool results whose payloads are arrays of text blocks (one of them empty): the parse does not describe those. */
function blockPayloadSession(): string {
  const b = new ClaudeSessionBuilder();
  for (let t = 0; t < 6; t++) {
    b.user(`Step ${t}: read the notes`);
    b.tools([{ name: 'Read', input: { file_path: `/notes/${t}.md` }, output: [{ type: 'text', text: `notes ${t} `.repeat(200) }, { type: 'text', text: '' }, { type: 'text', text: `tail ${t} `.repeat(60) }] }]);
    b.text(`Read notes ${t}.`);
  }
  return b.toJsonl();
}

describe('a render that starts from the parse writes what a full render writes', () => {
  it('every kind of session, with every kind of edit', async () => {
    const texts = everyKindOfSession();
    let reused = 0;
    let cards = 0;
    for (const text of texts) {
      const source = tmp.file('session.jsonl', text);
      const result = await expectSameAsFull(source, asksFor(await elidable(source)));
      reused += result.reused;
      cards += result.expected.filter((e) => 'result' in e && e.result.appended_records === 2).length;
    }
    // Each of these renders is one a parse can serve.
    expect(reused).toBe(texts.length * ASKS - (await refusedCount(texts)));
    expect(cards).toBeGreaterThan(0);
  });

  it('later renders of one parse reuse what earlier ones parsed of their targets, and write what a full render writes', async () => {
    const big = join(tmp.dir, 'big-again.jsonl');
    writeBigSession(big, { targetBytes: 2 * 1024 * 1024, records: 1500 });
    const sources = [modernSession().toJsonl(), branchedSession().b.toJsonl(), compactedSession().b.toJsonl(), jsonl(spreadSessionLines()), blockPayloadSession()].map((t) => tmp.file('again.jsonl', t));
    const before = targetPartsCounts();
    for (const source of [...sources, big]) {
      const lines = await elidable(source);
      const original = readFileSync(source);
      // Targets met again, with other stubs, in a fork, and with per-item stubs.
      const asks: Ask[] = [
        ...asksFor(lines),
        { edits: [{ ...elide(lines), stub_template: '[gone: {bytes} bytes of {kind}]' } as Edit] },
        { edits: [{ ...elide(lines.slice(0, 3)), per_item_stubs: Object.fromEntries(lines.slice(0, 2).map((l) => [String(l), `[line ${l} kept in the vault]`])) } as Edit] },
      ];
      const sha = (await parse(source)).source_sha256;
      forgetParsed();
      const full: Rendered[] = [];
      for (const ask of asks) full.push(await renderOf(source, sha, ask, original));
      // One parse, then every ask in turn.
      await parse(source);
      for (const [i, ask] of asks.entries()) expect(await renderOf(source, sha, ask, original), `${source} ask ${i}`).toStrictEqual(full[i]);
    }
    const after = targetPartsCounts();
    // A target with one plain-string payload is described by the parse itself; the others are
    // parsed by the first render that meets them and reused by the later ones.
    expect(after.fromParse - before.fromParse).toBeGreaterThan(0);
    expect(after.parsed - before.parsed).toBeGreaterThan(0);
    expect(after.reused - before.reused).toBeGreaterThan(after.parsed - before.parsed);
  });

  it('parts read from a copy that turned out to be another file are not kept', async () => {
    const text = modernSession().toJsonl();
    const source = tmp.file('poison.jsonl', text);
    const target = (await elidable(source))[0]!;
    const row = text.split('\n')[target]!;
    // Six payload bytes that decode to one: the part measures 5 bytes less.
    const result = row.indexOf('"tool_result"');
    const payload = row.indexOf('"content":"', result) + '"content":"'.length;
    const payloadRun = payload + row.slice(payload).search(/[A-Za-z0-9]{6}/);
    expect(result).toBeGreaterThan(0);
    expect(payloadRun).toBeGreaterThanOrEqual(payload);
    await expectChangedCopyForgotten(source, text, target, payloadRun, '\\u0041');
  });

  it('later renders that do not fork copy the lines the first one read, until the file is written again', async () => {
    const text = modernSession().toJsonl();
    const source = tmp.file('kept-lines.jsonl', text);
    // Whole seconds, so that the time can be put back exactly below.
    const mtime = Math.floor(Date.now() / 1000) - 60;
    utimesSync(source, mtime, mtime);
    const lines = await elidable(source);
    const asks: Ask[] = [{ edits: [elide(lines)] }, { edits: [elide(lines), { op: 'inject_digest', digest }] }, { edits: [] }, { edits: [elide(lines)], newSessionId: NEW_ID }];
    const original = readFileSync(source);
    forgetParsed();
    const sha = (await parse(source)).source_sha256;
    forgetParsed();
    const full: Rendered[] = [];
    for (const ask of asks) full.push(await renderOf(source, sha, ask, original));
    utimesSync(source, mtime, mtime);
    await parse(source);
    const before = sourceLinesTaken();
    for (const [i, ask] of asks.entries()) expect(await renderOf(source, sha, ask, original, false), `ask ${i}`).toStrictEqual(full[i]);
    // The first render reads the file; the next two copy its lines; a fork always reads.
    expect(sourceLinesTaken() - before).toBe(2);

    // Rewritten in place at the same size, its modification time put back: the change time still
    // moved, so the next render reads the file, finds another hash and refuses it.
    const target = text.split('\n')[lines[0]!]!;
    const at = text.indexOf(target) + target.lastIndexOf('"content":"') + '"content":"'.length;
    const changed = Buffer.from(original);
    changed[at] = changed[at] === 0x61 ? 0x62 : 0x61;
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(source, changed);
    utimesSync(source, mtime, mtime);
    expect(statSync(source).mtimeMs).toBe(mtime * 1000);
    const taken = sourceLinesTaken();
    expect(await renderOf(source, sha, asks[0]!, changed, false)).toMatchObject({ error: { message: expect.stringMatching(/changed/) } });
    expect(sourceLinesTaken()).toBe(taken);
    writeFileSync(source, original);
  });

  it('what a render of another file under the same line lengths found in the UI copy is not kept', async () => {
    const text = modernSession().toJsonl();
    const source = tmp.file('poison-copy.jsonl', text);
    const rows = text.split('\n');
    const target = (await elidable(source)).find((l) => rows[l]!.includes('"toolUseResult":{"stdout":"'))!;
    expect(target).toBeDefined();
    // Six bytes of the UI copy's stdout that decode to one: its stub would count five bytes fewer.
    const stdout = rows[target]!.indexOf('"toolUseResult":{"stdout":"') + '"toolUseResult":{"stdout":"'.length;
    const run = stdout + rows[target]!.slice(stdout).search(/x{6}/);
    expect(run).toBeGreaterThan(stdout);
    await expectChangedCopyForgotten(source, text, target, run, '\\u0078');
  });

  it('a large session whose lines cross the 1 MiB read chunks', async () => {
    const source = join(tmp.dir, 'big.jsonl');
    writeBigSession(source, { targetBytes: 3 * 1024 * 1024, records: 2000 });
    const lines = await elidable(source);
    const { expected, reused } = await expectSameAsFull(source, asksFor(lines));
    expect(reused).toBe(ASKS);
    expect((expected[1] as { result: ProviderRenderResult }).result.elided_records).toBe(lines.length);
  });

  it('an unterminated final line stays so, or gets its newline before a card', async () => {
    const text = modernSession().toJsonl().replace(/\n$/, '');
    const source = tmp.file('unterminated.jsonl', text);
    const { expected, reused } = await expectSameAsFull(source, asksFor(await elidable(source)));
    expect(reused).toBe(ASKS);
    expect((expected[0] as { text: string }).text).toBe(text);
    expect((expected[4] as { text: string }).text.startsWith(text + '\n')).toBe(true);
  });

  it('a copy of the parsed file elsewhere, as eval renders its frozen copy', async () => {
    const text = modernSession().toJsonl();
    const parsed = tmp.file('parsed.jsonl', text);
    const copy = tmp.file('copy.jsonl', text);
    const { reused } = await expectSameAsFull(copy, asksFor(await elidable(parsed)), parsed);
    expect(reused).toBe(ASKS);
    // A copy whose path makes it a sub-agent transcript is refused as one, the parse's path notwithstanding.
    const agents = join(tmp.dir, 'proj', 'session', 'subagents');
    mkdirSync(agents, { recursive: true });
    const agentCopy = join(agents, 'agent-a1b2c3d.jsonl');
    copyFileSync(parsed, agentCopy);
    const refused = await expectSameAsFull(agentCopy, [{ edits: [] }], parsed);
    expect(refused.reused).toBe(0);
    expect((refused.expected[0] as { error: { message: string } }).error.message).toMatch(/subagent file/);
  });

  it('refusals read the same: broken lines, a torn final line, targets that are not elidable', async () => {
    for (const b of breakages()) {
      const source = tmp.file('broken.jsonl', b.text);
      const lines = await elidable(source).catch(() => [1, 2]);
      await expectSameAsFull(source, [asksFor(lines)[3]!, { edits: [elide([0])] }, { edits: [elide([10_000])] }]);
    }
    const torn = tmp.file('torn.jsonl', tornFinalLine());
    const { expected } = await expectSameAsFull(torn, [{ edits: [{ op: 'inject_digest', digest }] }]);
    expect((expected[0] as { error: { message: string } }).error.message).toMatch(/torn record/);
    const sub = tmp.file('sub.jsonl', subagentTranscript().toJsonl());
    await expectSameAsFull(sub, [{ edits: [] }]);
  });
});

describe('a fork from the parse rewrites the sessionId values a full render rewrites', () => {
  it('duplicate, spaced, escaped, nested and missing sessionId keys', async () => {
    const id = '"sessionId":"3f0c2a9e-5b1d-4c7e-9a2f-0d6b8e4c1a7f"';
    const lines = modernSession().toJsonl().split('\n');
    const odd = (i: number, edit: (line: string) => string) => {
      const next = edit(lines[i]!);
      expect(next, `line ${i} is edited`).not.toBe(lines[i]);
      lines[i] = next;
    };
    odd(2, (l) => l.replace('{', '{"sessionId":"aaaaaaaa-0000-4000-8000-000000000000",'));
    odd(3, (l) => l.replace(id, id.replace(':', ' :  ')));
    odd(4, (l) => l.replace('"sessionId"', '"session\\u0049d"'));
    odd(5, (l) => l.replace('{', '{"extra":{"sessionId":"nested","list":[{"sessionId":1}]},'));
    odd(6, (l) => l.replace(`${id},`, ''));
    odd(7, (l) => l.replace(id, `${id},"sessionId":"bbbbbbbb-0000-4000-8000-000000000000"`));
    const source = tmp.file('odd-ids.jsonl', lines.join('\n'));
    const targets = await elidable(source);
    const { expected, reused } = await expectSameAsFull(source, [
      { edits: [], newSessionId: NEW_ID },
      { edits: [elide(targets), { op: 'inject_digest', digest }], newSessionId: NEW_ID },
    ]);
    expect(reused).toBe(2);
    const text = (expected[0] as { text: string }).text.split('\n');
    expect(text[2]).toContain(`{"sessionId":"${NEW_ID}",`);
    expect(text[5]).toContain('"sessionId":"nested"');
    expect(text[6]).not.toContain('sessionId');
  });
});

describe('lines JSON.parse and the skeleton read could tell apart', () => {
  it('keys written with escapes, duplicated keys, and lines only one of them can read', async () => {
    const base = modernSession().toJsonl().split('\n').filter(Boolean);
    const leaf = JSON.parse(base[base.length - 2]!).uuid as string;
    const variants: Array<[string, (lines: string[]) => void]> = [
      ['an invalid uuid, then a valid one spelled with escapes', (l) => (l[26] = l[26]!.replace(/"uuid":("[^"]*")/, '"uuid":5,"uu\\u0069d":$1'))],
      ['no parent, then one spelled with escapes', (l) => (l[26] = l[26]!.replace(/"parentUuid":("[^"]*")/, '"parentUuid":null,"parent\\u0055uid":$1'))],
      ['only an escaped parent key', (l) => (l[26] = l[26]!.replace('"parentUuid"', '"parent\\u0055uid"'))],
      ['an escaped type key', (l) => (l[26] = l[26]!.replace('"type"', '"typ\\u0065"'))],
      ['a second version spelled with escapes', (l) => (l[5] = l[5]!.replace(/"version":"[^"]*"/, '$&,"vers\\u0069on":"0.0.0-placeholder"'))],
      ['sidechain flags overridden with escapes', (l) => l.forEach((line, i) => (l[i] = line.replace('"isSidechain":false', '"isSidechain":true,"isSid\\u0065chain":false')))],
      ['an escaped message key', (l) => (l[26] = l[26]!.replace('"message"', '"m\\u0065ssage"'))],
      ['a malformed number mid-file', (l) => (l[26] = l[26]!.replace('{', '{"n":01,'))],
      ['a malformed number on the last line', (l) => l.push(`{"type":"summary","summary":"s","leafUuid":"${leaf}","n":01}`)],
      ['a malformed escape on the last line', (l) => l.push(`{"type":"summary","summary":"bad \\x escape","leafUuid":"${leaf}"}`)],
      ['an invalid escape in a key', (l) => (l[26] = l[26]!.replace('{', '{"k\\x":1,'))],
    ];
    for (const [name, edit] of variants) {
      const lines = [...base];
      edit(lines);
      expect(lines.join('\n'), name).not.toBe(base.join('\n'));
      const source = tmp.file('odd-keys.jsonl', lines.join('\n') + '\n');
      const targets = await elidable(source).catch(() => [8]);
      await expectSameAsFull(source, [
        { edits: [] },
        { edits: [elide(targets)] },
        { edits: [elide(targets), { op: 'inject_digest', digest }] },
        { edits: [], newSessionId: NEW_ID },
      ]);
    }
  });
});

describe('a render does not start from a parse of other bytes', () => {
  it('a source changed since the parse, or while it is rendered, is refused as a full render refuses it', async () => {
    const text = modernSession().toJsonl();
    const source = tmp.file('changing.jsonl', text);
    const lines = await elidable(source);
    // Another hash asked for; the same size with one byte changed; a line appended mid-render.
    const { expected } = await expectSameAsFull(source, [
      { edits: [elide(lines)], sha: '0'.repeat(64) },
      { edits: [elide(lines)], changeAfterLine: 3 },
      { edits: [elide(lines), { op: 'inject_digest', digest }], changeAfterLine: 0 },
    ]);
    expect((expected[0] as { error: { message: string } }).error.message).toMatch(/changed since it was hashed/);
    expect(expected.slice(1).map((e) => (e as { error: { message: string } }).error.message)).toEqual(['changed', 'changed']);

    forgetParsed();
    const sha = (await parse(source)).source_sha256;
    writeFileSync(source, text.replace('"Fix', '"Fux'));
    const declined = parsedSourceCounts().declined;
    const swapped = await renderOf(source, sha, { edits: [elide(lines)] }, Buffer.from(text.replace('"Fix', '"Fux')));
    expect(parsedSourceCounts().declined).toBe(declined + 1);
    expect((swapped as { error: { message: string } }).error.message).toMatch(/changed since it was hashed/);
    writeFileSync(source, text);
  });

  it('a parse under other limits', async () => {
    const source = tmp.file('limits.jsonl', modernSession().toJsonl());
    const lines = await elidable(source);
    forgetParsed();
    const t = await parse(source, { max_records: 1000 });
    const before = parsedSourceCounts();
    await render(tmp.dir, source, t.source_sha256, [elide(lines)]);
    expect(parsedSourceCounts()).toEqual(before);
  });
});

/** Renders of `texts` (asksFor each) that the checks refuse: those never start from the parse. */
async function refusedCount(texts: string[]): Promise<number> {
  let refused = 0;
  for (const text of texts) {
    const source = tmp.file('count.jsonl', text);
    for (const ask of asksFor(await elidable(source))) {
      forgetParsed();
      const sha = (await parse(source)).source_sha256;
      const got = await renderOf(source, sha, ask, Buffer.from(text));
      if ('error' in got) refused += 1;
    }
  }
  return refused;
}
