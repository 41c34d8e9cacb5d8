/**
 * A verify of a candidate or fork this process has just rendered starts from the rows of the source
 * the render copied (verify-rendered.ts). It must report exactly what reading the
 * file in full reports. Each candidate below is verified twice: right after its render (from the
 * render), then again (the render is taken by the first verify, so the second reads in full).
 */
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgetParsed } from '../../../plugins/provider-claude-code/src/parsed-source.js';
import { forgetRendered, rememberRendered, renderedVerifyCounts, takeRendered } from '../../../plugins/provider-claude-code/src/rendered-files.js';
import { verifyTranscript } from '../../../plugins/provider-claude-code/src/verify.js';
import type { DigestBlock, Edit, ProviderVerifyResult } from '../../../schemas/generated/types.js';
import { writeBigSession } from '../../fixtures/claude/big-session.js';
import { breakages } from '../../fixtures/claude/breakages.js';
import { ClaudeSessionBuilder } from '../../fixtures/claude/session-builder.js';
import { modernSession } from '../../fixtures/claude/sessions.js';
import { everyKindOfSession, parse, render, scratch, STUB, verify } from './support.js';
import { elidableLines } from '../../helpers/elide-targets.js';

const tmp = scratch('claude-verify-rendered-');
const digest: DigestBlock = { goal: 'Fix the parser', covers_items: 3, files_touched: ['src/parse.ts'], concepts: [], decisions: ['keep the reader'], errors: [], open_tasks: [] };
const elide = (lines: number[]): Edit => ({ op: 'elide', line_indexes: lines, stub_template: STUB });

async function elidable(source: string): Promise<number[]> {
  const t = await parse(source);
  return elidableLines(t.items);
}

const editsFor = (lines: number[]): Edit[][] => [
  [],
  [elide(lines)],
  [elide(lines.filter((_, i) => i % 2 === 1))],
  [elide(lines), { op: 'inject_digest', digest }],
  [{ op: 'inject_digest', digest }],
];

/**
 * Parses `source`, renders each set of edits from that parse and verifies the candidate twice;
 * expects both verifies to agree. Returns how many verifies started from a render, and the results.
 */
async function expectSameAsFull(source: string, asks: Edit[][], newSessionId: string | null = null): Promise<{ fromRender: number; results: ProviderVerifyResult[] }> {
  forgetParsed();
  forgetRendered();
  const sha = (await parse(source)).source_sha256;
  const results: ProviderVerifyResult[] = [];
  let fromRender = 0;
  for (const edits of asks) {
    let path: string;
    try {
      path = (await render(tmp.dir, source, sha, edits, { newSessionId })).path;
    } catch {
      continue; // A refused render leaves nothing to verify.
    }
    const before = renderedVerifyCounts().reused;
    const first = await verify(path);
    fromRender += renderedVerifyCounts().reused - before;
    const full = await verify(path);
    expect(first, JSON.stringify({ source, newSessionId, edits: edits.map((e) => e.op) })).toStrictEqual(full);
    results.push(full);
  }
  return { fromRender, results };
}

const jsonl = (lines: readonly string[]) => lines.join('\n') + '\n';

/** expectSameAsFull over every breakage the parse accepts; the finding codes seen along the way. */
async function brokenSessionsBothWays(newSessionId: string | null): Promise<{ fromRender: number; codes: Set<string> }> {
  let fromRender = 0;
  const codes = new Set<string>();
  for (const b of breakages()) {
    const source = tmp.file('broken.jsonl', b.text);
    const lines = await elidable(source).catch(() => null);
    if (lines === null) continue; // Refused by the parse: nothing is rendered from it.
    const result = await expectSameAsFull(source, editsFor(lines), newSessionId);
    fromRender += result.fromRender;
    for (const r of result.results) for (const f of r.findings) codes.add(f.code);
  }
  return { fromRender, codes };
}

/** A session with a content block the client drops and a blank line: findings a verify copies from the source. */
function problemSession(): string {
  const lines = modernSession().toJsonl().trimEnd().split('\n');
  const at = lines.findIndex((l) => l.includes('"type":"user"') && l.includes('"content":"'));
  const record = JSON.parse(lines[at]!);
  record.message.content = [{ type: 'text', text: 'see this' }, 'not a block'];
  lines[at] = JSON.stringify(record);
  lines.splice(at + 1, 0, '   ');
  return jsonl(lines);
}

describe('a verify that starts from the render reports what a full read reports', () => {
  it('every kind of session, with every kind of edit', async () => {
    const texts = [...everyKindOfSession(), problemSession()];
    let fromRender = 0;
    let findings = 0;
    for (const text of texts) {
      const source = tmp.file('session.jsonl', text);
      const result = await expectSameAsFull(source, editsFor(await elidable(source)));
      fromRender += result.fromRender;
      findings += result.results.reduce((n, r) => n + r.findings.length, 0);
    }
    // Every render here is one from the parse, so every first verify starts from it.
    expect(fromRender).toBe(texts.length * editsFor([]).length);
    // Sessions with findings are among them, so agreeing is not agreeing on nothing.
    expect(findings).toBeGreaterThan(0);
  });

  it('sessions with broken trees, pairings and lines', async () => {
    const { fromRender, codes } = await brokenSessionsBothWays(null);
    expect(fromRender).toBeGreaterThan(0);
    for (const code of ['dangling_parent', 'invalid_json', 'orphan_tool_result', 'orphan_tool_use', 'shared_message_id', 'duplicate_uuid']) expect(codes).toContain(code);
  });

  it('a session of several MiB, with lines across the read chunks', async () => {
    const source = join(tmp.dir, 'big.jsonl');
    writeBigSession(source, { targetBytes: 9 * 1024 * 1024, records: 3000 });
    const lines = await elidable(source);
    const { fromRender } = await expectSameAsFull(source, [[elide(lines)], [elide(lines.slice(0, 40)), { op: 'inject_digest', digest }]]);
    expect(fromRender).toBe(2);
  });

  it('CRLF lines and an unterminated final line', async () => {
    const crlf = tmp.file('crlf.jsonl', modernSession().toJsonl().replace(/\n/g, '\r\n'));
    const unterminated = tmp.file('unterminated.jsonl', modernSession().toJsonl().replace(/\n$/, ''));
    for (const source of [crlf, unterminated]) {
      const { fromRender } = await expectSameAsFull(source, editsFor(await elidable(source)));
      expect(fromRender).toBe(editsFor([]).length);
    }
  });

  it('tool results in text blocks, one of them empty', async () => {
    const b = new ClaudeSessionBuilder();
    for (let t = 0; t < 5; t++) {
      b.user(`Step ${t}: read the notes`);
      b.tools([{ name: 'Read', input: { file_path: `/notes/${t}.md` }, output: [{ type: 'text', text: `notes ${t} `.repeat(200) }, { type: 'text', text: '' }] }]);
      b.text(`Read notes ${t}.`);
    }
    const source = tmp.file('blocks.jsonl', b.toJsonl());
    const { fromRender } = await expectSameAsFull(source, editsFor(await elidable(source)));
    expect(fromRender).toBe(editsFor([]).length);
  });
});

describe('a candidate that is not what the render wrote is read in full', () => {
  async function rendered(): Promise<{ path: string; text: string; lines: number[] }> {
    const source = tmp.file('changed.jsonl', modernSession().toJsonl());
    forgetParsed();
    const sha = (await parse(source)).source_sha256;
    const lines = await elidable(source);
    const { path } = await render(tmp.dir, source, sha, [elide(lines), { op: 'inject_digest', digest }]);
    return { path, text: readFileSync(path, 'utf8'), lines };
  }

  it('a copied line changed under the same size: the hash differs, and the full read reports it', async () => {
    const { path, text, lines } = await rendered();
    const rows = text.split('\n');
    // A copied line (not an elide target) loses its parent: the same bytes count, another tree.
    const copied = rows.findIndex((row, i) => !lines.includes(i) && /"parentUuid":"[0-9a-f]/.test(row));
    rows[copied] = rows[copied]!.replace(/"parentUuid":"[0-9a-f]/, '"parentUuid":"f');
    writeFileSync(path, rows.join('\n'));
    const before = renderedVerifyCounts();
    const result = await verifyTranscript({ provider_id: 'claude_code', path });
    const after = renderedVerifyCounts();
    expect(after.declined - before.declined).toBe(1);
    expect(after.reused).toBe(before.reused);
    expect(result.findings.map((f) => f.code)).toContain('dangling_parent');
    expect(result).toStrictEqual(await verify(path));
  });

  it('lines after the source that carry a title are read in full: the title is not the source\'s', async () => {
    const { path } = await rendered();
    const note = takeRendered(path)!;
    appendFileSync(path, JSON.stringify({ type: 'custom-title', customTitle: 'Renamed', sessionId: '3f0c2a9e-5b1d-4c7e-9a2f-0d6b8e4c1a7f' }) + '\n');
    // The note says the file is what was written, title line included: only the title declines it.
    rememberRendered(path, { ...note, sha256: createHash('sha256').update(readFileSync(path)).digest('hex'), bytes: statSync(path).size });
    const before = renderedVerifyCounts();
    const result = await verifyTranscript({ provider_id: 'claude_code', path });
    expect(renderedVerifyCounts().declined - before.declined).toBe(1);
    expect(result).toStrictEqual(await verify(path));
  });

  it('a copied line the render got wrong is found, though the file is what the render wrote', async () => {
    const { path, text, lines } = await rendered();
    const note = takeRendered(path)!;
    const rows = text.split('\n');
    const copied = rows.findIndex((row, i) => !lines.includes(i) && /"parentUuid":"[0-9a-f]/.test(row));
    rows[copied] = rows[copied]!.replace(/"parentUuid":"[0-9a-f]/, '"parentUuid":"f');
    writeFileSync(path, rows.join('\n'));
    // As if the render had written that line so: the note's hash and size are the file's.
    rememberRendered(path, { ...note, sha256: createHash('sha256').update(readFileSync(path)).digest('hex'), bytes: statSync(path).size });
    const before = renderedVerifyCounts();
    const result = await verifyTranscript({ provider_id: 'claude_code', path });
    expect(renderedVerifyCounts().declined - before.declined).toBe(1);
    expect(result.findings.map((f) => f.code)).toContain('dangling_parent');
    expect(result).toStrictEqual(await verify(path));
  });

  it('a candidate verified under other read limits is read in full under them', async () => {
    const { path } = await rendered();
    const before = renderedVerifyCounts();
    const limited = await verifyTranscript({ provider_id: 'claude_code', path, max_records: 3 });
    expect(renderedVerifyCounts().declined - before.declined).toBe(1);
    expect(limited.findings.map((f) => f.code)).toContain('over_record_limit');
  });
});

const FORK = '7e57f0ce-0000-4000-8000-00000000f0c5';

describe("a fork's verify that starts from its render reports what a full read reports", () => {
  it('every kind of session, with every kind of edit', async () => {
    const counts: Array<{ fromRender: number; renders: number }> = [];
    for (const text of everyKindOfSession()) {
      const source = tmp.file('session.jsonl', text);
      const result = await expectSameAsFull(source, editsFor(await elidable(source)), FORK);
      counts.push({ fromRender: result.fromRender, renders: result.results.length });
    }
    const spread = counts.pop()!;
    // Sources whose lines are all records: every verify starts from the render.
    for (const { fromRender, renders } of counts) expect(fromRender).toBe(renders);
    // One with unreadable lines, which a fork may make readable: each verify reads in full.
    expect(spread.renders).toBeGreaterThan(0);
    expect(spread.fromRender).toBe(0);
  });

  it('sessions with broken trees, pairings and lines', async () => {
    const { fromRender, codes } = await brokenSessionsBothWays(FORK);
    expect(fromRender).toBeGreaterThan(0);
    for (const code of ['dangling_parent', 'orphan_tool_result', 'duplicate_uuid']) expect(codes).toContain(code);
  });

  it('a session of several MiB, CRLF lines and an unterminated final line', async () => {
    const big = join(tmp.dir, 'big-fork.jsonl');
    writeBigSession(big, { targetBytes: 9 * 1024 * 1024, records: 3000 });
    const lines = await elidable(big);
    expect((await expectSameAsFull(big, [[elide(lines)], [elide(lines.slice(0, 40)), { op: 'inject_digest', digest }]], FORK)).fromRender).toBe(2);
    const crlf = tmp.file('crlf.jsonl', modernSession().toJsonl().replace(/\n/g, '\r\n'));
    const unterminated = tmp.file('unterminated.jsonl', modernSession().toJsonl().replace(/\n$/, ''));
    for (const source of [crlf, unterminated]) {
      expect((await expectSameAsFull(source, editsFor(await elidable(source)), FORK)).fromRender).toBe(editsFor([]).length);
    }
  });

  it('lines that spell sessionId twice, or with escapes, each get the fork id where the render put it', async () => {
    const lines = modernSession().toJsonl().trimEnd().split('\n');
    const users = lines.flatMap((l, i) => (l.includes('"type":"user"') && l.includes('"sessionId":"') ? [i] : []));
    expect(users.length).toBeGreaterThan(2);
    // Twice: JSON.parse takes the last; a fork writes its id over both.
    lines[users[0]!] = lines[users[0]!]!.replace(/^\{/, '{"sessionId":"0ld00000-0000-4000-8000-000000000000",');
    // A key spelled with an escape is the same key to every reader.
    lines[users[1]!] = lines[users[1]!]!.replace('"sessionId":', '"\\u0073essionId":');
    // And the escape elsewhere in the line, with the plain spelling once.
    lines[users[2]!] = lines[users[2]!]!.replace(/\}$/, ',"note":"caf\\u00e9"}');
    const source = tmp.file('spellings.jsonl', jsonl(lines));
    const asks = editsFor(await elidable(source));
    const { fromRender, results } = await expectSameAsFull(source, asks, FORK);
    expect(results.length).toBe(asks.length);
    expect(fromRender).toBe(asks.length);
    const sha = (await parse(source)).source_sha256;
    const { path } = await render(tmp.dir, source, sha, [], { newSessionId: FORK });
    const forked = readFileSync(path, 'utf8').split('\n');
    for (const at of users.slice(0, 3)) expect(JSON.parse(forked[at]!).sessionId).toBe(FORK);
  });

  it('a source written to after the render is not read back: the fork is read in full', async () => {
    const source = tmp.file('moved-source.jsonl', modernSession().toJsonl());
    forgetParsed();
    const sha = (await parse(source)).source_sha256;
    const { path } = await render(tmp.dir, source, sha, [elide(await elidable(source))], { newSessionId: FORK });
    // Rewritten in place with the same bytes: only its change time says it was written.
    writeFileSync(source, readFileSync(source));
    const before = renderedVerifyCounts();
    const result = await verifyTranscript({ provider_id: 'claude_code', path });
    expect(renderedVerifyCounts().declined - before.declined).toBe(1);
    expect(result).toStrictEqual(await verify(path));
  });

  it('a source line that is no record, though it names the session, sends the fork to a full read', async () => {
    const lines = modernSession().toJsonl().trimEnd().split('\n');
    const at = lines.findIndex((l) => l.includes('"type":"assistant"'));
    lines.splice(at, 0, lines[at]!.slice(0, lines[at]!.indexOf('"message"')));
    const source = tmp.file('unreadable.jsonl', jsonl(lines));
    const { fromRender, results } = await expectSameAsFull(source, [[]], FORK);
    expect(results).toHaveLength(1);
    expect(fromRender).toBe(0);
  });

  it('verified under its own record count, as apply verifies a fork, it still starts from the render', async () => {
    const source = tmp.file('apply.jsonl', modernSession().toJsonl());
    forgetParsed();
    const sha = (await parse(source)).source_sha256;
    const { path, result } = await render(tmp.dir, source, sha, [elide(await elidable(source)), { op: 'inject_digest', digest }], { newSessionId: FORK });
    const before = renderedVerifyCounts().reused;
    const first = await verifyTranscript({ provider_id: 'claude_code', path, max_records: result.record_count });
    expect(renderedVerifyCounts().reused - before).toBe(1);
    expect(first).toStrictEqual(await verifyTranscript({ provider_id: 'claude_code', path, max_records: result.record_count }));
  });

  it('a copied line the render got wrong is found, though the file is what the render wrote', async () => {
    const source = tmp.file('wrong-fork.jsonl', modernSession().toJsonl());
    forgetParsed();
    const sha = (await parse(source)).source_sha256;
    const lines = await elidable(source);
    const sourceIds = new Set(readFileSync(source, 'utf8').match(/"sessionId":"[^"]+"/g));
    for (const wrong of [
      // Another byte than the session id: the line loses its parent.
      (row: string) => row.replace(/"parentUuid":"[0-9a-f]/, '"parentUuid":"f'),
      // The session id left as it was in the source.
      (row: string) => row.replace(`"sessionId":"${FORK}"`, [...sourceIds][0]!),
    ]) {
      const { path } = await render(tmp.dir, source, sha, [elide(lines)], { newSessionId: FORK });
      const note = takeRendered(path)!;
      const rows = readFileSync(path, 'utf8').split('\n');
      const copied = rows.findIndex((row, i) => !lines.includes(i) && /"parentUuid":"[0-9a-f]/.test(row));
      const changed = wrong(rows[copied]!);
      expect(changed).not.toBe(rows[copied]);
      rows[copied] = changed;
      writeFileSync(path, rows.join('\n'));
      rememberRendered(path, { ...note, sha256: createHash('sha256').update(readFileSync(path)).digest('hex'), bytes: statSync(path).size });
      const before = renderedVerifyCounts();
      const result = await verifyTranscript({ provider_id: 'claude_code', path });
      expect(renderedVerifyCounts().declined - before.declined).toBe(1);
      expect(result).toStrictEqual(await verify(path));
    }
  });
});
