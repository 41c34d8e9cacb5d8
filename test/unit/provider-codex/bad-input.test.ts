import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { verify } from '../../../plugins/provider-codex/src/verify.js';
import { RolloutBuilder, filler, item } from '../../fixtures/codex/rollout-builder.js';
import { writeLargeRollout } from '../../fixtures/codex/large-rollout.js';
import { legacySession } from '../../fixtures/codex/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'codex-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer) => {
  const path = join(dir, `f${n++}.jsonl`);
  writeFileSync(path, content);
  return path;
};

const INVALID_INPUT = -32002;
const notARollout = {
  severity: 'error',
  code: 'not_codex_rollout',
  message:
    'the file is not a Codex rollout (no record has a session_meta or payload envelope): verify it with the provider whose transcript it is (given the path, gobstopper verify picks the provider that recognises the file)',
  line_index: null,
};
const SOURCE_CHANGED = -32001;
const LIMIT_EXCEEDED = -32004;

async function refusalOf(call: typeof parse | typeof verify, path: string, extra: Record<string, unknown>) {
  return call({ provider_id: 'codex', path, ...extra }).then(
    () => null,
    (e: unknown) => e as { code: number; message: string },
  );
}

async function expectRefusal(path: string, code: number, message?: RegExp, extra: Record<string, unknown> = {}) {
  const before = readFileSync(path);
  for (const call of [parse, verify]) {
    const error = await refusalOf(call, path, extra);
    expect(error, `${call.name} should refuse`).not.toBeNull();
    expect(error!.code).toBe(code);
    expect(error!.message.split('\n')).toHaveLength(1);
    if (message) expect(error!.message).toMatch(message);
  }
  expect(readFileSync(path).equals(before)).toBe(true);
}

/**
 * Bytes the reader refuses: parse refuses them with one clear error, and verify reports them as
 * Claude's verify does, as one error finding (what `gobstopper verify` shows before it exits 1).
 */
async function expectReported(path: string, code: number, finding: { code: string; message: RegExp; line_index?: number }, extra: Record<string, unknown> = {}) {
  const before = readFileSync(path);
  const error = await refusalOf(parse, path, extra);
  expect(error, 'parse should refuse').not.toBeNull();
  expect(error!.code).toBe(code);
  expect(error!.message.split('\n')).toHaveLength(1);
  expect(error!.message).toMatch(finding.message);
  const result = await verify({ provider_id: 'codex', path, ...extra });
  expect(result).toEqual({ findings: [{ severity: 'error', code: finding.code, message: expect.stringMatching(finding.message), line_index: finding.line_index ?? null }], record_count: 0 });
  expect(readFileSync(path).equals(before)).toBe(true);
}

describe('provider-codex: bad input gets one clear error and changes nothing', () => {
  const savedEnv = { ...process.env };
  afterEach(() => {
    process.env.GOBSTOPPER_MAX_RECORDS = savedEnv.GOBSTOPPER_MAX_RECORDS;
    process.env.GOBSTOPPER_MAX_TRANSCRIPT_BYTES = savedEnv.GOBSTOPPER_MAX_TRANSCRIPT_BYTES;
    process.env.GOBSTOPPER_MAX_RECORD_BYTES = savedEnv.GOBSTOPPER_MAX_RECORD_BYTES;
    if (savedEnv.GOBSTOPPER_MAX_RECORDS === undefined) delete process.env.GOBSTOPPER_MAX_RECORDS;
    if (savedEnv.GOBSTOPPER_MAX_TRANSCRIPT_BYTES === undefined) delete process.env.GOBSTOPPER_MAX_TRANSCRIPT_BYTES;
    if (savedEnv.GOBSTOPPER_MAX_RECORD_BYTES === undefined) delete process.env.GOBSTOPPER_MAX_RECORD_BYTES;
  });

  it('empty file', () => expectReported(file(''), INVALID_INPUT, { code: 'empty_transcript', message: /empty/ }));
  it('a NUL byte anywhere: parse refuses the file, verify reports binary_content', async () => {
    await expectReported(file(Buffer.from([0x7b, 0x00, 0x01, 0x02, 0x0a])), INVALID_INPUT, { code: 'binary_content', message: /NUL bytes/ });
    const sound = legacySession().builder.text();
    await expectReported(file(Buffer.concat([Buffer.from(sound), Buffer.from('{"type":"event_msg","payload":{"type":"x\0"}}\n')])), INVALID_INPUT, { code: 'binary_content', message: /NUL bytes/ });
  });
  it('invalid UTF-8 in the middle: parse refuses it, verify lists it as an error and judges the rest', async () => {
    const b = legacySession().builder;
    const text = Buffer.from(b.text());
    const bad = Buffer.concat([text.subarray(0, 40), Buffer.from([0xc3, 0x28]), text.subarray(42)]);
    const path = file(bad);
    await expect(parse({ provider_id: 'codex', path })).rejects.toMatchObject({ code: INVALID_INPUT, message: expect.stringMatching(/line 1 is not valid UTF-8$/) });
    const result = await verify({ provider_id: 'codex', path });
    expect(result.findings.filter((f) => f.severity === 'error').map((f) => [f.code, f.line_index])).toContainEqual(['invalid_utf8', 0]);
    // The other lines are still read: the session's record count is the whole file's.
    expect(result.record_count).toBe(text.toString('utf8').split('\n').filter(Boolean).length);
    expect(readFileSync(path).equals(bad)).toBe(true);
  });
  it('a path that does not exist', async () => {
    await expect(parse({ provider_id: 'codex', path: join(dir, 'missing.jsonl') })).rejects.toMatchObject({ code: INVALID_INPUT, message: expect.stringMatching(/does not exist/) });
  });
  it('a directory', async () => {
    const d = join(dir, `d${n++}`);
    mkdirSync(d);
    await expect(parse({ provider_id: 'codex', path: d })).rejects.toMatchObject({ code: INVALID_INPUT, message: expect.stringMatching(/not a regular file/) });
  });
  it('a symbolic link', async () => {
    const target = legacySession().builder.writeTo(join(dir, `t${n++}`));
    const link = join(dir, `link${n++}.jsonl`);
    symlinkSync(target, link);
    await expect(parse({ provider_id: 'codex', path: link })).rejects.toMatchObject({ code: INVALID_INPUT, message: expect.stringMatching(/symbolic link/) });
  });
  it('another provider\'s transcript or other JSONL: parse refuses it, verify reports the one finding not_codex_rollout', async () => {
    const claude = '{"type":"user","sessionId":"s","uuid":"u","parentUuid":null,"message":{"role":"user","content":"hi"}}\n';
    for (const [text, records] of [[claude, 1], ['{"a":1}\nnot json\n[2]\n', 3]] as const) {
      const path = file(text);
      await expect(parse({ provider_id: 'codex', path })).rejects.toMatchObject({ code: INVALID_INPUT, message: `${path} is not a Codex rollout (no record has a session_meta or payload envelope)` });
      // Not the scan's line-by-line findings: judged as a rollout's, each line would be "wrong".
      expect(await verify({ provider_id: 'codex', path })).toEqual({ findings: [notARollout], record_count: records });
    }
  });
  it('a single 50 MiB line that is not JSON', async () => {
    const path = file('x'.repeat(50 * 1024 * 1024));
    await expect(parse({ provider_id: 'codex', path })).rejects.toMatchObject({ code: INVALID_INPUT, message: expect.stringMatching(/not a Codex rollout/) });
    expect(await verify({ provider_id: 'codex', path })).toEqual({ findings: [notARollout], record_count: 1 });
  });

  it('a 50 MiB tool output inside a sound rollout is parsed, and elidable', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('dump it').shell('c1', 'cat big.log', null);
    const line = b.nextLine;
    b.response(item.functionOutput('c1', 'y'.repeat(50 * 1024 * 1024)));
    const t = await parse({ provider_id: 'codex', path: file(b.text()) });
    expect(t.items[line]).toMatchObject({ kind: 'tool_result', elidable_bytes: 50 * 1024 * 1024 });
  });

  it('a record over the 64 MiB default record limit, or the one set in GOBSTOPPER_MAX_RECORD_BYTES, is refused as it streams', async () => {
    await expectReported(file('x'.repeat(65 * 1024 * 1024) + '\n'), LIMIT_EXCEEDED, { code: 'oversized_record', message: /line 1 is over the 67108864-byte record limit/, line_index: 0 });
    process.env.GOBSTOPPER_MAX_RECORD_BYTES = '4096';
    const b = new RolloutBuilder();
    b.sessionMeta().user('dump it').shell('c1', 'cat big.log', null).response(item.functionOutput('c1', 'y'.repeat(5000)));
    const first = b.text().split('\n').findIndex((l) => Buffer.byteLength(l) > 4096);
    expect(first).toBe(b.nextLine - 1);
    const path = file(b.text());
    await expect(parse({ provider_id: 'codex', path })).rejects.toMatchObject({ code: LIMIT_EXCEEDED, message: `${path}: line ${first + 1} is over the 4096-byte record limit (GOBSTOPPER_MAX_RECORD_BYTES)` });
    // verify reads no further than the record it cannot hold, and says where it stopped, as for Claude.
    expect((await verify({ provider_id: 'codex', path })).findings).toEqual([
      { severity: 'error', code: 'oversized_record', line_index: first, message: `${path}: line ${first + 1} is over the 4096-byte record limit (GOBSTOPPER_MAX_RECORD_BYTES); the rest of the file was not read` },
    ]);
    process.env.GOBSTOPPER_MAX_RECORD_BYTES = 'big';
    await expectRefusal(file(b.text()), INVALID_INPUT, /GOBSTOPPER_MAX_RECORD_BYTES must be a whole number/);
  });

  it('invalid UTF-8 is named by its line, counted from 1 as verify counts', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('first').user('second');
    const lines = b.text().split('\n').map((l) => Buffer.from(l));
    lines[2] = Buffer.concat([lines[2]!.subarray(0, 20), Buffer.from([0xff, 0xfe]), lines[2]!.subarray(20)]);
    const path = file(Buffer.concat(lines.flatMap((l, i) => (i < lines.length - 1 ? [l, Buffer.from('\n')] : [l]))));
    const error = await parse({ provider_id: 'codex', path }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/: line 3 is not valid UTF-8$/);
  });

  it('over the byte limit, from params or from GOBSTOPPER_MAX_TRANSCRIPT_BYTES', async () => {
    const path = file(legacySession().builder.text());
    await expectReported(path, LIMIT_EXCEEDED, { code: 'over_byte_limit', message: /over the 1024-byte transcript limit/ }, { max_bytes: 1024 });
    process.env.GOBSTOPPER_MAX_TRANSCRIPT_BYTES = '1024';
    await expectReported(path, LIMIT_EXCEEDED, { code: 'over_byte_limit', message: /over the 1024-byte transcript limit/ });
  });

  it('over the record limit, from params or from GOBSTOPPER_MAX_RECORDS', async () => {
    const path = file(legacySession().builder.text());
    await expectReported(path, LIMIT_EXCEEDED, { code: 'over_record_limit', message: /has more than 5 records$/ }, { max_records: 5 });
    process.env.GOBSTOPPER_MAX_RECORDS = '5';
    await expectReported(path, LIMIT_EXCEEDED, { code: 'over_record_limit', message: /has more than 5 records$/ });
  });

  it('the default record limit: 100,000 records parse, one more is refused', async () => {
    delete process.env.GOBSTOPPER_MAX_RECORDS;
    const ok = join(dir, `max${n++}.jsonl`);
    expect(writeLargeRollout(ok, { records: 100_000, bytes: 24 * 1024 * 1024 }).records).toBe(100_000);
    const t = await parse({ provider_id: 'codex', path: ok });
    expect(t.items).toHaveLength(100_000);
    expect(t.findings!.filter((f) => f.severity !== 'info')).toEqual([]);
    const over = join(dir, `over${n++}.jsonl`);
    writeLargeRollout(over, { records: 100_001, bytes: 24 * 1024 * 1024 });
    await expectReported(over, LIMIT_EXCEEDED, { code: 'over_record_limit', message: /more than 100000 records/ });
  });

  it('a malformed limit in the environment', async () => {
    process.env.GOBSTOPPER_MAX_RECORDS = 'lots';
    await expectRefusal(file(legacySession().builder.text()), INVALID_INPUT, /GOBSTOPPER_MAX_RECORDS/);
  });

  it('a file that grows while it is read', async () => {
    const b = legacySession().builder;
    for (let i = 0; i < 400; i += 1) b.shell(`g${i}`, 'ls', filler(2000));
    const path = file(b.text());
    const pending = parse({ provider_id: 'codex', path });
    appendFileSync(path, `${JSON.stringify({ timestamp: '2026-02-23T13:00:00.000Z', type: 'event_msg', payload: { type: 'agent_message', message: 'late' } })}\n`);
    await expect(pending).rejects.toMatchObject({ code: SOURCE_CHANGED, message: expect.stringMatching(/changed while it was read/) });
  });

  it('a file that disappears while it is read', async () => {
    const path = file(legacySession().builder.text());
    const pending = parse({ provider_id: 'codex', path });
    unlinkSync(path);
    await expect(pending).rejects.toMatchObject({ code: SOURCE_CHANGED, message: expect.stringMatching(/disappeared/) });
  });

  it('a source whose hash is not the expected one', async () => {
    const path = file(legacySession().builder.text());
    await expect(parse({ provider_id: 'codex', path, expected_sha256: '0'.repeat(64) })).rejects.toMatchObject({ code: SOURCE_CHANGED });
  });
});

/**
 * Codex 0.171 refuses to resume a rollout whose first session_meta has one of these fields with
 * another type ("does not start with session metadata"), so verify calls it an error; it resumes
 * the ones it tolerates (docs/design.md, "session_meta field types").
 */
describe('provider-codex: a session_meta field of a type the client cannot read', () => {
  const withMeta = (extra: Record<string, unknown>) => {
    const b = new RolloutBuilder({ paginated: true, id: '019d0000-0000-7000-8000-0000000000e1' });
    b.sessionMeta(extra as never).user('hi').assistant('hello');
    return b.writeTo(join(dir, `meta${n++}`));
  };

  for (const [field, value, type] of [
    ['cwd', ['x'], 'a string'],
    ['cwd', null, 'a string'],
    ['timestamp', 5, 'a string'],
    ['originator', { a: 1 }, 'a string'],
    ['cli_version', 7, 'a string'],
    ['source', 5, 'a string or an object with the single key subagent'],
    ['source', { x: 1 }, 'a string or an object with the single key subagent'],
    ['model_provider', 5, 'a string or null'],
    ['base_instructions', 'be brief', 'an object with a string text, or null'],
    ['git', 'main', 'an object whose commit_hash, branch and repository_url are strings or null, or null'],
    ['git', { commit_hash: 5 }, 'an object whose commit_hash, branch and repository_url are strings or null, or null'],
  ] as const) {
    it(`${field}: ${JSON.stringify(value)} is an invalid_session_meta error naming the field and its type`, async () => {
      const path = withMeta({ [field]: value });
      const before = readFileSync(path);
      const result = await verify({ provider_id: 'codex', path });
      expect(result.findings).toEqual([
        { severity: 'error', code: 'invalid_session_meta', message: `session_meta on line 1 has a ${field} value of a type the client cannot read: it must be ${type}`, line_index: 0 },
      ]);
      expect(readFileSync(path).equals(before)).toBe(true);
    });
  }

  it('one error per unreadable field', async () => {
    const result = await verify({ provider_id: 'codex', path: withMeta({ cwd: ['x'], timestamp: 5, originator: { a: 1 }, cli_version: 7 }) });
    expect(result.findings.map((f) => [f.code, f.message.split(' ')[6]])).toEqual([
      ['invalid_session_meta', 'timestamp'],
      ['invalid_session_meta', 'cwd'],
      ['invalid_session_meta', 'originator'],
      ['invalid_session_meta', 'cli_version'],
    ]);
  });

  it('fields the client tolerates stay clean: instructions of any type, null model_provider/git/base_instructions, any string timestamp or source', async () => {
    for (const extra of [
      { instructions: 5 },
      { instructions: { text: 'x' } },
      { model_provider: null },
      { git: null },
      { git: {} },
      { base_instructions: null },
      { timestamp: 'not a date' },
      { source: 'bogus' },
      { cwd: 'relative/dir' },
    ]) {
      expect((await verify({ provider_id: 'codex', path: withMeta(extra) })).findings, JSON.stringify(extra)).toEqual([]);
    }
  });
});

/**
 * Codex 0.171 refuses to resume a rollout whose first session_meta lacks id, timestamp, cwd,
 * originator or cli_version ("does not start with session metadata"), legacy and paginated alike,
 * and resumes one without any other field (docs/design.md, "session_meta field types").
 */
describe('provider-codex: a session_meta without a field the client needs', () => {
  /** A session whose first session_meta lacks `omit` and carries `extra`. */
  const withoutMeta = (omit: string[], paginated: boolean, extra: Record<string, unknown> = {}) => {
    const b = new RolloutBuilder({ paginated, id: '019d0000-0000-7000-8000-0000000000e2' });
    // An undefined value is left out of the written record.
    b.sessionMeta({ ...extra, ...Object.fromEntries(omit.map((field) => [field, undefined])) } as never).user('hi').assistant('hello');
    return b.writeTo(join(dir, `meta${n++}`));
  };
  const lacking = (field: string) => ({ severity: 'error', code: 'invalid_session_meta', message: `session_meta on line 1 lacks the ${field} field the client needs to read it`, line_index: 0 });

  for (const field of ['id', 'timestamp', 'cwd', 'originator', 'cli_version']) {
    for (const paginated of [false, true]) {
      it(`${field} (${paginated ? 'paginated' : 'legacy'}): verify names it as invalid_session_meta and parse refuses the rollout naming it`, async () => {
        const path = withoutMeta([field], paginated);
        const before = readFileSync(path);
        expect((await verify({ provider_id: 'codex', path })).findings).toEqual([lacking(field)]);
        const error = await refusalOf(parse, path, {});
        expect(error).toMatchObject({ code: INVALID_INPUT });
        expect(error!.message).toBe(`${path}: session_meta on line 1 lacks the ${field} field the client needs to read it, so codex cannot resume it (gobstopper verify lists every finding)`);
        expect(readFileSync(path).equals(before)).toBe(true);
      });
    }
  }

  it('one error per missing field, before any of a type the client cannot read', async () => {
    const result = await verify({ provider_id: 'codex', path: withoutMeta(['timestamp', 'cli_version'], true, { cwd: 5 }) });
    expect(result.findings.map((f) => [f.code, f.message.split(' ')[6]])).toEqual([
      ['invalid_session_meta', 'timestamp'],
      ['invalid_session_meta', 'cli_version'],
      ['invalid_session_meta', 'cwd'],
    ]);
  });

  it('session_id does not stand in for a missing id, nor for an id the client cannot read', async () => {
    const sessionId = '019d0000-0000-7000-8000-0000000000e2';
    expect((await verify({ provider_id: 'codex', path: withoutMeta(['id'], true, { session_id: sessionId }) })).findings).toEqual([lacking('id')]);
    expect((await verify({ provider_id: 'codex', path: withoutMeta([], true, { id: 5, session_id: sessionId }) })).findings).toEqual([
      { severity: 'error', code: 'invalid_session_meta', message: 'session_meta on line 1 has no string id', line_index: 0 },
    ]);
  });

  it('fields the client resumes without stay clean, one at a time and all at once', async () => {
    for (const [omit, paginated] of [
      [['source'], false],
      [['model_provider'], false],
      [['base_instructions'], true],
      [['history_mode'], true],
      [['source', 'model_provider', 'base_instructions'], false],
      [['source', 'model_provider', 'base_instructions', 'history_mode'], true],
    ] as const) {
      const path = withoutMeta([...omit], paginated);
      expect((await verify({ provider_id: 'codex', path })).findings, JSON.stringify(omit)).toEqual([]);
      await expect(parse({ provider_id: 'codex', path })).resolves.toBeDefined();
    }
  });
});
