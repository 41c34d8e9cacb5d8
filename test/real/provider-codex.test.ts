/**
 * Real-data tier: the Codex rollouts in ../shared/fixtures (real sessions from public repositories,
 * one composite of record shapes, and the original's dialects-v1 contract fixture). Skipped with a
 * message when the fixtures are not there.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover } from '../../plugins/provider-codex/src/discover.js';
import { forkTarget } from '../../plugins/provider-codex/src/fork.js';
import { identify } from '../../plugins/provider-codex/src/identify.js';
import { parse } from '../../plugins/provider-codex/src/parse.js';
import { render } from '../../plugins/provider-codex/src/render.js';
import { verify } from '../../plugins/provider-codex/src/verify.js';
import type { Edit, Finding, Transcript } from '../../sdk/index.js';
import { validateTranscript } from '../../schemas/generated/validators.js';
import { elidableLines } from '../helpers/elide-targets.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = join(repoRoot, '..', 'shared', 'fixtures');
const codexDir = join(fixtures, 'real', 'codex');
const dialectsDir = join(fixtures, 'dialects-v1');
const present = existsSync(codexDir);
if (!present) console.log(`real-data tier skipped: ${fixtures} is absent`);

/** Files the real client refuses: composites of record shapes, not sessions (../shared/README.md). */
const isComposite = (name: string) => name.includes('jazzyalex');
const realFiles = present ? readdirSync(codexDir).filter((f) => f.endsWith('.jsonl')).sort() : [];
const mainRollouts = realFiles.filter((f) => !isComposite(f));

const work = mkdtempSync(join(tmpdir(), 'codex-real-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const lines = (text: string) => text.split('\n');
const key = (f: Finding) => `${f.severity}:${f.code}@${f.line_index ?? '-'}`;

/** The newest `last_token_usage` in the file, read independently of the plugin. */
function lastReportedContext(path: string): number | null {
  let last: number | null = null;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.includes('token_count')) continue;
    try {
      const r = JSON.parse(line);
      const u = r?.payload?.info?.last_token_usage;
      if (r.type === 'event_msg' && r.payload.type === 'token_count' && u) last = u.input_tokens + u.output_tokens;
    } catch {
      // not a record
    }
  }
  return last;
}

function stagingFor(source: string, newId: string): string {
  const target = forkTarget({ provider_id: 'codex', path: source, session_id: 'x', new_session_id: newId, now: '2026-03-01T00:00:00.000Z' }).target_path;
  const dir = join(work, String(n++));
  mkdirSync(dir);
  const staging = join(dir, basename(target));
  writeFileSync(staging, '');
  return staging;
}

describe.skipIf(!present)('provider-codex on real rollouts', () => {
  for (const name of realFiles) {
    it(`parses ${name} into a schema-valid transcript${isComposite(name) ? ' and calls it a composite' : ''}`, async () => {
      const path = join(codexDir, name);
      const t = await parse({ provider_id: 'codex', path });
      expect(validateTranscript(t), JSON.stringify(validateTranscript.errors)).toBe(true);
      expect(t.items).toHaveLength(t.record_count);
      expect(t.source_sha256).toBe(sha(readFileSync(path)));
      expect(t.session.kind).toBe(isComposite(name) ? 'composite' : 'session');
      // The host skips a separate verify of the source on the strength of this.
      expect(t.findings_complete).toBe(true);
      expect(t.findings).toEqual((await verify({ provider_id: 'codex', path })).findings);
      // Every item shape a real client wrote is one the client supports.
      expect(t.findings!.filter((f) => f.code === 'unsupported_response_item')).toEqual([]);
    });
  }

  for (const name of mainRollouts) {
    it(`${name}: zero verify errors, and context equals the last reported last_token_usage`, async () => {
      const path = join(codexDir, name);
      const v = await verify({ provider_id: 'codex', path });
      expect(v.findings.filter((f) => f.severity === 'error')).toEqual([]);
      const t = await parse({ provider_id: 'codex', path });
      const reported = lastReportedContext(path);
      expect(reported).not.toBeNull();
      expect(t.usage.context_state).toBe('reported');
      expect(t.usage.context_tokens).toBe(reported);
    });

    it(`${name}: a fork with no edits differs from its source only in the id fields`, async () => {
      const path = join(codexDir, name);
      const source = readFileSync(path, 'utf8');
      const t = await parse({ provider_id: 'codex', path });
      const oldId = t.session.session_id;
      const newId = '019f0000-aaaa-7bbb-8ccc-ddddeeeeffff';
      const staging = stagingFor(path, newId);
      await render({ provider_id: 'codex', path, source_sha256: t.source_sha256, edits: [], staging_path: staging, new_session_id: newId, now: '2026-03-01T00:00:00.000Z' });
      const a = lines(source);
      const b = lines(readFileSync(staging, 'utf8'));
      expect(b).toHaveLength(a.length);
      let changed = 0;
      for (let i = 0; i < a.length; i += 1) {
        if (a[i] === b[i]) continue;
        changed += 1;
        const before = JSON.parse(a[i]!);
        expect(before.type).toBe('session_meta');
        expect(b[i]).toBe(a[i]!.split(`"${oldId}"`).join(`"${newId}"`));
      }
      expect(changed).toBeGreaterThanOrEqual(1);
      const fork = await parse({ provider_id: 'codex', path: staging });
      expect(fork.session.session_id).toBe(newId);
    });

    it(`${name}: eliding its elidable outputs and appending a state card adds no findings`, async () => {
      const path = join(codexDir, name);
      const t = await parse({ provider_id: 'codex', path });
      const newId = '019f1111-aaaa-7bbb-8ccc-ddddeeeeffff';
      const staging = stagingFor(path, newId);
      const targets = elidableLines(t.items);
      const edits: Edit[] = [{ op: 'inject_digest', digest: { goal: 'continue the task', decisions: ['keep the API'], covers_items: t.items.length } }];
      if (targets.length > 0) edits.unshift({ op: 'elide', line_indexes: targets.slice(0, 64), stub_template: '[output elided by gobstopper: {bytes} bytes]' });
      const result = await render({ provider_id: 'codex', path, source_sha256: t.source_sha256, edits, staging_path: staging, new_session_id: newId, now: '2026-03-01T00:00:00.000Z' });
      expect(result.elided_records).toBe(Math.min(targets.length, 64));
      expect(result.appended_records).toBe(1);
      const before = (await verify({ provider_id: 'codex', path })).findings.map(key).filter((k) => !k.includes('file_name_without_id'));
      const after = (await verify({ provider_id: 'codex', path: staging })).findings.map(key);
      expect(after.filter((k) => !before.includes(k))).toEqual([]);
      const forked = await parse({ provider_id: 'codex', path: staging });
      expect(forked.items.at(-1)).toMatchObject({ kind: 'user', summary: '[gobstopper state card]' });
      if (targets.length > 0) expect(forked.bytes).toBeLessThan(t.bytes + 2000);
    });
  }

  it('reports every real Claude transcript as not a rollout: one error finding, as Claude verify reports a Codex file', async () => {
    const claudeDir = join(fixtures, 'real', 'claude');
    const transcripts = readdirSync(claudeDir).filter((f) => f.endsWith('.jsonl'));
    expect(transcripts.length).toBeGreaterThan(0);
    for (const name of transcripts) {
      const result = await verify({ provider_id: 'codex', path: join(claudeDir, name) });
      expect(result.findings.map(key), name).toEqual(['error:not_codex_rollout@-']);
      expect(result.findings[0]!.message, name).toMatch(/verify it with the provider whose transcript it is/);
      expect(result.record_count, name).toBeGreaterThan(0);
      expect(result.session_kind, name).toBeUndefined();
    }
  });

  it('detects every main rollout in a temporary home laid out like ~/.codex', async () => {
    const home = join(work, 'home');
    const expected: Array<{ id: string; context: number }> = [];
    for (const name of realFiles) {
      const t: Transcript = await parse({ provider_id: 'codex', path: join(codexDir, name) });
      const day = join(home, 'sessions', '2026', '02', '23');
      mkdirSync(day, { recursive: true });
      copyFileSync(join(codexDir, name), join(day, `rollout-2026-02-23T12-00-0${n++ % 10}-${t.session.session_id}.jsonl`));
      if (!isComposite(name)) expected.push({ id: t.session.session_id, context: t.usage.context_tokens });
    }
    const found = discover({ provider_id: 'codex', home }).sessions;
    for (const e of expected) {
      const s = found.find((x) => x.session.session_id === e.id);
      expect(s, e.id).toBeDefined();
      expect(s!.session.kind).toBe('session');
      expect(s!.usage?.context_tokens).toBe(e.context);
      expect(s!.bytes_read).toBeLessThanOrEqual(600 * 1024);
    }
    expect(found.filter((s) => s.session.kind === 'composite')).toHaveLength(realFiles.length - mainRollouts.length);
  });
});

describe.skipIf(!existsSync(join(dialectsDir, 'codex-window.jsonl')))('provider-codex on the dialects-v1 codex-window contract', () => {
  const original = join(dialectsDir, 'codex-window.jsonl');
  const REQUIRED = { timestamp: '2026-03-01T00:00:00.000Z', cwd: '/work', originator: 'codex_cli_rs', cli_version: '0.171.0' };

  /**
   * The contract speaks of the window, not of resume acceptance (its README), and its session_meta
   * carries nothing but an id: the client cannot read that record, so parse refuses the file. The
   * window is checked on a copy whose session_meta has the fields the client needs; every other
   * line is the fixture's.
   */
  function readableCopy(): string {
    const [meta, ...rest] = lines(readFileSync(original, 'utf8'));
    const record = JSON.parse(meta!) as { payload: Record<string, unknown> };
    record.payload = { ...record.payload, ...REQUIRED };
    const copy = join(work, `window-${n++}.jsonl`);
    writeFileSync(copy, [JSON.stringify(record), ...rest].join('\n'));
    return copy;
  }
  let path: string;
  beforeAll(() => {
    path = readableCopy();
  });

  it('reports the fields its session_meta lacks, which the manifest does not judge', async () => {
    const { findings } = await verify({ provider_id: 'codex', path: original });
    expect(findings.filter((f) => f.code === 'invalid_session_meta').map((f) => f.message.split(' ')[6])).toEqual(Object.keys(REQUIRED));
    await expect(parse({ provider_id: 'codex', path: original })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('lacks the timestamp field') });
  });

  it('matches the manifest: live window, elidable bytes, context 211', async () => {
    const manifest = JSON.parse(readFileSync(join(dialectsDir, 'manifest.json'), 'utf8'));
    const oracle = manifest.fixtures.find((f: { file: string }) => f.file === 'codex-window.jsonl');
    expect(sha(readFileSync(original))).toBe(oracle.sha256);
    const t = await parse({ provider_id: 'codex', path });
    expect(t.usage.context_tokens).toBe(oracle.context_tokens);
    for (const expected of oracle.items) {
      const i = t.items[expected.line]!;
      expect(i.est_tokens > 0, `line ${expected.line} active`).toBe(expected.active);
      expect(i.elidable_bytes ?? null, `line ${expected.line} elidable`).toBe(expected.elidable_bytes);
      if (expected.elidable_bytes !== null) expect(i.elidable_parts).toBe(expected.parts);
    }
    expect(t.items[4]!.kind).toBe('meta');
  });

  it('reports the manifest\'s one unsupported item: the output with an image block the client does not read', async () => {
    const manifest = JSON.parse(readFileSync(join(dialectsDir, 'manifest.json'), 'utf8'));
    const oracle = manifest.fixtures.find((f: { file: string }) => f.file === 'codex-window.jsonl');
    expect(oracle.findings).toEqual(['unsupported_response_item']);
    const { findings } = await verify({ provider_id: 'codex', path: original });
    expect(findings.filter((f) => f.code === 'unsupported_response_item').map((f) => [f.severity, f.line_index])).toEqual([['warning', 9]]);
  });

  it('declines the other providers\' fixtures: parse with a clear error, verify with one error finding', async () => {
    for (const name of ['claude-branch.jsonl', 'devin-physical-branch.jsonl']) {
      const other = join(dialectsDir, name);
      expect(identify({ provider_id: 'codex', path: other })).toEqual({ matches: false, session: null });
      await expect(parse({ provider_id: 'codex', path: other })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('not a Codex rollout') });
      expect((await verify({ provider_id: 'codex', path: other })).findings.map(key), name).toEqual(['error:not_codex_rollout@-']);
    }
  });

  it('changes exactly the manifest pointers under full elision', async () => {
    const manifest = JSON.parse(readFileSync(join(dialectsDir, 'manifest.json'), 'utf8'));
    const oracle = manifest.fixtures.find((f: { file: string }) => f.file === 'codex-window.jsonl');
    const t = await parse({ provider_id: 'codex', path });
    const targets = elidableLines(t.items);
    const staging = join(work, `window-${n++}.jsonl`);
    writeFileSync(staging, '');
    await render({ provider_id: 'codex', path, source_sha256: t.source_sha256, edits: [{ op: 'elide', line_indexes: targets, stub_template: '[elided]' }], staging_path: staging, new_session_id: null, now: '2026-03-01T00:00:00.000Z' });
    const a = lines(readFileSync(path, 'utf8'));
    const b = lines(readFileSync(staging, 'utf8'));
    const changes: Array<{ line: number; pointer: string; value: unknown }> = [];
    const diff = (x: unknown, y: unknown, pointer: string, line: number) => {
      if (typeof x === 'object' && x !== null && typeof y === 'object' && y !== null) {
        for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) diff((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k], `${pointer}/${k}`, line);
      } else if (x !== y) changes.push({ line, pointer, value: y });
    };
    for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) diff(JSON.parse(a[i]!), JSON.parse(b[i]!), '', i);
    expect(changes).toEqual(oracle.changes);
  });
});
