/**
 * The vault commands as a user runs them: the built CLI (`node scripts/build.mjs --kernel` first)
 * against a throwaway home whose vault holds synthetic sessions.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as V from '../../schemas/generated/validators.js';
import { appendEvent } from '../../kernel/publish/events.js';
import { snapshotFile } from '../../kernel/vault/snapshot.js';
import { runJson } from '../helpers/cli.js';
import { card, claudeSession, claudeToolResult, claudeUser, jsonl, makeVaultHome, writeSession, type VaultHome } from '../unit/vault/helpers.js';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'run.js');
const execFileAsync = promisify(execFile);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('vault commands (built CLI)', () => {
  let home: VaultHome;
  let first: string;
  let second: string;
  let sessionPath: string;

  async function cli(...args: string[]): Promise<Run> {
    return cliWith({}, ...args);
  }

  async function cliWith(extraEnv: Record<string, string>, ...args: string[]): Promise<Run> {
    const env = { PATH: process.env.PATH ?? '', ...home.env, NO_COLOR: '1', ...extraEnv };
    try {
      const { stdout, stderr } = await execFileAsync(process.execPath, [bin, ...args], { env, cwd: home.root, maxBuffer: 64 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  async function json<T>(validate: V.GeneratedValidator, ...args: string[]): Promise<T> {
    const run = await cli(...args, '--json');
    expect(run.code, run.stderr).toBe(0);
    const value = JSON.parse(run.stdout) as T;
    expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
    return value;
  }

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist', 'kernel', 'cli', 'commands', 'vault.js'))) throw new Error('dist is missing: run node scripts/build.mjs --kernel first');
    home = makeVaultHome();
    const records = [...claudeSession('0199a2f1-aaaa', 3), claudeToolResult('0199a2f1-aaaa', 'toolu_x', 'ECONNREFUSED 127.0.0.1:5432 from the db check', 'tx')];
    sessionPath = writeSession(home.sessions, '0199a2f1-aaaa.jsonl', jsonl(records));
    first = (await snapshotFile(home.layout, { path: sessionPath, sessionId: '0199a2f1-aaaa', provider: 'claude_code', strategy: 'snapshot', env: home.env })).entry.sha256;
    appendFileSync(sessionPath, jsonl([claudeUser('0199a2f1-aaaa', card({ goal: 'Fix the database connection', decisions: ['retry the database twice'] }), 'card')]));
    // A torn, non-JSON line carrying a raw terminal escape.
    appendFileSync(sessionPath, '\u001b[31mred alert\n');
    second = (await snapshotFile(home.layout, { path: sessionPath, sessionId: '0199a2f1-aaaa', provider: 'claude_code', strategy: 'elide', env: home.env })).entry.sha256;
    await appendEvent(
      {
        schema: 'gobstopper/compaction-events-v1',
        ts: Math.floor(Date.now() / 1000) - 60,
        provider: 'claude_code',
        session_id: '0199a2f1-aaaa',
        strategy: 'elide',
        action: 'transcript_compact',
        outcome: 'applied',
        trigger_tokens: 1000,
        context_tokens_before: 5000,
        context_tokens_after: 2000,
        est_reclaimed_tokens: 3000,
        items_covered: 4,
        duration_ms: 12,
        error_code: null,
      },
      { env: home.env },
    );
  });
  afterAll(() => home?.cleanup());

  it('vault and history list archived states newest first, as JSON and as aligned tables', async () => {
    const listed = await json<Array<{ sha256: string }>>(V.validateVaultCommandOutput, 'vault');
    expect(listed.map((e) => e.sha256)).toEqual([second, first]);
    const history = await json<Array<{ sha256: string; strategy: string }>>(V.validateHistoryCommandOutput, 'history', '0199a2f1');
    expect(history.map((e) => e.strategy)).toEqual(['elide', 'snapshot']);

    const human = await cli('history', sessionPath);
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('0199a2f1-aaaa (claude_code): 2 archived state(s)');
    expect(lines[1]).toMatch(/^SHA256\s+BYTES\s+RECORDS\s+LABEL\s+ARCHIVED \(UTC\)\s+PATH$/);
    expect(lines[2]!.startsWith(second)).toBe(true);
    expect(lines[1]!.indexOf('LABEL')).toBe(lines[2]!.indexOf('elide'));
  });

  it('the same bytes archived again count as one state, and a wide listing prints whole ids', async () => {
    const other = makeVaultHome();
    try {
      const path = writeSession(other.sessions, '0199a2f1-dddd.jsonl', jsonl(claudeSession('0199a2f1-dddd', 3)));
      let sha = '';
      for (const strategy of ['snapshot', 'elide']) sha = (await snapshotFile(other.layout, { path, sessionId: '0199a2f1-dddd', provider: 'claude_code', strategy, env: other.env })).entry.sha256;
      const run = async (...args: string[]) => (await execFileAsync(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...other.env }, cwd: other.root })).stdout;
      expect((await run('history', '0199a2f1-dddd')).split('\n')[0]).toBe(
        '0199a2f1-dddd (claude_code): 1 archived state(s), archived 2 times (each time the same bytes are archived under another label, they get a line of their own)',
      );
      const listed = await run('vault');
      expect(listed).toContain('1 snapshot(s) in 2 archivings (each time the same bytes are archived under another label, they get a line of their own)');
      expect(listed).toContain(sha);
      // The help says what the table does: whole ids where there is room, not prefixes only.
      const help = await run('vault', '--help');
      expect(help).not.toContain('The ids shown are prefixes');
      expect(help.replace(/\s+/g, ' ')).toContain('The ids are shown whole where the terminal is wide enough');
    } finally {
      other.cleanup();
    }
  });

  it('vault narrows its table to the terminal width: the path is cut in the middle, then left out before the session id', async () => {
    const wide = await cli('vault');
    expect(wide.stdout).toContain(sessionPath);
    const fit = (width: number, lines: string[]) => {
      for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(width);
      return lines.find((l) => l.startsWith(second.slice(0, 16)))!;
    };
    const medium = fit(110, (await cliWith({ COLUMNS: '110' }, 'vault')).stdout.trimEnd().split('\n'));
    expect(medium).toContain('0199a2f1-aaaa');
    expect(medium).toContain('…');
    expect(medium).toMatch(/aaaa\.jsonl$/);
    const narrow = fit(80, (await cliWith({ COLUMNS: '80' }, 'vault')).stdout.trimEnd().split('\n'));
    expect(narrow).toContain('0199a2f1-aaaa');
  });

  it('show, diff and search-snapshot report verified metadata only', async () => {
    const shown = await json<{ record_count: number; record_types: Record<string, number> }>(V.validateShowCommandOutput, 'show', second.slice(0, 16));
    expect(shown.record_count).toBe(12);
    expect(shown.record_types).toEqual({ user: 8, assistant: 3, unknown: 1 });
    // Called a label for people: the bytes are the session before the compaction it names.
    expect((await cli('show', second.slice(0, 16))).stdout).toMatch(/^label:\s+elide$/m);

    const diff = await json<{ added_count: number; removed_count: number }>(V.validateDiffCommandOutput, 'diff', first.slice(0, 12), second);
    expect(diff).toMatchObject({ added_count: 2, removed_count: 0 });
    // A session id where a snapshot id belongs is said to be one, with where its snapshot ids are.
    const bySession = await cli('diff', '0199a2f1', second, '--json');
    expect(bySession.code).toBe(1);
    expect(JSON.parse(bySession.stdout).error).toEqual({
      code: 'snapshot_not_found',
      message: 'no snapshot 0199a2f1 in the vault; 0199a2f1 starts the id of archived session 0199a2f1-aaaa, and diff compares two snapshots (gobstopper history 0199a2f1-aaaa lists its snapshot ids)',
    });

    const found = await json<{ matches: Array<{ record_index: number }>; matched_records: number }>(V.validateSearchSnapshotCommandOutput, 'search-snapshot', first, '--query', 'ECONNREFUSED');
    expect(found.matches.map((m) => m.record_index)).toEqual([9]);
    const human = await cli('search-snapshot', first, '--query', 'ECONNREFUSED');
    expect(human.stdout).toContain('1 match(es) in 1 record(s)');
    expect(human.stdout).toContain(`gobstopper read-snapshot ${first} --record 9`);
    // Record 9 is line 10, as plan and verify number lines.
    expect(human.stdout).toMatch(/RECORD\s+LINE\s+MATCHES/);
    expect(human.stdout).toMatch(/^\s*9\s+10\s+1\s/m);
    expect(human.stdout).not.toContain('127.0.0.1');
    // On an 80-column terminal every table row fits, the record hash cut in its middle.
    const narrow = await cliWith({ COLUMNS: '80' }, 'search-snapshot', first, '--query', 'ECONNREFUSED');
    const rows = narrow.stdout.split('\n').filter((line) => /^\s*(RECORD|9)\s/.test(line));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.length, row).toBeLessThanOrEqual(80);
    expect(rows[1]).toContain('…');
  });

  it('read-snapshot pages a record with next_offset and escapes control characters for people', async () => {
    const page = await json<{ content: string; next_offset: number | null; record_bytes: number }>(V.validateReadSnapshotCommandOutput, 'read-snapshot', first, '--record', '9', '--max-bytes', '64');
    expect(page.content.length).toBeLessThanOrEqual(64);
    expect(page.next_offset).toBe(64);
    const rest = await json<{ content: string; next_offset: number | null }>(V.validateReadSnapshotCommandOutput, 'read-snapshot', first, '--record', '9', '--offset', '64', '--max-bytes', '16384');
    expect(JSON.parse(page.content + rest.content).message.content[0].content).toContain('ECONNREFUSED');
    expect(rest.next_offset).toBeNull();

    const human = await cli('read-snapshot', first, '--record', '9');
    expect(human.stdout.trimEnd()).toBe(page.content + rest.content);
    expect(human.stderr).toContain('untrusted archived data');
    expect(human.stderr).toContain('record 9 (line 10) of snapshot');

    const escaped = await cli('read-snapshot', second, '--record', '11');
    expect(escaped.stdout).toBe('\\u001b[31mred alert\n');
    const raw = await json<{ content: string }>(V.validateReadSnapshotCommandOutput, 'read-snapshot', second, '--record', '11');
    expect(raw.content).toBe('\u001b[31mred alert');
  });

  it('export writes any archived state byte for byte, a damaged one included, to a new private file or a pipe', async () => {
    // The damaged state: its last line is not JSON. undo will not publish it, and says where to go.
    const archived = readFileSync(sessionPath);
    const refused = await cli('undo', second, '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'snapshot_invalid' });
    expect(JSON.parse(refused.stdout).error.message).toContain(`gobstopper export ${second} --output <new file> writes this one's bytes as they are`);

    const out = join(home.root, 'put-back.jsonl');
    const result = await json<{ output: string; bytes: number; source_sha256: string; snapshot: { sha256: string; strategy: string } }>(V.validateExportCommandResult, 'export', second, '--output', out);
    expect(result).toMatchObject({ output: out, bytes: archived.length, snapshot: { sha256: second, strategy: 'elide' } });
    expect(readFileSync(out).equals(archived)).toBe(true);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    // A name already taken is refused and left as it was, whatever its content.
    writeFileSync(out, 'mine');
    const taken = await cli('export', second, '--output', out, '--json');
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stdout).error).toMatchObject({ code: 'output_exists' });
    expect(readFileSync(out, 'utf8')).toBe('mine');

    // Without --output the bytes go down the pipe; the session's older state by --sha, as undo takes it.
    const piped = await cli('export', '0199a2f1-aaaa', '--sha', first.slice(0, 16));
    expect(piped.code, piped.stderr).toBe(0);
    expect(Buffer.from(piped.stdout, 'utf8').equals(archived.subarray(0, Buffer.byteLength(piped.stdout)))).toBe(true);
    expect(Buffer.byteLength(piped.stdout)).toBeLessThan(archived.length);
    const noFile = await cli('export', second, '--json');
    expect(noFile.code).toBe(2);
    expect(JSON.parse(noFile.stdout).error).toMatchObject({ code: 'output_required' });
    const unknown = await cli('export', 'f'.repeat(64), '--output', join(home.root, 'never.jsonl'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(home.root, 'never.jsonl'))).toBe(false);
    // Nothing is left under a hidden name beside the output either, nor when a stop signal ends the export.
    const stopped = await cliWith({ GOBSTOPPER_FAULT: 'export.after_create:term' }, 'export', second, '--output', join(home.root, 'stopped.jsonl'));
    expect(stopped.code).toBe(143);
    expect(existsSync(join(home.root, 'stopped.jsonl'))).toBe(false);
    const thrown = await cliWith({ GOBSTOPPER_FAULT: 'export.after_create' }, 'export', second, '--output', join(home.root, 'thrown.jsonl'));
    expect(thrown.code).toBe(1);
    expect(existsSync(join(home.root, 'thrown.jsonl'))).toBe(false);
    expect(readdirSync(home.root).filter((name) => name.includes('.tmp-'))).toEqual([]);
  });

  it('search-snapshot and read-snapshot refuse a cut id and name commands that print it whole, on a narrow terminal too', async () => {
    const cut = first.slice(0, 16);
    const narrow = { COLUMNS: '80' };
    for (const args of [['search-snapshot', cut, '--query', 'x'], ['read-snapshot', cut, '--record', '0']]) {
      const refused = await cliWith(narrow, ...args);
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim()).toBe(
        `gobstopper: snapshot id "${cut}" is not a full sha256: it has 16 hex characters, 64 are required (gobstopper history <session> --json and gobstopper vault --json print full ids, as sha256)`,
      );
    }
    // The table cuts the id at this width; the commands the message names do not.
    expect((await cliWith(narrow, 'history', '0199a2f1')).stdout).not.toContain(first);
    for (const args of [['history', '0199a2f1', '--json'], ['vault', '--json']]) {
      const listed = JSON.parse((await cliWith(narrow, ...args)).stdout) as { sha256: string }[];
      expect(listed.map((entry) => entry.sha256)).toContain(first);
    }
  });

  it('recall ranks state cards and events summarises the log', async () => {
    const rows = await json<Array<{ snapshot_sha: string; score: number }>>(V.validateRecallCommandOutput, 'recall', '--query', 'database');
    expect(rows).toEqual([expect.objectContaining({ snapshot_sha: second, score: 2 })]);
    expect((await cli('recall', '--query', 'database')).stdout).toContain('goal: Fix the database connection');
    // A damaged receipt costs only the cards of its fork, not the answer.
    const operations = join(home.layout.root, 'operations');
    mkdirSync(operations, { recursive: true, mode: 0o700 });
    const damaged = join(operations, `${'a'.repeat(64)}.json`);
    writeFileSync(damaged, '{"bogus":1}', { mode: 0o600 });
    expect(await json(V.validateRecallCommandOutput, 'recall', '--query', 'database')).toEqual(rows);
    // …and says so, rather than answering as if nothing were missing.
    const warned = await cli('recall', '--query', 'database');
    expect(warned.stdout).toContain('goal: Fix the database connection');
    expect(warned.stderr).toMatch(/^warning: .*aaaaaaaa.*the state cards of the fork it published are left out of this answer\n$/s);
    expect((await cli('recall', '--query', 'database', '--json')).stderr).toContain('the state cards of the fork it published are left out of this answer');
    rmSync(damaged);
    // --sha keeps to one snapshot: the card is in the second, not the first; an unknown one is an error.
    expect(await json(V.validateRecallCommandOutput, 'recall', '--sha', second.slice(0, 12))).toEqual([expect.objectContaining({ snapshot_sha: second })]);
    expect(await json(V.validateRecallCommandOutput, 'recall', '--sha', first)).toEqual([]);
    expect((await cli('recall', '--sha', first)).stdout).toBe(`snapshot ${first} holds no state-card digest\n`);
    const unknown = await cli('recall', '--sha', 'abcdef0123', '--json');
    expect(unknown.code).not.toBe(0);
    expect(JSON.parse(unknown.stdout).error.code).toBe('snapshot_not_found');
    // A snapshot whose index line was lost is not answered as one without cards.
    const index = readFileSync(home.layout.index, 'utf8');
    writeFileSync(home.layout.index, index.split('\n').filter((l) => !l.includes(first)).join('\n'));
    try {
      const unindexed = await cli('recall', '--sha', first, '--json');
      expect(unindexed.code).toBe(1);
      expect(JSON.parse(unindexed.stdout).error).toMatchObject({ code: 'snapshot_not_indexed', message: expect.stringContaining(`gobstopper show ${first} reads it`) });
    } finally {
      writeFileSync(home.layout.index, index);
    }

    const events = await json<{ total_events: number; est_reclaimed_tokens: number }>(V.validateEventsCommandOutput, 'events', '--since', '24h');
    expect(events).toMatchObject({ total_events: 1, est_reclaimed_tokens: 3000 });
    expect((await cli('events')).stdout).toContain('~3,000 tokens reclaimed');
    // --limit 0 keeps the counts and lists no event; --tail, its first name, still works.
    for (const flag of ['--limit', '--tail']) {
      expect(await json<{ total_events: number; events: unknown[] }>(V.validateEventsCommandOutput, 'events', flag, '0')).toMatchObject({ total_events: 1, events: [] });
    }
  });

  it('events fails with a clear error when the log cannot be read, and changes nothing', async () => {
    const env = { ...home.env, XDG_DATA_HOME: join(home.root, 'broken-data') };
    const log = join(env.XDG_DATA_HOME, 'gobstopper', 'events.jsonl');
    mkdirSync(log, { recursive: true });
    const run = async (...args: string[]) => {
      try {
        const { stdout, stderr } = await execFileAsync(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, cwd: home.root });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    const human = await run('events');
    expect(human.code).toBe(1);
    expect(human.stderr.trim().split('\n')).toEqual([`gobstopper: cannot read the events log ${log}: is not a regular file; move it aside; gobstopper keeps its data in regular files only`]);
    const asJson = await run('events', '--json');
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stdout).error).toMatchObject({ code: 'events_log_unreadable' });
    expect(statSync(log).isDirectory()).toBe(true);
  });

  it('events names the unreadable lines it skipped, over the whole log when it was asked for a window or a session', async () => {
    const dataHome = join(home.root, 'skipped-data');
    const log = join(dataHome, 'gobstopper', 'events.jsonl');
    mkdirSync(join(dataHome, 'gobstopper'), { recursive: true, mode: 0o700 });
    const old = { schema: 'gobstopper/compaction-events-v1', ts: 1_000_000_000, provider: 'claude_code', session_id: '0199a2f1-aaaa', strategy: 'elide', action: 'transcript_compact', outcome: 'applied', trigger_tokens: 1000, context_tokens_before: 5000, context_tokens_after: 2000, est_reclaimed_tokens: 3000, items_covered: 4, duration_ms: 12, error_code: null };
    writeFileSync(log, `not json\n${JSON.stringify(old)}\n{"ts":"soon"}\n`, { mode: 0o600 });
    const before = readFileSync(log);
    const env = { XDG_DATA_HOME: dataHome };
    expect((await cliWith(env, 'events')).stdout).toContain('  2 unreadable line(s) skipped\n');
    // The window holds no event, and the skipped lines are still told, as counted over the whole log.
    const windowed = await cliWith(env, 'events', '--since', '24h');
    expect(windowed.stdout).toMatch(/^no events since .*\n  2 unreadable line\(s\) skipped in the whole log\n$/);
    expect(JSON.parse((await cliWith(env, 'events', '--since', '24h', '--json')).stdout)).toMatchObject({ total_events: 0, skipped_lines: 2 });
    expect(readFileSync(log).equals(before)).toBe(true);
  });

  it('events says why it counts fewer applied compactions than the outcomes line labels applied', async () => {
    const dataHome = join(home.root, 'noop-data');
    const log = join(dataHome, 'gobstopper', 'events.jsonl');
    mkdirSync(join(dataHome, 'gobstopper'), { recursive: true, mode: 0o700 });
    const applied = { schema: 'gobstopper/compaction-events-v1', ts: 1_000_000_000, provider: 'codex', session_id: '019d2e4a', strategy: 'elide', action: 'transcript_compact', outcome: 'applied', trigger_tokens: 1000, context_tokens_before: 5000, context_tokens_after: 2000, est_reclaimed_tokens: 3000, items_covered: 4, duration_ms: 12, error_code: null };
    const noop = { ...applied, ts: 1_000_000_100, action: 'provider_compact', context_tokens_after: 5000, est_reclaimed_tokens: 0, error_code: 'provider_noop' };
    writeFileSync(log, `${JSON.stringify(applied)}\n${JSON.stringify(noop)}\n`, { mode: 0o600 });
    const out = (await cliWith({ XDG_DATA_HOME: dataHome }, 'events')).stdout;
    expect(out).toContain('  outcomes:   applied 2\n');
    expect(out).toContain('  applied: 1 (1 more labelled applied carries an error code and changed nothing); ~3,000 tokens reclaimed (estimated context, not billing)\n');
  });

  it('events counts the rotated log and the live one together, every count written the same way', async () => {
    const dataHome = join(home.root, 'rotated-data');
    const dir = join(dataHome, 'gobstopper');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const event = (ts: number) => JSON.stringify({ schema: 'gobstopper/compaction-events-v1', ts, provider: 'codex', session_id: '019d2e4a', strategy: 'elide', action: 'transcript_compact', outcome: 'applied', trigger_tokens: 1000, context_tokens_before: 5000, context_tokens_after: 2000, est_reclaimed_tokens: 3000, items_covered: 4, duration_ms: 12, error_code: null, retention_total: 2, retention_retained: 1, retention_lexical: 2 });
    const older = Array.from({ length: 1200 }, (_, i) => event(1_000_000_000 + i));
    writeFileSync(join(dir, 'events.1.jsonl'), older.join('\n') + '\n', { mode: 0o600 });
    writeFileSync(join(dir, 'events.jsonl'), event(1_000_002_000) + '\n', { mode: 0o600 });
    const out = (await cliWith({ XDG_DATA_HOME: dataHome }, 'events', '--limit', '0')).stdout;
    expect(out).toContain('  applied: 1,201; ~3,603,000 tokens reclaimed');
    expect(out).toContain('  retention: 1,201 of 2,402 checks kept at their source (50%), 2,402 lexically (100%), over 1,201 measured compaction(s)\n');
    // Nothing of a session in either log: both are named as read.
    const none = (await cliWith({ XDG_DATA_HOME: dataHome }, 'events', '--session', 'ffff')).stdout;
    expect(none).toBe(`no events of sessions matching 'ffff' in ${join(dir, 'events.jsonl')} or ${join(dir, 'events.1.jsonl')}\n`);
  });

  it('events skips a line whose time no date can show, instead of failing on it', async () => {
    const dataHome = join(home.root, 'far-future-data');
    const log = join(dataHome, 'gobstopper', 'events.jsonl');
    mkdirSync(join(dataHome, 'gobstopper'), { recursive: true, mode: 0o700 });
    const good = { schema: 'gobstopper/compaction-events-v1', ts: 1_000_000_000, provider: 'claude_code', session_id: '0199a2f1-aaaa', strategy: 'elide', action: 'transcript_compact', outcome: 'applied', trigger_tokens: 1000, context_tokens_before: 5000, context_tokens_after: 2000, est_reclaimed_tokens: 3000, items_covered: 4, duration_ms: 12, error_code: null };
    // A damaged digit: past what a Date holds, the readout used to stop with "Invalid time value".
    writeFileSync(log, `${JSON.stringify(good)}\n${JSON.stringify({ ...good, ts: 99_999_999_999_999 })}\n`, { mode: 0o600 });
    const env = { XDG_DATA_HOME: dataHome };
    const human = await cliWith(env, 'events');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^1 event\(s\), 2001-09-09 01:46 to 2001-09-09 01:46 UTC\n/);
    expect(human.stdout).toContain('  1 unreadable line(s) skipped\n');
    const asJson = await cliWith(env, 'events', '--json');
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ total_events: 1, skipped_lines: 1, first_ts: 1_000_000_000, last_ts: 1_000_000_000 });
  });

  it('prune previews by default and deletes only with --apply (or the original\'s --yes)', async () => {
    const preview = await json<{ dropped_entries: number; dry_run: boolean }>(V.validatePruneCommandOutput, 'prune', '--keep', '1');
    expect(preview).toMatchObject({ dropped_entries: 1, dry_run: true });
    expect((await cli('prune', '--keep', '1')).stdout).toContain('dry run only: rerun with --apply');
    expect(await json<unknown[]>(V.validateVaultCommandOutput, 'vault')).toHaveLength(2);
    const applied = await json<{ dropped_entries: number; manifests_removed: number; dry_run: boolean }>(V.validatePruneCommandOutput, 'prune', '--keep', '1', '--yes');
    expect(applied).toMatchObject({ dropped_entries: 1, manifests_removed: 1, dry_run: false });
    expect((await json<Array<{ sha256: string }>>(V.validateVaultCommandOutput, 'vault')).map((e) => e.sha256)).toEqual([second]);
    // The pruned snapshot's prefix, as history printed it: named as the snapshot it was meant as too.
    const gone = await cli('show', first.slice(0, 8));
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim().split('\n')).toEqual([
      `gobstopper: nothing archived matches '${first.slice(0, 8)}': no archived session nor snapshot has that prefix (gobstopper vault lists them; apply and snapshot archive a session)`,
    ]);
  });

  it('prune never removes a snapshot whose index line is gone, and refuses to prune around a missing chunk', async () => {
    const other = makeVaultHome();
    try {
      const run = async (...args: string[]) => {
        try {
          const { stdout } = await execFileAsync(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...other.env }, cwd: other.root });
          return { code: 0, stdout };
        } catch (error) {
          const e = error as { code: number; stdout: string };
          return { code: e.code, stdout: e.stdout };
        }
      };
      const a = writeSession(other.sessions, '0199a2f1-bbbb.jsonl', jsonl(claudeSession('0199a2f1-bbbb', 3)));
      const b = writeSession(other.sessions, '0199a2f1-cccc.jsonl', jsonl(claudeSession('0199a2f1-cccc', 4)));
      const kept = (await snapshotFile(other.layout, { path: a, sessionId: '0199a2f1-bbbb', provider: 'claude_code', strategy: 'snapshot', env: other.env })).entry.sha256;
      const lost = (await snapshotFile(other.layout, { path: b, sessionId: '0199a2f1-cccc', provider: 'claude_code', strategy: 'snapshot', env: other.env })).entry.sha256;
      // The line of the second snapshot is deleted, as the advice for a damaged line says to.
      const lines = readFileSync(other.layout.index, 'utf8').trimEnd().split('\n');
      writeFileSync(other.layout.index, lines.filter((l) => !l.includes(lost)).join('\n') + '\n');
      const pruned = JSON.parse((await run('prune', '--apply', '--json')).stdout);
      expect(pruned).toMatchObject({ manifests_removed: 0, chunks_removed: 0, unindexed_kept: 1, unindexed_snapshots: [lost] });
      expect((await run('show', lost, '--json')).code).toBe(0);
      // The listing cannot show it, and says that something is left out and where to look.
      const listed = (await run('vault')).stdout;
      expect(listed).toContain('1 snapshot(s)\n1 stored snapshot has no index line');
      expect(listed.replace(/\s+/g, ' ')).toContain(`show takes their ids: ${lost.slice(0, 16)}`);
      expect((await run('vault', '0199a2f1-bbbb')).stdout).not.toContain('no index line');
      // With no line left at all the listing does not claim the vault is empty.
      const savedIndex = readFileSync(other.layout.index);
      writeFileSync(other.layout.index, '');
      const emptied = (await run('vault')).stdout;
      expect(emptied).toContain('the vault index lists no snapshots\n2 stored snapshots have no index line');
      expect(emptied).not.toContain('yet');
      writeFileSync(other.layout.index, savedIndex);
      expect((await run('prune')).stdout).toContain(
        "kept 1 snapshot(s) that no index line, receipt or pin names (a failed apply's candidate, or a snapshot whose line was lost); `gobstopper show <id>` reads one, `--include-unindexed` deletes them:\n  " + lost,
      );
      // Asked for, they go (a dry run shows it first).
      expect(JSON.parse((await run('prune', '--include-unindexed', '--json')).stdout)).toMatchObject({ manifests_removed: 1, unindexed_kept: 0, dry_run: true });

      // A chunk of a kept snapshot is gone: prune says so and changes nothing.
      const { chunks } = JSON.parse(readFileSync(join(other.layout.manifests, kept), 'utf8')) as { chunks: string[] };
      rmSync(join(other.layout.chunks, chunks[0]!));
      const index = readFileSync(other.layout.index);
      const refused = await run('prune', '--apply', '--keep', '1', '--json');
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'vault_damaged', message: expect.stringContaining('chunk is missing') });
      expect(readFileSync(other.layout.index).equals(index)).toBe(true);
      expect(existsSync(join(other.layout.manifests, lost))).toBe(true);
    } finally {
      other.cleanup();
    }
  });

  it('a link to an archived transcript is refused naming the real path, not taken for a session never archived', async () => {
    const link = join(home.root, 'linked-session.jsonl');
    symlinkSync(sessionPath, link);
    try {
      for (const args of [['vault', link], ['history', link], ['show', link], ['undo', link], ['export', link, '--output', join(home.root, 'out.jsonl')]]) {
        const run = await cli(...args, '--json');
        expect(run.code, args.join(' ')).toBe(1);
        expect(JSON.parse(run.stdout).error, args.join(' ')).toEqual({ code: 'symlink_refused', message: `${link} is a symbolic link; pass the real path (${sessionPath})` });
      }
      const human = await cli('history', link);
      expect(human.stderr.trim().split('\n')).toEqual([`gobstopper: ${link} is a symbolic link; pass the real path (${sessionPath})`]);
      expect(existsSync(join(home.root, 'out.jsonl'))).toBe(false);
      // The real path still finds the session's states.
      expect((await cli('history', sessionPath)).code).toBe(0);
    } finally {
      rmSync(link);
    }
  });

  it('bad input gets one clear line, or one JSON object with --json, and the right exit code', async () => {
    const short = await cli('search-snapshot', first.slice(0, 20), '--query', 'x', '--json');
    expect(short.code).toBe(2);
    expect(JSON.parse(short.stdout)).toEqual({ ok: false, error: { code: 'invalid_sha', message: expect.stringContaining('64 are required') } });

    const pruned = await cli('search-snapshot', first, '--query', 'x');
    expect(pruned.code).toBe(1);
    const unknown = await cli('read-snapshot', 'b'.repeat(64), '--record', '0');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toEqual([`gobstopper: no snapshot ${'b'.repeat(64)} in the vault (gobstopper vault lists them)`]);

    // A one-character prefix is a slip, not an id, even where it would match one snapshot.
    const slip = await cli('diff', second, second.slice(0, 1), '--json');
    expect(slip.code).toBe(2);
    expect(JSON.parse(slip.stdout).error).toEqual({ code: 'invalid_sha', message: `snapshot b "${second.slice(0, 1)}" is not a snapshot id or prefix of at least 4 hex characters` });

    const badPage = await cli('read-snapshot', second, '--record', '0', '--max-bytes', '2');
    expect(badPage.code).toBe(2);
    // An offset no record could have is usage; one this record does not have is an error, as a
    // record the snapshot does not have is.
    expect((await cli('read-snapshot', second, '--record', '0', '--offset', '-1', '--json')).code).toBe(2);
    const pastEnd = await cli('read-snapshot', second, '--record', '0', '--offset', '99999999', '--json');
    expect(pastEnd.code).toBe(1);
    expect(JSON.parse(pastEnd.stdout).error).toMatchObject({ code: 'invalid_offset', message: expect.stringContaining('is past the end of record 0') });
    expect((await cli('read-snapshot', second, '--record', '99999', '--json')).code).toBe(1);

    // Past 2^53 the parsed number is not the one typed: the refusal must not quote one nobody typed.
    for (const [args, flag, bounds] of [
      [['prune', '--keep', '99999999999999999999'], '--keep', 'a whole number from 1 to 1000000'],
      [['prune', '--keep', '9007199254740993'], '--keep', 'a whole number from 1 to 1000000'],
      [['recall', '--limit', '99999999999999999999'], '--limit', 'a whole number from 1 to'],
      [['read-snapshot', second, '--record', '0', '--max-bytes', '99999999999999999999'], '--max-bytes', 'from 4 to'],
    ] as const) {
      const huge = await cli(...args, '--json');
      expect(huge.code, args.join(' ')).toBe(2);
      const message = JSON.parse(huge.stdout).error.message as string;
      expect(message).toMatch(new RegExp(`^${flag} must be ${bounds}.*, got a number far past \\d+$`));
      expect(message).not.toMatch(/9007199254740992|100000000000000000000/);
    }

    appendFileSync(home.layout.index, 'not json\n');
    const damaged = await cli('vault', '--json');
    expect(damaged.code).toBe(1);
    expect(JSON.parse(damaged.stdout).error).toMatchObject({ code: 'vault_damaged', message: expect.stringContaining(`${home.layout.index}: line 2 is not JSON`) });
  });
});

describe('vault commands before anything is archived (built CLI)', () => {
  let home: VaultHome | undefined;
  afterAll(() => home?.cleanup());

  it('read what they are given as they would with a vault: a malformed id or selector is usage, a session is not archived', async () => {
    home = makeVaultHome();
    const run = async (...args: string[]) => {
      const r = await runJson([...args, '--json'], home!.env, { cwd: home!.root });
      return { code: r.code, error: r.json.error };
    };
    expect(await run('diff', 'zz', '1234')).toEqual({ code: 2, error: { code: 'invalid_sha', message: 'snapshot a "zz" is not a hex snapshot id or prefix' } });
    expect(await run('diff', '1234', 'zz')).toEqual({ code: 2, error: { code: 'invalid_sha', message: 'snapshot b "zz" is not a hex snapshot id or prefix' } });
    expect((await run('diff', '1234', '5678')).code).toBe(1);
    expect(await run('show', '')).toEqual({ code: 2, error: { code: 'bad_selector', message: 'session selector is empty' } });
    expect(await run('show', '7d3f')).toMatchObject({ code: 1, error: { code: 'session_not_archived' } });
    expect(await run('show', 'a'.repeat(16))).toMatchObject({ code: 1, error: { code: 'snapshot_not_found' } });
    // Nothing was created by asking.
    expect(existsSync(home.layout.root)).toBe(false);
  });
});

describe('vault commands on a session file that moved (built CLI)', () => {
  let home: VaultHome | undefined;
  afterAll(() => home?.cleanup());

  it('find it by its new path once the old one is gone, and take a copy beside its original for another file', async () => {
    home = makeVaultHome();
    const run = (...args: string[]) => runJson([...args, '--json'], home!.env, { cwd: home!.root });
    const id = '0199b3c4-bbbb';
    const name = `rollout-2026-01-31T10-00-00-${id}.jsonl`;
    const original = writeSession(home.sessions, name, jsonl(claudeSession(id, 2)));
    const sha = (await snapshotFile(home.layout, { path: original, sessionId: id, provider: 'codex', strategy: 'snapshot', env: home.env })).entry.sha256;
    const archived = join(home.root, 'archived_sessions');
    mkdirSync(archived);
    const moved = join(archived, name);
    writeFileSync(moved, readFileSync(original), { mode: 0o600 });
    // While the original is there, the copy is another file, never archived.
    expect((await run('history', moved)).json.error.code).toBe('session_not_archived');
    rmSync(original);
    const history = await run('history', moved);
    expect(history.code).toBe(0);
    expect(V.validateHistoryCommandOutput(history.json)).toBe(true);
    expect(history.json.map((e: { sha256: string; path: string }) => [e.sha256, e.path])).toEqual([[sha, original]]);
    expect((await run('vault', moved)).json.map((e: { sha256: string }) => e.sha256)).toEqual([sha]);
    const shown = await run('show', moved);
    expect([shown.code, shown.json.sha256, shown.json.session_id]).toEqual([0, sha, id]);
    // Archived again where it is now, its history by that path still holds the states from before the move.
    appendFileSync(moved, jsonl([claudeUser(id, 'one more', 'u9')]));
    const again = (await snapshotFile(home.layout, { path: moved, sessionId: id, provider: 'codex', strategy: 'snapshot', env: home.env })).entry.sha256;
    const both = await run('history', moved);
    expect(both.json.map((e: { sha256: string }) => e.sha256)).toEqual([again, sha]);
    expect((await run('history', id)).json.map((e: { sha256: string }) => e.sha256)).toEqual([again, sha]);
  });

  it('does not give a hand-named file the history of another file of that name that is gone', async () => {
    home ??= makeVaultHome();
    const run = (...args: string[]) => runJson([...args, '--json'], home!.env, { cwd: home!.root });
    const id = '0199b3c4-cccc';
    const original = writeSession(home.sessions, 'notes.jsonl', jsonl(claudeSession(id, 2)));
    await snapshotFile(home.layout, { path: original, sessionId: id, provider: 'claude_code', strategy: 'snapshot', env: home.env });
    rmSync(original);
    const elsewhere = join(home.root, 'other');
    mkdirSync(elsewhere);
    const unrelated = join(elsewhere, 'notes.jsonl');
    writeFileSync(unrelated, jsonl(claudeSession('0199b3c4-dddd', 2)), { mode: 0o600 });
    expect((await run('history', unrelated)).json.error.code).toBe('session_not_archived');
  });
});
