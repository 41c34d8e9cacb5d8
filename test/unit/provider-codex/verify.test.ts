import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { verify } from '../../../plugins/provider-codex/src/verify.js';
import { validateProviderVerifyResult } from '../../../schemas/generated/validators.js';
import { breakages } from '../../fixtures/codex/breakages.js';
import { RolloutBuilder, item } from '../../fixtures/codex/rollout-builder.js';
import { compactedSession, legacySession, paginatedSession } from '../../fixtures/codex/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'codex-verify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const run = (path: string) => verify({ provider_id: 'codex', path });

describe('provider-codex verify: sound rollouts', () => {
  for (const [name, make] of [
    ['legacy', () => legacySession().builder],
    ['paginated', () => paginatedSession().builder],
    ['compacted legacy', () => compactedSession().builder],
    ['compacted paginated', () => compactedSession({ paginated: true }).builder],
  ] as const) {
    it(`finds nothing in a ${name} session`, async () => {
      const result = await run(make().writeTo(join(dir, String(n++))));
      expect(validateProviderVerifyResult(result)).toBe(true);
      expect(result.findings).toEqual([]);
      expect(result.session_kind).toBe('session');
    });
  }

  it('a byte-order mark makes the first line unreadable, as it is to the client\'s JSON parser', async () => {
    const path = legacySession().builder.writeTo(join(dir, String(n++)));
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(path)]));
    const result = await run(path);
    expect(result.findings).toContainEqual(expect.objectContaining({ severity: 'error', code: 'invalid_json', line_index: 0 }));
  });

  it('accepts a legacy rollout with neither ordinals nor history_mode (the client keeps appended cards there)', async () => {
    const b = legacySession().builder;
    b.response(item.user('[gobstopper state card]\n(covers 3 earlier records)'));
    expect((await run(b.writeTo(join(dir, String(n++))))).findings).toEqual([]);
  });
});

describe('provider-codex verify: every breakage the client repairs or refuses', () => {
  for (const c of breakages()) {
    it(`${c.name}: ${c.client}`, async () => {
      const path = c.builder.writeTo(join(dir, String(n++)), { fileId: c.fileId, text: c.text });
      const result = await run(path);
      expect(validateProviderVerifyResult(result), JSON.stringify(validateProviderVerifyResult.errors)).toBe(true);
      const hit = result.findings.find((f) => f.code === c.expect.code && f.line_index === c.expect.line);
      expect(hit, JSON.stringify(result.findings)).toBeDefined();
      expect(hit!.severity).toBe(c.expect.severity);
      if (c.expect.severity === 'error') expect(result.findings.some((f) => f.severity === 'error')).toBe(true);
      for (const f of result.findings) expect(f.message).not.toMatch(/Run the tests|orphan output|appended/);
      // A message speaks of lines as people count them, as the line it is shown next to does.
      const own = hit!.message.match(/\bline (\d+)\b|final line \((\d+)\)|\(line (\d+)\)/);
      if (own) expect(Number(own[1] ?? own[2] ?? own[3]), hit!.message).toBe(hit!.line_index! + 1);
      if (c.inert) {
        const t = await parse({ provider_id: 'codex', path });
        expect(t.items.every((i) => i.est_tokens === 0)).toBe(true);
        expect(t.usage.context_state).toBe('unknown');
      }
    });
  }

  it('calls a file with an unknown history_mode a composite', async () => {
    const c = breakages().find((x) => x.expect.code === 'invalid_history_mode')!;
    expect((await run(c.builder.writeTo(join(dir, String(n++))))).session_kind).toBe('composite');
  });

  it('calls a rollout whose session_meta records name several other threads a composite, as Claude names its composites', async () => {
    const meta = (id: string) => ({ id, timestamp: '2026-02-23T12:54:34.000Z', cwd: '/work', originator: 'codex_cli_rs', cli_version: '0.104.0' });
    const fork = new RolloutBuilder();
    fork.sessionMeta().user('hi').push('session_meta', meta('019c0000-0000-7000-8000-00000000000a')).user('again');
    const forkResult = await run(fork.writeTo(join(dir, String(n++))));
    // A fork may carry its parent's meta record: one other thread is still a session.
    expect(forkResult.session_kind).toBe('session');
    expect(forkResult.findings.map((f) => [f.severity, f.code])).toEqual([['warning', 'multiple_session_meta']]);

    const mixed = new RolloutBuilder();
    mixed.sessionMeta().user('hi');
    const second = mixed.nextLine;
    mixed.push('session_meta', meta('019c0000-0000-7000-8000-00000000000a')).user('b');
    const third = mixed.nextLine;
    mixed.push('session_meta', meta('019c0000-0000-7000-8000-00000000000b')).user('c');
    const result = await run(mixed.writeTo(join(dir, String(n++))));
    expect(result.session_kind).toBe('composite');
    expect(result.findings).toEqual([
      { severity: 'error', code: 'composite_file', message: "session_meta records name 3 threads: a collection of several threads' records, not a session", line_index: null },
      { severity: 'warning', code: 'multiple_session_meta', message: `session_meta on line ${second + 1} names another thread than line 1`, line_index: second },
      { severity: 'warning', code: 'multiple_session_meta', message: `session_meta on line ${third + 1} names another thread than line 1`, line_index: third },
    ]);
  });

  it('flags sub-agent threads and native forks that read their parent', async () => {
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta({ source: { subagent: { thread_spawn: { parent_thread_id: 'p', depth: 1 } } }, history_base: { thread_id: 'p', end_ordinal_exclusive: 9, end_byte_offset: 1234 } }).user('hi');
    const result = await run(b.writeTo(join(dir, String(n++))));
    expect(result.session_kind).toBe('subagent');
    expect(result.findings.map((f) => f.code).sort()).toEqual(['depends_on_parent_rollout', 'subagent_thread']);
    expect(result.findings.find((f) => f.code === 'depends_on_parent_rollout')!.message).toBe('this native fork reads its earlier history from the rollout of thread p at resume time');
  });

  it('names the parent a sub-agent thread is resumed through, from parent_thread_id or its spawn', async () => {
    const parent = '019d0000-0000-7000-8000-0000000000aa';
    const spawned = new RolloutBuilder();
    spawned.sessionMeta({ source: { subagent: { thread_spawn: { parent_thread_id: parent, depth: 1 } } } }).user('hi');
    const named = new RolloutBuilder();
    named.sessionMeta({ parent_thread_id: parent, source: { subagent: 'review' } }).user('hi');
    const unnamed = new RolloutBuilder();
    unnamed.sessionMeta({ source: { subagent: { other: 'x' } }, parent_thread_id: 'not\nan id' }).user('hi');
    const message = async (b: RolloutBuilder) => (await run(b.writeTo(join(dir, String(n++))))).findings.find((f) => f.code === 'subagent_thread')?.message;
    expect(await message(spawned)).toBe(`this is a sub-agent thread; the client resumes it only through its parent: codex resume ${parent}`);
    expect(await message(named)).toBe(`this is a sub-agent thread; the client resumes it only through its parent: codex resume ${parent}`);
    expect(await message(unnamed)).toBe('this is a sub-agent thread; the client resumes it only through its parent');
  });

  it('caps the finding list on a file made of broken lines', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta();
    for (let i = 0; i < 1500; i += 1) b.raw('[0]');
    const result = await run(b.writeTo(join(dir, String(n++))));
    expect(result.findings.length).toBe(1001);
    expect(result.findings.at(-1)).toMatchObject({ code: 'findings_truncated', severity: 'info' });
    expect(result.record_count).toBe(1501);
  });
});

describe('provider-codex verify: response items the client does not support', () => {
  const unsupported = async (b: RolloutBuilder) => (await run(b.writeTo(join(dir, String(n++))))).findings.filter((f) => f.code === 'unsupported_response_item');

  it('warns of an unknown item type and of known types in a shape the client cannot read, line by line', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('start');
    const first = b.nextLine;
    b.response({ type: 'future_item_kind', text: 'x' })
      .response({ type: 'message', role: 'tool', content: [{ type: 'input_text', text: 'x' }] })
      .response({ type: 'message', role: 'user', content: [{ type: 'image', data: 'opaque' }] })
      .response(item.functionCall('c1', 'shell', {}))
      .response(item.functionOutput('c1', 42))
      .response({ type: 'reasoning', summary: 'not an array' })
      .response({ type: 'agent_message', content: [] });
    const line = (k: number) => `response_item on line ${first + k + 1}`;
    expect(await unsupported(b)).toEqual([
      { severity: 'warning', code: 'unsupported_response_item', message: `${line(0)} is of a type the client does not know: an item the client does not support`, line_index: first },
      { severity: 'warning', code: 'unsupported_response_item', message: `${line(1)} is a message with a role the client does not know: an item the client does not support`, line_index: first + 1 },
      { severity: 'warning', code: 'unsupported_response_item', message: `${line(2)} is a message whose content is neither text nor text and image blocks: an item the client does not support`, line_index: first + 2 },
      { severity: 'warning', code: 'unsupported_response_item', message: `${line(4)} is a tool output whose output is neither text nor text and image blocks: an item the client does not support`, line_index: first + 4 },
      { severity: 'warning', code: 'unsupported_response_item', message: `${line(5)} is a reasoning item without a summary array: an item the client does not support`, line_index: first + 5 },
      { severity: 'warning', code: 'unsupported_response_item', message: `${line(6)} is an agent message without an author and a recipient: an item the client does not support`, line_index: first + 6 },
    ]);
  });

  it('accepts every shape real rollouts hold: string, block and single-block outputs, images, searches, snapshots', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().preamble().user('start').reasoning().response(item.webSearch());
    b.response({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,AA' }] });
    b.response({ type: 'message', role: 'developer', content: 'plain text content' });
    b.shell('c1', 'ls', 'a.txt').patch('c2', 'Success').patch('c3', ['Success', 'done']);
    b.response(item.functionCall('c4', 'shell', {})).response({ type: 'function_call_output', call_id: 'c4', output: { type: 'input_text', text: 'a.txt', detail: null, image_url: null } });
    b.response({ type: 'ghost_snapshot', ghost_commit: { id: 'abc' } });
    b.response({ type: 'agent_message', author: 'a', recipient: 'b', content: [{ type: 'input_text', text: 'hi' }] });
    b.compacted([item.user('start'), item.encryptedCompaction()]).user('after');
    expect(await unsupported(b)).toEqual([]);
  });

  it('judges only the live window: the newest compaction\'s history and what follows it', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('start').response({ type: 'future_item_kind' });
    b.compacted([item.user('start'), { type: 'future_item_kind' }]);
    b.user('between').response({ type: 'future_item_kind' });
    const newest = b.nextLine;
    b.compacted([item.user('start'), { type: 'future_item_kind' }, { type: 'message', role: 'user', content: 7 }]).user('after');
    expect(await unsupported(b)).toEqual([
      {
        severity: 'warning',
        code: 'unsupported_response_item',
        message: `compacted record on line ${newest + 1} holds 2 replacement history item(s) of a type or shape the client does not support`,
        line_index: newest,
      },
    ]);
  });
});

describe('provider-codex parse reports what verify reports', () => {
  it('marks its findings complete, and they equal verify\'s on sound and broken rollouts alike', async () => {
    const builders = [legacySession().builder, paginatedSession().builder, compactedSession({ paginated: true }).builder, ...breakages().map((c) => c)];
    let withFindings = 0;
    for (const entry of builders) {
      const path = 'builder' in entry ? entry.builder.writeTo(join(dir, String(n++)), { fileId: entry.fileId, text: entry.text }) : entry.writeTo(join(dir, String(n++)));
      const t = await parse({ provider_id: 'codex', path }).catch(() => null);
      if (t === null) continue;
      expect(t.findings_complete).toBe(true);
      expect(t.findings).toEqual((await run(path)).findings);
      if ((t.findings ?? []).length > 0) withFindings += 1;
    }
    expect(withFindings).toBeGreaterThan(5);
  });
});
