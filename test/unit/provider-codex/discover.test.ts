import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexHome, discover } from '../../../plugins/provider-codex/src/discover.js';
import { identify, usage } from '../../../plugins/provider-codex/src/identify.js';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { verify } from '../../../plugins/provider-codex/src/verify.js';
import { validateProviderDiscoverResult, validateProviderIdentifyResult } from '../../../schemas/generated/validators.js';
import { RolloutBuilder, filler, item, sessionsDir } from '../../fixtures/codex/rollout-builder.js';
import { compactedSession, legacySession, paginatedSession } from '../../fixtures/codex/sessions.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome('codex-discover-');
});
afterEach(() => home.cleanup());

const MAX_READ = 600 * 1024;

/** A rollout of about `bytes` bytes whose newest usage report sits in the last few lines. */
function bigRollout(id: string, bytes: number): RolloutBuilder {
  const b = new RolloutBuilder({ id });
  b.sessionMeta().preamble().user('long session');
  let i = 0;
  while (Buffer.byteLength(b.text()) < bytes) {
    b.shell(`c${i}`, 'cat file', filler(20_000, `chunk ${i}`));
    b.tokenCount({ input: 1000 + i, output: 10 }, { input: 50_000 + i, cached: 1000, output: 500 });
    i += 1;
  }
  b.assistant('done').tokenCount(null);
  return b;
}

describe('provider-codex discover', () => {
  it('finds rollouts under CODEX_HOME newest first, reading at most 600 KiB of a 1 MiB file', async () => {
    const big = bigRollout('019c0000-0000-7000-8000-00000000000b', 1024 * 1024);
    const bigPath = big.writeTo(sessionsDir(home.codexHome));
    const small = paginatedSession();
    const smallPath = small.builder.writeTo(sessionsDir(home.codexHome, '2026/03/01'));
    utimesSync(bigPath, new Date('2026-02-23T12:00:00Z'), new Date('2026-02-23T12:00:00Z'));
    const result = discover({ provider_id: 'codex', home: home.codexHome });
    expect(validateProviderDiscoverResult(result), JSON.stringify(validateProviderDiscoverResult.errors)).toBe(true);
    expect(result.sessions.map((s) => s.session.path)).toEqual([smallPath, bigPath]);
    const bigFound = result.sessions[1]!;
    expect(bigFound.session).toMatchObject({ provider: 'codex', session_id: big.id, cwd: '/work/project', kind: 'session' });
    expect(bigFound.session.bytes).toBeGreaterThan(1024 * 1024);
    expect(bigFound.bytes_read).toBeLessThanOrEqual(MAX_READ);
    const parsed = await parse({ provider_id: 'codex', path: bigPath });
    expect(bigFound.usage).toEqual(parsed.usage);
    expect(bigFound.estimated_context_tokens).toBeNull();
  });

  it('uses CODEX_HOME, then HOME/.codex, when no home is given', () => {
    expect(codexHome({}, { CODEX_HOME: '/x/codex', HOME: '/h' })).toBe('/x/codex');
    expect(codexHome({}, { HOME: '/h' })).toBe('/h/.codex');
    expect(codexHome({ home: '/given' }, { CODEX_HOME: '/x' })).toBe('/given');
  });

  it('says which rollout folders it looked in and whether each exists', () => {
    const missing = discover({ provider_id: 'codex', home: join(home.root, 'nowhere') });
    expect(validateProviderDiscoverResult(missing)).toBe(true);
    expect(missing.searched).toEqual([
      { path: join(home.root, 'nowhere', 'sessions'), exists: false },
      { path: join(home.root, 'nowhere', 'archived_sessions'), exists: false },
    ]);
    legacySession().builder.writeTo(sessionsDir(home.codexHome));
    const found = discover({ provider_id: 'codex', home: home.codexHome });
    expect(found.searched).toEqual([
      { path: join(home.codexHome, 'sessions'), exists: true },
      { path: join(home.codexHome, 'archived_sessions'), exists: false },
    ]);
  });

  it('lists archived sessions, skips other files and does not follow symbolic links', () => {
    const live = legacySession().builder.writeTo(sessionsDir(home.codexHome));
    const archived = compactedSession().builder.writeTo(join(home.codexHome, 'archived_sessions'));
    writeFileSync(join(sessionsDir(home.codexHome), 'notes.jsonl'), '{"type":"session_meta","payload":{"id":"x"}}\n');
    writeFileSync(join(home.codexHome, 'history.jsonl'), '{"session_id":"x","ts":1,"text":"hi"}\n');
    // Named like a rollout but holding none (an empty one is passed over): named, not passed over.
    const foreign = join(sessionsDir(home.codexHome), 'rollout-2026-02-23T11-00-00-019c0000-0000-7000-8000-0000000000bb.jsonl');
    writeFileSync(foreign, '{"type":"user","sessionId":"x","uuid":"u","parentUuid":null}\n');
    writeFileSync(join(sessionsDir(home.codexHome), 'rollout-2026-02-23T10-00-00-019c0000-0000-7000-8000-0000000000cc.jsonl'), '');
    const elsewhere = legacySession({ id: '019c0000-0000-7000-8000-0000000000aa' }).builder.writeTo(join(home.root, 'elsewhere'));
    symlinkSync(elsewhere, join(sessionsDir(home.codexHome), 'rollout-2026-02-23T12-00-00-019c0000-0000-7000-8000-0000000000aa.jsonl'));
    const linkDir = join(home.codexHome, 'sessions', '2026', '02', '24');
    mkdirSync(join(home.codexHome, 'sessions', '2026', '02'), { recursive: true });
    symlinkSync(join(home.root, 'elsewhere'), linkDir);
    const result = discover({ provider_id: 'codex', home: home.codexHome });
    expect(result.sessions.map((s) => s.session.path).sort()).toEqual([archived, live].sort());
    // The linked rollout is named (a lookup of its id says why it is missing); the linked folder is not walked.
    expect(result.unreadable!.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: foreign, reason: 'none of the lines read from its start and end is a Codex record (gobstopper verify <path> says what the file is)' },
      { path: join(sessionsDir(home.codexHome), 'rollout-2026-02-23T12-00-00-019c0000-0000-7000-8000-0000000000aa.jsonl'), reason: 'a symbolic link, not followed (name the file it points to)' },
    ]);
  });

  it('names a folder whose name is not UTF-8, whose rollouts it cannot open, instead of passing over it', () => {
    const live = legacySession().builder.writeTo(sessionsDir(home.codexHome));
    const odd = Buffer.concat([Buffer.from(join(home.codexHome, 'sessions', '2026', '02') + '/'), Buffer.from([0xff, 0xfe])]);
    mkdirSync(odd, { recursive: true });
    const other = legacySession({ id: '019c0000-0000-7000-8000-0000000000bb' }).builder.text();
    writeFileSync(Buffer.concat([odd, Buffer.from('/rollout-2026-02-23T12-00-00-019c0000-0000-7000-8000-0000000000bb.jsonl')]), other);
    const result = discover({ provider_id: 'codex', home: home.codexHome });
    expect(validateProviderDiscoverResult(result)).toBe(true);
    expect(result.sessions.map((s) => s.session.path)).toEqual([live]);
    expect(result.unreadable).toEqual([
      { path: `${join(home.codexHome, 'sessions', '2026', '02')}/\\xff\\xfe/`, reason: 'folder not searched: its name is not valid UTF-8, so gobstopper cannot open it (rename it)' },
    ]);
  });

  it('filters by age and leaves sub-agent threads out unless asked', () => {
    const old = legacySession().builder.writeTo(sessionsDir(home.codexHome, '2025/01/01'));
    utimesSync(old, new Date('2025-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'));
    const sub = new RolloutBuilder({ id: '019c0000-0000-7000-8000-00000000005b' });
    sub.sessionMeta({ source: { subagent: { thread_spawn: { parent_thread_id: 'p', depth: 1 } } } }).user('sub task');
    const subPath = sub.writeTo(sessionsDir(home.codexHome));
    const fresh = paginatedSession().builder.writeTo(sessionsDir(home.codexHome));
    const recent = discover({ provider_id: 'codex', home: home.codexHome, max_age_secs: 3600 });
    expect(recent.sessions.map((s) => s.session.path)).toEqual([fresh]);
    const all = discover({ provider_id: 'codex', home: home.codexHome, include_subagents: true });
    expect(all.sessions.map((s) => s.session.path).sort()).toEqual([fresh, old, subPath].sort());
    expect(all.sessions.find((s) => s.session.path === subPath)!.session.kind).toBe('subagent');
  });

  it('estimates the context when nothing is reported', () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('hello').shell('c1', 'ls', filler(4000));
    const path = b.writeTo(sessionsDir(home.codexHome));
    const [found] = discover({ provider_id: 'codex', home: home.codexHome }).sessions;
    expect(found!.session.path).toBe(path);
    expect(found!.usage?.context_state).toBe('absent');
    // The payloads the client sends as input items, not the envelopes around them.
    const payloads = b.text().trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; payload: unknown }).filter((r) => r.type === 'response_item');
    expect(payloads).toHaveLength(3);
    expect(found!.estimated_context_tokens).toBe(payloads.reduce((sum, r) => sum + Math.ceil(Buffer.byteLength(JSON.stringify(r.payload)) / 4), 0));
  });

  it('estimates a long tool output as the client sends it, as the parse counts it', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().user('hello').shell('c1', 'cat big', 'z'.repeat(200_000));
    const path = b.writeTo(sessionsDir(home.codexHome));
    const [found] = discover({ provider_id: 'codex', home: home.codexHome }).sessions;
    expect(found!.session.path).toBe(path);
    const parsed = await parse({ provider_id: 'codex', path });
    const estimate = parsed.items.reduce((n, i) => n + i.est_tokens, 0);
    expect(estimate).toBeLessThan(13_000);
    expect(Math.abs(found!.estimated_context_tokens! - estimate)).toBeLessThan(estimate * 0.02);
  });

  it('reports a composite for an unknown history_mode', () => {
    const b = new RolloutBuilder();
    b.sessionMeta({ history_mode: 'default' }).user('x');
    b.writeTo(sessionsDir(home.codexHome));
    expect(discover({ provider_id: 'codex', home: home.codexHome }).sessions[0]!.session.kind).toBe('composite');
  });
});

describe('provider-codex identify and usage', () => {
  it('identifies a rollout whose first line is longer than the head window', () => {
    const b = new RolloutBuilder();
    b.sessionMeta({ base_instructions: { text: filler(200 * 1024, 'instruction') } }).user('hi');
    for (let i = 0; i < 60; i += 1) b.shell(`c${i}`, 'ls', filler(10_000));
    b.tokenCount({ input: 777, output: 23 });
    const path = b.writeTo(sessionsDir(home.codexHome));
    const result = identify({ provider_id: 'codex', path });
    expect(validateProviderIdentifyResult(result)).toBe(true);
    expect(result).toMatchObject({ matches: true, session: { session_id: b.id, cwd: '/work/project', kind: 'session' } });
    expect(usage({ provider_id: 'codex', path }).usage.context_tokens).toBe(800);
  });

  it('claims a legacy rollout whose session_meta line is broken or gone, so verify can say so', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta().turnContext().preamble().user('hi').shell('c1', 'ls', 'a.txt').tokenCount({ input: 700, output: 20 });
    const lines = b.text().split('\n');
    const broken = b.writeTo(join(home.root, 'broken'), { text: [lines[0]!.slice(0, 40), ...lines.slice(1)].join('\n') });
    const gone = b.writeTo(join(home.root, 'gone'), { text: lines.slice(1).join('\n') });
    const marked = b.writeTo(join(home.root, 'marked'), { text: `\ufeff${b.text()}` });
    for (const path of [broken, gone, marked]) {
      expect(identify({ provider_id: 'codex', path })).toMatchObject({ matches: true, session: { session_id: b.id, kind: 'session' } });
      expect((await verify({ provider_id: 'codex', path })).findings.map((f) => f.code)).toContain('missing_session_meta');
    }
    // What stands in front of the record says what to fix.
    const missing = (await verify({ provider_id: 'codex', path: marked })).findings.find((f) => f.code === 'missing_session_meta');
    expect(missing!.message).toBe('no session_meta record (its first line begins with a UTF-8 byte-order mark): the client cannot identify this thread');
  });

  it('does not claim Claude transcripts or Devin exports', () => {
    const dir = join(home.root, 'other');
    mkdirSync(dir);
    const claude = join(dir, 'c.jsonl');
    writeFileSync(claude, '{"type":"user","sessionId":"s","uuid":"u","parentUuid":null,"message":{"role":"user","content":"hi"}}\n');
    const devin = join(dir, 'd.jsonl');
    writeFileSync(devin, '{"type":"session_meta","session_id":"d","main_chain_id":1,"working_directory":"/x"}\n');
    expect(identify({ provider_id: 'codex', path: claude })).toEqual({ matches: false, session: null });
    expect(identify({ provider_id: 'codex', path: devin })).toEqual({ matches: false, session: null });
    expect(() => usage({ provider_id: 'codex', path: claude })).toThrow(/not a Codex rollout/);
  });

  it('reads usage from the tail only and agrees with the full parse', async () => {
    const b = bigRollout('019c0000-0000-7000-8000-0000000000cc', 2 * 1024 * 1024);
    b.compacted([item.user('long session'), item.user('summary')]);
    const path = b.writeTo(sessionsDir(home.codexHome));
    const result = usage({ provider_id: 'codex', path });
    expect(result.bytes_read).toBeLessThanOrEqual(MAX_READ);
    expect(result.usage).toEqual((await parse({ provider_id: 'codex', path })).usage);
    expect(result.usage.context_state).toBe('reset');
  });
});
