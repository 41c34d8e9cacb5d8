import { appendFileSync, mkdirSync, readFileSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseTranscript } from '../../../plugins/provider-claude-code/src/parse.js';
import { PluginErrorCodes } from '../../../sdk/protocol.js';
import { breakages } from '../../fixtures/claude/breakages.js';
import { modernSession } from '../../fixtures/claude/sessions.js';
import { parse, scratch, verify } from './support.js';

const tmp = scratch('claude-bad-');
const MiB = 1024 * 1024;

/** Parses and expects a protocol error with `code` whose one-line message matches `message`. */
async function refused(path: string, code: number, message: RegExp, extra: object = {}) {
  const before = readFileSync(path);
  const error = await parseTranscript({ provider_id: 'claude_code', path, ...extra }).then(
    () => null,
    (e: unknown) => e as { code: number; message: string },
  );
  expect(error, 'expected a refusal').not.toBeNull();
  expect(error!.code).toBe(code);
  expect(error!.message).toMatch(message);
  expect(error!.message).not.toContain('\n');
  // Nothing was written anywhere: the source is as it was.
  expect(readFileSync(path).equals(before)).toBe(true);
  return error!;
}

const valid = () => modernSession().lines();

afterEach(() => vi.unstubAllEnvs());

describe('bad input gets a clear error and changes nothing', () => {
  it('an empty file', async () => {
    await refused(tmp.file('empty.jsonl', ''), PluginErrorCodes.InvalidInput, /is empty/);
  });

  it('a binary file', async () => {
    await refused(tmp.file('bin.jsonl', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x0a, 0x1a])), PluginErrorCodes.InvalidInput, /binary/);
  });

  it('invalid UTF-8', async () => {
    const lines = valid();
    const bad = Buffer.concat([Buffer.from(lines.slice(0, 3).join('\n') + '\n'), Buffer.from('{"type":"user","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    await refused(tmp.file('utf8.jsonl', bad), PluginErrorCodes.InvalidInput, /line 4 is not valid UTF-8/);
  });

  it('a 50 MiB single line', async () => {
    const huge = Buffer.alloc(50 * MiB, 0x61);
    await refused(tmp.file('huge.jsonl', huge), PluginErrorCodes.LimitExceeded, /over the 33554432-byte record limit/);
  });

  it('a record that is not an object', async () => {
    const lines = valid();
    lines.splice(4, 0, '["an", "array"]');
    await refused(tmp.file('array.jsonl', lines.join('\n') + '\n'), PluginErrorCodes.InvalidInput, /line 5 is not a JSON object/);
    await refused(tmp.file('number.jsonl', '42\n'), PluginErrorCodes.InvalidInput, /line 1 is not a JSON object/);
  });

  it.each([
    ['type', (r: Record<string, unknown>) => (r.type = 7), /no string "type"/],
    ['uuid', (r: Record<string, unknown>) => (r.uuid = { id: 1 }), /"uuid" is not a valid id/],
    ['parentUuid', (r: Record<string, unknown>) => (r.parentUuid = 12), /"parentUuid" is neither null nor a valid id/],
    ['sessionId', (r: Record<string, unknown>) => (r.sessionId = ['x']), /"sessionId" is not a string/],
    ['isSidechain', (r: Record<string, unknown>) => (r.isSidechain = 'no'), /"isSidechain" is not a boolean/],
    ['message', (r: Record<string, unknown>) => (r.message = 'hello'), /line 3 is a user record whose "message" is not an object$/],
    ['content', (r: Record<string, unknown>) => ((r.message as Record<string, unknown>).content = 5), /line 3 is a user record whose "message.content" is neither a string nor an array$/],
  ])('a wrong %s type', async (_field, mutate, message) => {
    const b = modernSession();
    mutate(b.records[2]!);
    await refused(tmp.file('types.jsonl', b.toJsonl()), PluginErrorCodes.InvalidInput, message);
  });

  it('an assistant record with a wrong content type is named as one', async () => {
    const b = modernSession();
    const index = b.records.findIndex((r) => r.type === 'assistant');
    (b.records[index]!.message as Record<string, unknown>).content = 5;
    await refused(tmp.file('assistant.jsonl', b.toJsonl()), PluginErrorCodes.InvalidInput, new RegExp(`line ${index + 1} is an assistant record whose "message.content" is neither a string nor an array$`));
  });

  it('a parent cycle', async () => {
    const cycle = breakages().find((b) => b.code === 'parent_cycle')!;
    await refused(tmp.file('cycle.jsonl', cycle.text), PluginErrorCodes.InvalidInput, /loops back on itself/);
  });

  it('duplicate tool ids on the live branch', async () => {
    const b = modernSession();
    const uses = b.records.filter((r) => r.type === 'assistant' && JSON.stringify(r).includes('"tool_use"'));
    const block = (r: Record<string, unknown>) => ((r.message as Record<string, unknown>).content as Array<Record<string, unknown>>)[0]!;
    block(uses[3]!).id = block(uses[0]!).id;
    await refused(tmp.file('dupids.jsonl', b.toJsonl()), PluginErrorCodes.InvalidInput, /repeats a tool_use id first used on line/);
  });

  it('a file over the byte limit, from the params or the environment', async () => {
    const path = tmp.file('big.jsonl', modernSession().toJsonl());
    await refused(path, PluginErrorCodes.LimitExceeded, /over the 4096-byte transcript limit/, { max_bytes: 4096 });
    vi.stubEnv('GOBSTOPPER_MAX_TRANSCRIPT_BYTES', '2048');
    // The message names the variable that raises the limit, as the record limit's does.
    await refused(path, PluginErrorCodes.LimitExceeded, /over the 2048-byte transcript limit \(GOBSTOPPER_MAX_TRANSCRIPT_BYTES\)/);
  });

  it('a file over the record limit, from the params or the environment', async () => {
    const path = tmp.file('many.jsonl', modernSession().toJsonl());
    await refused(path, PluginErrorCodes.LimitExceeded, /more than 10 records/, { max_records: 10 });
    vi.stubEnv('GOBSTOPPER_MAX_RECORDS', '12');
    await refused(path, PluginErrorCodes.LimitExceeded, /more than 12 records/);
  });

  it('a record over the per-record limit set in the environment', async () => {
    vi.stubEnv('GOBSTOPPER_MAX_RECORD_BYTES', '1024');
    const b = modernSession();
    const path = tmp.file('record.jsonl', b.toJsonl());
    const first = b.lines().findIndex((l) => Buffer.byteLength(l) > 1024);
    expect(first).toBeGreaterThan(0);
    await refused(path, PluginErrorCodes.LimitExceeded, new RegExp(`: line ${first + 1} is over the 1024-byte record limit \\(GOBSTOPPER_MAX_RECORD_BYTES\\)$`));
    // verify reads no further than the record it cannot hold, and says where it stopped.
    expect((await verify(path)).findings).toEqual([
      { severity: 'error', code: 'oversized_record', line_index: first, message: `${path}: line ${first + 1} is over the 1024-byte record limit (GOBSTOPPER_MAX_RECORD_BYTES); the rest of the file was not read` },
    ]);
  });

  it('a file that grows while it is read', async () => {
    const path = tmp.file('grows.jsonl', modernSession().toJsonl());
    const error = await parseTranscript({ provider_id: 'claude_code', path }, (line) => {
      if (line === 3) appendFileSync(path, valid()[2] + '\n');
    }).catch((e: unknown) => e as { code: number; message: string });
    expect(error).toMatchObject({ code: PluginErrorCodes.SourceChanged });
    expect((error as { message: string }).message).toMatch(/changed while it was read/);
  });

  it('a file that disappears while it is read', async () => {
    const path = tmp.file('vanishes.jsonl', modernSession().toJsonl());
    const error = await parseTranscript({ provider_id: 'claude_code', path }, (line) => {
      if (line === 3) unlinkSync(path);
    }).catch((e: unknown) => e as { code: number; message: string });
    expect(error).toMatchObject({ code: PluginErrorCodes.SourceChanged });
    expect((error as { message: string }).message).toMatch(/disappeared while it was read/);
  });

  it('a file whose bytes differ from the hash the host bound the call to', async () => {
    const path = tmp.file('sha.jsonl', modernSession().toJsonl());
    await refused(path, PluginErrorCodes.SourceChanged, /changed since it was hashed/, { expected_sha256: 'a'.repeat(64) });
    const t = await parse(path);
    expect((await parse(path, { expected_sha256: t.source_sha256 })).source_sha256).toBe(t.source_sha256);
  });

  it('a path that is missing, a directory or a symbolic link', async () => {
    const missing = join(tmp.dir, 'nope.jsonl');
    await expect(parseTranscript({ provider_id: 'claude_code', path: missing })).rejects.toMatchObject({ code: PluginErrorCodes.InvalidInput, message: `${missing} does not exist` });
    const dir = join(tmp.dir, 'adir.jsonl');
    mkdirSync(dir);
    await expect(parseTranscript({ provider_id: 'claude_code', path: dir })).rejects.toMatchObject({ code: PluginErrorCodes.InvalidInput });
    const link = join(tmp.dir, 'link.jsonl');
    symlinkSync(tmp.file('target.jsonl', modernSession().toJsonl()), link);
    await expect(parseTranscript({ provider_id: 'claude_code', path: link })).rejects.toMatchObject({ code: PluginErrorCodes.InvalidInput, message: expect.stringMatching(/symbolic link/) });
  });

  it('another provider\'s transcript', async () => {
    const codex = [
      { timestamp: '2026-02-23T12:40:23.000Z', type: 'session_meta', payload: { id: '019c8a4c-ed82-79a1-aa28-7738fc5ab61a', cwd: '/x' } },
      { timestamp: '2026-02-23T12:40:24.000Z', type: 'response_item', payload: { type: 'message', role: 'user', content: [] } },
    ];
    // A line that is not JSON among them is no Claude record gone wrong either.
    const path = tmp.file('codex.jsonl', [...codex.map((r) => JSON.stringify(r)), 'not json'].join('\n') + '\n');
    await refused(path, PluginErrorCodes.InvalidInput, /not a Claude Code transcript/);
    expect(await verify(path)).toEqual({
      findings: [
        {
          severity: 'error',
          code: 'not_claude_transcript',
          message:
            "the file is not a Claude Code transcript (its records look like another provider's): verify it with the provider whose transcript it is (given the path, gobstopper verify picks the provider that recognises the file)",
          line_index: null,
        },
      ],
      record_count: 3,
    });
  });
});
