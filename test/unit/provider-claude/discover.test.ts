import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { claudeHome, discoverSessions, identifyTranscript, tailUsage } from '../../../plugins/provider-claude-code/src/discover.js';
import { forkTarget } from '../../../plugins/provider-claude-code/src/fork.js';
import { PluginErrorCodes } from '../../../sdk/protocol.js';
import { validateProviderDiscoverResult, validateProviderIdentifyResult } from '../../../schemas/generated/validators.js';
import { writeBigSession } from '../../fixtures/claude/big-session.js';
import { ClaudeSessionBuilder } from '../../fixtures/claude/session-builder.js';
import { modernSession, oldSession, subagentTranscript } from '../../fixtures/claude/sessions.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';
import { parse } from './support.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome('claude-discover-');
});
afterEach(() => home.cleanup());

const ID_A = '1af7fc5e-8455-4414-9ccd-011d40f70b2a';
const ID_B = '5c0375b4-57a5-4f26-b12d-d022ee4e51b7';

function project(slug = '-home-dev-projects-demo'): string {
  const dir = join(home.claudeHome, 'projects', slug);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function place(dir: string, name: string, text: string, ageSecs = 0): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  const t = Date.now() / 1000 - ageSecs;
  utimesSync(path, t, t);
  return path;
}

describe('discover', () => {
  it('says where it looked: the projects folder, and whether it exists', () => {
    const none = discoverSessions({ provider_id: 'claude_code', home: join(home.root, 'nowhere') });
    expect(validateProviderDiscoverResult(none)).toBe(true);
    expect(none).toEqual({ sessions: [], searched: [{ path: join(home.root, 'nowhere', 'projects'), exists: false }] });
    project();
    expect(discoverSessions({ provider_id: 'claude_code', home: home.claudeHome }).searched).toEqual([{ path: join(home.claudeHome, 'projects'), exists: true }]);
  });

  it('lists sessions under projects/<slug>/<id>.jsonl, newest first, with tail usage', async () => {
    const dir = project();
    const a = place(dir, `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl(), 600);
    const b = place(dir, `${ID_B}.jsonl`, oldSession().b.toJsonl(), 10);
    const result = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome });
    expect(validateProviderDiscoverResult(result), JSON.stringify(validateProviderDiscoverResult.errors)).toBe(true);
    expect(result.sessions.map((s) => s.session.path)).toEqual([b, a]);
    const first = result.sessions[1]!;
    expect(first.session).toMatchObject({ provider: 'claude_code', session_id: ID_A, cwd: '/home/dev/projects/demo', kind: 'session' });
    // A small file is read whole: its usage is exact and its lifetime full.
    const parsed = await parse(a);
    expect(first.usage).toEqual(parsed.usage);
    expect(first.bytes_read).toBe(parsed.bytes);
    expect(first.estimated_context_tokens).toBeNull();
    expect(result.sessions[0]!.session.title).toBe('Parser fix');
  });

  it('recognises sub-agent files and lists them only when asked', () => {
    const dir = project();
    place(dir, `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl());
    mkdirSync(join(dir, ID_A, 'subagents'), { recursive: true });
    place(join(dir, ID_A, 'subagents'), 'agent-a2898e3.jsonl', subagentTranscript().toJsonl());
    place(dir, 'agent-b7c1.jsonl', subagentTranscript().toJsonl());
    // A sidechain-only file under any name is a sub-agent too.
    place(dir, `${ID_B}.jsonl`, subagentTranscript().toJsonl());
    expect(discoverSessions({ provider_id: 'claude_code', home: home.claudeHome }).sessions.map((s) => s.session.session_id)).toEqual([ID_A]);
    const all = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome, include_subagents: true }).sessions;
    expect(all.map((s) => [s.session.session_id, s.session.kind]).sort()).toEqual([
      [ID_A, 'session'],
      [ID_B, 'subagent'],
      ['agent-a2898e3', 'subagent'],
      ['agent-b7c1', 'subagent'],
    ]);
  });

  it('reads at most 600 KiB of a 1 MiB session and reports partial lifetime', async () => {
    const dir = project();
    const path = join(dir, `${ID_A}.jsonl`);
    writeBigSession(path, { targetBytes: 1024 * 1024, records: 400 });
    const [found] = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome }).sessions;
    expect(found!.bytes_read).toBeLessThanOrEqual(600 * 1024);
    expect(found!.session.bytes).toBeGreaterThan(1000 * 1024);
    const parsed = await parse(path);
    expect(found!.usage).toMatchObject({ context_state: 'reported', context_tokens: parsed.usage.context_tokens, model: parsed.usage.model, lifetime_scope: 'partial' });
    expect(found!.usage!.lifetime_input_tokens).toBeLessThan(parsed.usage.lifetime_input_tokens);
    expect(found!.session.session_id).toBe(ID_A);
  });

  it('estimates context from what the client would send when no usage is reported', () => {
    const dir = project();
    const b = new ClaudeSessionBuilder({ sessionId: ID_A });
    b.user('a prompt with no reply yet');
    place(dir, `${ID_A}.jsonl`, b.toJsonl());
    const [found] = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome }).sessions;
    expect(found!.usage!.context_state).toBe('absent');
    // The prompt as one text block of a user message, not its stored line.
    const sent = JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'a prompt with no reply yet' }] });
    expect(found!.estimated_context_tokens).toBe(Math.ceil(Buffer.byteLength(sent) / 4));
    expect(found!.estimated_context_tokens).toBeLessThan(Math.ceil(Buffer.byteLength(b.lines()[0]!) / 4));
  });

  it('filters by age and resolves the home from the param, CLAUDE_CONFIG_DIR or HOME', () => {
    const dir = project();
    place(dir, `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl(), 3600);
    place(dir, `${ID_B}.jsonl`, modernSession({ sessionId: ID_B }).toJsonl(), 5);
    expect(discoverSessions({ provider_id: 'claude_code', home: home.claudeHome, max_age_secs: 600 }).sessions.map((s) => s.session.session_id)).toEqual([ID_B]);
    expect(claudeHome('/custom/home', { CLAUDE_CONFIG_DIR: '/cfg', HOME: '/h' })).toBe('/custom/home');
    expect(claudeHome(null, { CLAUDE_CONFIG_DIR: '/cfg', HOME: '/h' })).toBe('/cfg');
    expect(claudeHome(undefined, { HOME: '/h' })).toBe('/h/.claude');
    expect(discoverSessions({ provider_id: 'claude_code', home: join(home.root, 'nowhere') }).sessions).toEqual([]);
  });

  it('names what it cannot read and what is not Claude, passes over an empty file, and reports composites as such', () => {
    const dir = project();
    place(dir, `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl());
    place(dir, 'codex.jsonl', '{"timestamp":"x","type":"session_meta","payload":{"id":"y"}}\n');
    place(dir, 'empty.jsonl', '');
    symlinkSync(join(dir, `${ID_A}.jsonl`), join(dir, 'linked.jsonl'));
    const mixed = modernSession({ sessionId: ID_B });
    mixed.records[3]!.version = '[trimmed for fixture]';
    place(dir, `${ID_B}.jsonl`, mixed.toJsonl());
    // The symbolic link is not followed: a session is the file the client itself wrote. It is
    // named, so that a lookup of its id can say why it was not found.
    const result = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome });
    expect(result.sessions.map((s) => [s.session.session_id, s.session.kind]).sort()).toEqual([
      [ID_A, 'session'],
      [ID_B, 'composite'],
    ]);
    // A file in the session folder that is not a transcript is named too: a user looking for a
    // session there hears where it went.
    expect(result.unreadable!.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: join(dir, 'codex.jsonl'), reason: 'none of the lines read from its start and end is a Claude Code record (gobstopper verify <path> says what the file is)' },
      { path: join(dir, 'linked.jsonl'), reason: 'a symbolic link, not followed (name the file it points to)' },
    ]);
    expect(validateProviderDiscoverResult(result)).toBe(true);
  });

  it('names a project folder and a session file whose names are not UTF-8, instead of passing over them', () => {
    const projects = join(home.claudeHome, 'projects');
    place(project(), `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl());
    // "-café" written by a system whose names are Latin-1, and a session file named the same way.
    const latin1 = Buffer.concat([Buffer.from(`${projects}/-caf`), Buffer.from([0xe9])]);
    mkdirSync(latin1);
    writeFileSync(Buffer.concat([latin1, Buffer.from(`/${ID_B}.jsonl`)]), modernSession({ sessionId: ID_B }).toJsonl());
    writeFileSync(Buffer.concat([Buffer.from(`${project()}/`), Buffer.from([0xff]), Buffer.from('.jsonl')]), modernSession({ sessionId: ID_B }).toJsonl());
    const result = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome, include_subagents: true });
    expect(validateProviderDiscoverResult(result)).toBe(true);
    expect(result.sessions.map((s) => s.session.session_id)).toEqual([ID_A]);
    expect(result.unreadable).toEqual(
      expect.arrayContaining([
        { path: `${projects}/-caf\\xe9/`, reason: 'folder not searched: its name is not valid UTF-8, so gobstopper cannot open it (rename it)' },
        { path: `${project()}/\\xff.jsonl`, reason: 'its name is not valid UTF-8, so gobstopper cannot open it (rename it)' },
      ]),
    );
    expect(result.unreadable).toHaveLength(2);
  });
});

describe('identify, usage and fork targets', () => {
  it('identifies Claude transcripts from their ends, and nothing else', () => {
    const dir = project();
    const a = place(dir, `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl());
    const yes = identifyTranscript({ provider_id: 'claude_code', path: a });
    expect(validateProviderIdentifyResult(yes)).toBe(true);
    expect(yes).toMatchObject({ matches: true, session: { session_id: ID_A, kind: 'session', provider: 'claude_code' } });
    const codex = place(dir, 'rollout.jsonl', '{"timestamp":"x","type":"session_meta","payload":{"id":"y"}}\n{"timestamp":"x","type":"response_item","ordinal":1,"payload":{}}\n');
    expect(identifyTranscript({ provider_id: 'claude_code', path: codex })).toEqual({ matches: false, session: null });
    const text = place(dir, 'notes.jsonl', 'hello\n');
    expect(identifyTranscript({ provider_id: 'claude_code', path: text })).toEqual({ matches: false, session: null });
    expect(() => identifyTranscript({ provider_id: 'claude_code', path: join(dir, 'missing.jsonl') })).toThrow(expect.objectContaining({ code: PluginErrorCodes.InvalidInput }));
  });

  it('identifies a session whose last 32 MiB are one oversized record from its head, so the record is what gets reported', () => {
    const dir = project();
    const records = modernSession({ sessionId: ID_A }).toJsonl().trimEnd().split('\n');
    const runaway = JSON.stringify({ type: 'user', sessionId: ID_A, uuid: 'ffffffff-0000-4000-8000-000000000000', message: { role: 'user', content: 'x'.repeat(33 * 1024 * 1024) } });
    const path = place(dir, `${ID_A}.jsonl`, [...records.slice(0, 3), runaway].join('\n') + '\n');
    expect(identifyTranscript({ provider_id: 'claude_code', path })).toMatchObject({ matches: true, session: { session_id: ID_A, provider: 'claude_code' } });
    // The tail held no whole line: its size says nothing of the context, so none is estimated.
    const [found] = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome }).sessions;
    expect(found).toMatchObject({ session: { session_id: ID_A }, estimated_context_tokens: null });
  });

  it('reads usage from a 16 KiB tail, widening to 512 KiB only when the branch leaves it', async () => {
    const dir = project();
    const path = join(dir, `${ID_A}.jsonl`);
    writeBigSession(path, { targetBytes: 2 * 1024 * 1024, records: 600 });
    let usage = tailUsage({ provider_id: 'claude_code', path });
    expect(usage.bytes_read).toBe(16 * 1024);
    expect(usage.usage.context_tokens).toBe((await parse(path)).usage.context_tokens);
    // The last record is a 100 KiB tool result: its call and usage sit before the first window.
    const b = modernSession({ sessionId: ID_B });
    b.user('read the big log');
    b.tools([{ name: 'Read', input: { file_path: '/var/log/big.log' }, output: 'x'.repeat(100 * 1024) }]);
    const big = place(dir, `${ID_B}.jsonl`, b.toJsonl());
    usage = tailUsage({ provider_id: 'claude_code', path: big });
    expect(usage.bytes_read).toBeGreaterThan(16 * 1024);
    expect(usage.bytes_read).toBeLessThanOrEqual(600 * 1024);
    const parsed = await parse(big);
    expect(usage.usage).toMatchObject({ context_state: 'reported', context_tokens: parsed.usage.context_tokens, model: parsed.usage.model });
  });

  it('finds the usage on the last-prompt branch from the tail, like the full read', async () => {
    const dir = project();
    const b = modernSession({ sessionId: ID_A });
    const mainTip = b.cursor!;
    const earlier = b.records.findIndex((r) => r.type === 'assistant' && JSON.stringify(r).includes('trailing newline'));
    b.branchFrom(b.records[earlier]!.uuid as string);
    b.user('a side question');
    const side = b.text('a side answer', { input_tokens: 5, cache_read_input_tokens: 7000, cache_creation_input_tokens: 11, output_tokens: 13 });
    // Continue the main branch past the whole-file size so the tail path answers, then point the
    // leaf back at the side branch.
    b.branchFrom(mainTip);
    b.user('padding prompt');
    b.tools([{ name: 'Read', input: { file_path: '/pad' }, output: 'p'.repeat(70 * 1024) }]);
    b.text('main answer');
    b.lastPrompt(side);
    const path = place(dir, `${ID_A}.jsonl`, b.toJsonl());
    const usage = tailUsage({ provider_id: 'claude_code', path });
    const parsed = await parse(path);
    expect(parsed.usage.context_tokens).toBe(5 + 7000 + 11 + 13);
    expect(usage.usage.context_tokens).toBe(parsed.usage.context_tokens);
  });

  it('puts a fork beside its source and resumes it from the session cwd', () => {
    const dir = project();
    const a = place(dir, `${ID_A}.jsonl`, modernSession({ sessionId: ID_A }).toJsonl());
    const newId = '0b9d2c44-1e2f-4a6b-8c0d-9e8f7a6b5c4d';
    expect(forkTarget({ provider_id: 'claude_code', path: a, session_id: ID_A, new_session_id: newId, now: '2026-03-01T00:00:00Z' })).toEqual({
      target_path: join(dir, `${newId}.jsonl`),
      // By absolute path, so the client finds it from any directory.
      resume_command: ['claude', '--resume', join(dir, `${newId}.jsonl`)],
      // The recorded directory does not exist on this machine: no `cd` that would fail, and a note.
      resume_cwd: null,
      resume_note: "the session's directory /home/dev/projects/demo no longer exists; the resumed session runs in the directory you start it from",
      // This home is not the one the client would use by default, so the command names it.
      resume_env: { CLAUDE_CONFIG_DIR: dirname(dirname(dir)) },
    });
    expect(forkTarget({ provider_id: 'claude_code', path: a, session_id: ID_A, new_session_id: newId, cwd: dir, now: 'x' })).toMatchObject({ resume_cwd: dir });
    vi.stubEnv('CLAUDE_CONFIG_DIR', dirname(dirname(dir)));
    try {
      expect(forkTarget({ provider_id: 'claude_code', path: a, session_id: ID_A, new_session_id: newId, now: 'x' }).resume_env).toBeUndefined();
    } finally {
      vi.unstubAllEnvs();
    }
    expect(forkTarget({ provider_id: 'claude_code', path: a, session_id: ID_A, new_session_id: newId, cwd: '/elsewhere', now: 'x' }).resume_note).toContain('/elsewhere no longer exists');
    expect(() => forkTarget({ provider_id: 'claude_code', path: a, session_id: ID_A, new_session_id: '../../x', now: 'x' })).toThrow(expect.objectContaining({ code: PluginErrorCodes.InvalidInput }));
  });
});
