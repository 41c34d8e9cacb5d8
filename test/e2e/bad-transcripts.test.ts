/**
 * Every command that reads a transcript, against every kind of transcript it must refuse: one clear
 * line on stderr (no stack), one JSON object with --json, a non-zero exit, and the home exactly as
 * it was. Each command has its own tests of its answers; this one holds the refusals to one shape.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernSession } from '../fixtures/claude/sessions.js';
import { sessionsDir } from '../fixtures/codex/rollout-builder.js';
import { legacySession } from '../fixtures/codex/sessions.js';
import { requireBuilt, runCli } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

/** Low, so that a line of a few KiB is over it without writing a large file. */
const RECORD_LIMIT = 4096;

let home: TempHome;
let project: string;

/** The demo session's lines with line `index` replaced by `line` (a string, or bytes). */
function withLine(index: number, line: string | Buffer): Buffer {
  const lines: Buffer[] = modernSession().lines().map((l) => Buffer.from(l));
  lines[index] = Buffer.isBuffer(line) ? line : Buffer.from(line);
  return Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
}

/** A Codex rollout (its own id, so that no two cases share one) with `change` applied to its lines. */
function rollout(id: string, change: (lines: Buffer[]) => Buffer[]): string {
  const { builder } = legacySession({ id });
  const lines = change(builder.text().trimEnd().split('\n').map((l) => Buffer.from(l)));
  const path = builder.writeTo(sessionsDir(home.codexHome), { text: '' });
  writeFileSync(path, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  return idle(path);
}

/** An hour old: a session written just now is live, and a live one is left to its client unread. */
function idle(path: string): string {
  const then = new Date(Date.now() - 3_600_000);
  utimesSync(path, then, then);
  return path;
}

function recordAt(index: number): Record<string, unknown> {
  return JSON.parse(modernSession().lines()[index]!) as Record<string, unknown>;
}

/** Transcripts no command may act on: Claude sessions in a projects folder, then Codex rollouts. */
const CASES: Record<string, () => string> = {
  'a line that is not UTF-8': () => write('not-utf8', withLine(4, Buffer.concat([Buffer.from('{"type":"user","x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]))),
  'a line that is a JSON array': () => write('array-line', withLine(4, '[1,2,3]')),
  'a record whose uuid is a number': () => write('uuid-number', withLine(4, JSON.stringify({ ...recordAt(4), uuid: 5 }))),
  'a record over the record-size limit': () => write('oversized', withLine(4, JSON.stringify({ ...recordAt(4), pad: 'p'.repeat(RECORD_LIMIT * 2) }))),
  'a parent chain that loops': () => {
    const a = recordAt(3);
    const b = recordAt(4);
    return write('loop', withLine(3, JSON.stringify({ ...a, parentUuid: b.uuid })));
  },
  'a symbolic link to a transcript': () => {
    const target = write('link-target', Buffer.from(modernSession().toJsonl()));
    const link = join(project, 'link.jsonl');
    symlinkSync(target, link);
    return link;
  },
  'a symbolic link to nothing': () => {
    const link = join(project, 'dangling.jsonl');
    symlinkSync(join(project, 'nowhere.jsonl'), link);
    return link;
  },
  'a directory': () => {
    const dir = join(project, 'dir.jsonl');
    mkdirSync(dir);
    return dir;
  },
  // Opening a FIFO for reading blocks until a writer comes: a reader that opened it would hang.
  'a named pipe': () => {
    const fifo = join(project, 'fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    return fifo;
  },
  'a path that does not exist': () => join(project, 'missing.jsonl'),
  'a rollout line that is not UTF-8': () =>
    rollout('019d0000-0000-7000-8000-0000000000c1', (lines) => lines.map((l, i) => (i === 6 ? Buffer.concat([l.subarray(0, l.length - 2), Buffer.from([0xff]), Buffer.from('"}')]) : l))),
  'a rollout without a session_meta': () => rollout('019d0000-0000-7000-8000-0000000000c2', (lines) => lines.slice(1)),
  'a rollout whose session_meta payload is a number': () =>
    rollout('019d0000-0000-7000-8000-0000000000c3', (lines) => [Buffer.from(JSON.stringify({ ...JSON.parse(lines[0]!.toString()), payload: 5 })), ...lines.slice(1)]),
  'a rollout whose session_meta fields have types the client cannot read': () =>
    rollout('019d0000-0000-7000-8000-0000000000c5', (lines) => {
      const meta = JSON.parse(lines[0]!.toString()) as { payload: Record<string, unknown> };
      return [Buffer.from(JSON.stringify({ ...meta, payload: { ...meta.payload, cwd: ['x'], timestamp: 5, originator: { a: 1 }, cli_version: 7 } })), ...lines.slice(1)];
    }),
  'a rollout whose session_meta lacks fields the client needs': () =>
    rollout('019d0000-0000-7000-8000-0000000000c7', (lines) => {
      const meta = JSON.parse(lines[0]!.toString()) as { payload: Record<string, unknown> };
      const { cwd: _cwd, cli_version: _version, ...payload } = meta.payload;
      return [Buffer.from(JSON.stringify({ ...meta, payload })), ...lines.slice(1)];
    }),
  'a rollout whose session_meta id is a number': () =>
    rollout('019d0000-0000-7000-8000-0000000000c6', (lines) => {
      const meta = JSON.parse(lines[0]!.toString()) as { payload: Record<string, unknown> };
      return [Buffer.from(JSON.stringify({ ...meta, payload: { ...meta.payload, id: 5 } })), ...lines.slice(1)];
    }),
  'a rollout line over the record-size limit': () =>
    rollout('019d0000-0000-7000-8000-0000000000c4', (lines) => lines.map((l, i) => (i === 6 ? Buffer.from(JSON.stringify({ ...JSON.parse(l.toString()), pad: 'p'.repeat(RECORD_LIMIT * 2) })) : l))),
};

function write(name: string, bytes: Buffer): string {
  const path = join(project, `${name}.jsonl`);
  writeFileSync(path, bytes);
  return idle(path);
}

/**
 * Every command that takes a session, as typed with that session's path. `snapshot` archives a
 * damaged transcript as it is (tested below) and refuses only what is not a file it can archive.
 */
const COMMANDS: Record<string, (path: string) => string[]> = {
  plan: (p) => ['plan', p],
  apply: (p) => ['apply', p],
  fork: (p) => ['fork', p],
  eval: (p) => ['eval', p],
  tune: (p) => ['tune', p],
  explain: (p) => ['explain', p],
  'eval-study': (p) => ['eval-study', p, '--prepare-manifest', join(home.root, 'manifest.json')],
};

/**
 * verify answers a damaged transcript with its findings, and snapshot archives it; both refuse only
 * what is not a file they may read. A rollout whose session_meta is gone or unreadable is still a
 * rollout by its other records: verify names the missing session_meta.
 */
const NOT_A_SESSION = new Set(['a symbolic link to a transcript', 'a symbolic link to nothing', 'a directory', 'a named pipe', 'a path that does not exist']);

/** Every entry under the home, with each file's mode and digest. */
function treeDigest(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name);
    out[path] = e.isFile() ? `${statSync(path).mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}` : e.isSymbolicLink() ? 'link' : e.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

const paths = new Map<string, string>();

describe('transcripts no command may act on (built CLI)', () => {
  requireBuilt('dist/kernel', 'dist/cli');
  beforeAll(() => {
    home = makeTempHome('gob-e2e-bad-');
    project = join(home.claudeHome, 'projects', '-home-dev-projects-demo');
    mkdirSync(project, { recursive: true });
    mkdirSync(join(home.configHome, 'gobstopper'), { recursive: true });
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '[policy]\ntrigger_tokens = 100\nfloor_tokens = 50\nmin_savings_tokens = 0\n');
    for (const [name, make] of Object.entries(CASES)) paths.set(name, make());
  });
  afterAll(() => home?.cleanup());

  const env = () => ({ ...home.env, GOBSTOPPER_MAX_RECORD_BYTES: String(RECORD_LIMIT) });

  const pairs = [
    ...Object.keys(CASES).flatMap((c) => Object.keys(COMMANDS).map((command) => [c, command] as const)),
    ...[...NOT_A_SESSION].map((c) => [c, 'snapshot'] as const),
  ];
  const argsOf = (command: string, path: string) => (command === 'snapshot' ? ['snapshot', path] : COMMANDS[command]!(path));

  it.each(pairs)('%s: %s says why in one line and changes nothing', { timeout: 60_000 }, async (name, command) => {
    const args = argsOf(command, paths.get(name)!);
    const before = treeDigest(home.root);
    // One after the other: two refused runs at once may each find the other's staging directory.
    const human = await runCli(args, env());
    const json = await runCli([...args, '--json'], env());
    expect(human.signal, human.stderr).toBeNull();
    expect(human.code, human.stdout + human.stderr).not.toBe(0);
    expect(human.code).toBeLessThanOrEqual(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^gobstopper: [^\n]+\n$/);

    expect(json.code).toBe(human.code);
    expect(json.stdout.trim().split('\n'), json.stdout).toHaveLength(1);
    const body = JSON.parse(json.stdout) as { ok: boolean; error: { code: string; message: string } };
    expect(body.ok).toBe(false);
    expect(body.error.code).toMatch(/^[a-z_]+$/);
    // The same message both ways, apart from the prefix.
    expect(`gobstopper: ${body.error.message}\n`).toBe(human.stderr);
    expect(treeDigest(home.root)).toEqual(before);
  });

  it.each([...NOT_A_SESSION])('%s: verify refuses it in one line', async (name) => {
    const r = await runCli(['verify', paths.get(name)!], env());
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^gobstopper: [^\n]+\n$/);
  });

  const damaged = Object.keys(CASES).filter((c) => !NOT_A_SESSION.has(c));

  it.each(damaged)('%s: verify names it as an error finding', async (name) => {
    const r = await runCli(['verify', paths.get(name)!, '--json'], env());
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout) as { findings: Array<{ severity: string; code: string }> };
    expect(body.findings.some((f) => f.severity === 'error')).toBe(true);
  });

  // Codex reads such a session_meta as none and does not resume the thread (docs/design.md).
  it('a rollout whose session_meta fields have types the client cannot read: verify names each field', async () => {
    const verified = await runCli(['verify', paths.get('a rollout whose session_meta fields have types the client cannot read')!, '--json'], env());
    expect(verified.code).toBe(1);
    const body = JSON.parse(verified.stdout) as { findings: Array<{ severity: string; code: string; message: string }> };
    expect(body.findings.filter((f) => f.code === 'invalid_session_meta').map((f) => [f.severity, f.message.split(' ')[6]])).toEqual([
      ['error', 'timestamp'],
      ['error', 'cwd'],
      ['error', 'originator'],
      ['error', 'cli_version'],
    ]);
  });

  it.each(['a rollout without a session_meta', 'a rollout whose session_meta payload is a number'])('%s: verify names the session_meta the client cannot find', async (name) => {
    const verified = await runCli(['verify', paths.get(name)!, '--json'], env());
    expect(verified.code).toBe(1);
    const body = JSON.parse(verified.stdout) as { findings: Array<{ severity: string; code: string }> };
    expect(body.findings.filter((f) => f.severity === 'error').map((f) => f.code)).toContain(name.includes('number') ? 'invalid_session_meta' : 'missing_session_meta');
  });

  // Codex does not resume a rollout whose session_meta lacks one of these either (docs/design.md).
  it('a rollout whose session_meta lacks fields the client needs: verify names each field', async () => {
    const verified = await runCli(['verify', paths.get('a rollout whose session_meta lacks fields the client needs')!, '--json'], env());
    expect(verified.code).toBe(1);
    const body = JSON.parse(verified.stdout) as { findings: Array<{ severity: string; code: string; message: string }> };
    expect(body.findings.filter((f) => f.code === 'invalid_session_meta').map((f) => [f.severity, f.message])).toEqual([
      ['error', 'session_meta on line 1 lacks the cwd field the client needs to read it'],
      ['error', 'session_meta on line 1 lacks the cli_version field the client needs to read it'],
    ]);
    const path = paths.get('a rollout whose session_meta lacks fields the client needs')!;
    expect((await runCli(['plan', path], env())).stderr).toContain('session_meta on line 1 lacks the cwd field the client needs to read it, so codex cannot resume it');
    // fork checks the copy's findings first, as it does for a field of the wrong type.
    expect((await runCli(['fork', path], env())).stderr).toContain('has 2 verify error(s) (invalid_session_meta) that a copy keeps');
  });

  // Last: these write to the vault, which the tests above hold must not change.
  it.each(damaged)('%s: snapshot archives it byte for byte, to be put back after a repair', async (name) => {
    const path = paths.get(name)!;
    const r = await runCli(['snapshot', path, '--json'], env());
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as { entry: { sha256: string; source_sha256: string; bytes: number } };
    const bytes = readFileSync(path);
    expect(body.entry.source_sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(body.entry.bytes).toBe(bytes.length);
    const shown = await runCli(['show', body.entry.sha256, '--json'], env());
    expect(shown.code, shown.stderr).toBe(0);
  });
});
