/**
 * Real-data tier: the Claude Code transcripts in ../shared/fixtures (real sessions from public
 * repositories, their sub-agent files, one composite of record shapes, and the original's
 * dialects-v1 contract fixture). Skipped with a message when the fixtures are not there.
 */
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { discoverSessions } from '../../plugins/provider-claude-code/src/discover.js';
import { parseTranscript } from '../../plugins/provider-claude-code/src/parse.js';
import { renderCandidate } from '../../plugins/provider-claude-code/src/render.js';
import { verifyTranscript } from '../../plugins/provider-claude-code/src/verify.js';
import type { Edit, Finding, Transcript } from '../../schemas/generated/types.js';
import { validateTranscript } from '../../schemas/generated/validators.js';
import { elidableLines } from '../helpers/elide-targets.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const shared = join(repoRoot, '..', 'shared');
const fixtures = join(shared, 'fixtures');
const claudeDir = join(fixtures, 'real', 'claude');
const branchFixture = join(fixtures, 'dialects-v1', 'claude-branch.jsonl');
const present = existsSync(claudeDir);
if (!present) console.log(`real-data tier skipped: ${fixtures} is absent`);

/** ../shared/README.md: sub-agent files are sidechain-only, the jazzyalex file is a composite. */
const isComposite = (name: string) => name.includes('jazzyalex');
const isSubagent = (name: string) => name.includes('__subagents__');
const realFiles = present ? readdirSync(claudeDir).filter((f) => f.endsWith('.jsonl')).sort() : [];
const mainTranscripts = realFiles.filter((f) => !isComposite(f) && !isSubagent(f));

const work = mkdtempSync(join(tmpdir(), 'claude-real-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

const NEW_ID = '6b1e0c1e-3a52-4f7e-9d0c-5e2a8f1b7c33';
const key = (f: Finding) => `${f.severity}:${f.code}@${f.line_index ?? '-'}`;
const parse = (path: string) => parseTranscript({ provider_id: 'claude_code', path });
const verify = (path: string) => verifyTranscript({ provider_id: 'claude_code', path });

/** The last main-chain assistant report with a context in file order, read without the plugin. */
function lastReportedContext(path: string): number | null {
  let last: number | null = null;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.includes('"usage"')) continue;
    const r = JSON.parse(line);
    const u = r?.message?.usage;
    if (r.type !== 'assistant' || r.isSidechain === true || !u) continue;
    const ctx = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.output_tokens ?? 0);
    if (ctx > 0) last = ctx;
  }
  return last;
}

async function renderTo(source: string, t: Transcript, edits: Edit[], newSessionId: string | null) {
  const dir = join(work, String(n++));
  mkdirSync(dir);
  const staging = join(dir, 'candidate.jsonl');
  closeSync(openSync(staging, 'wx', 0o600));
  const result = await renderCandidate({ provider_id: 'claude_code', path: source, source_sha256: t.source_sha256, edits, staging_path: staging, new_session_id: newSessionId, now: '2026-03-01T00:00:00.000Z' });
  return { staging, result };
}

describe.skipIf(!present)('real Claude Code transcripts', () => {
  it('knows which files are sessions', () => {
    expect(mainTranscripts.length).toBeGreaterThanOrEqual(10);
  });

  it.each(realFiles)('parses %s as what it is', async (name) => {
    const t = await parse(join(claudeDir, name));
    expect(validateTranscript(t), JSON.stringify(validateTranscript.errors?.slice(0, 3))).toBe(true);
    expect(t.items).toHaveLength(t.record_count);
    expect(t.session.kind).toBe(isComposite(name) ? 'composite' : isSubagent(name) ? 'subagent' : 'session');
    // The host skips a separate verify of the source on the strength of this.
    expect(t.findings_complete).toBe(true);
    expect(t.findings).toEqual((await verify(join(claudeDir, name))).findings);
  });

  it.each(mainTranscripts)('%s verifies with zero errors', async (name) => {
    const errors = (await verify(join(claudeDir, name))).findings.filter((f) => f.severity === 'error');
    expect(errors.map(key)).toEqual([]);
  });

  it.each(realFiles.filter((f) => !isMainOk(f)))('%s is reported as unresumable by verify', async (name) => {
    const codes = (await verify(join(claudeDir, name))).findings.map((f) => f.code);
    expect(codes).toContain(isComposite(name) ? 'composite_file' : 'sidechain_only');
  });

  it.each(mainTranscripts)('%s reports the context the file reports', async (name) => {
    const path = join(claudeDir, name);
    const t = await parse(path);
    expect(t.usage.context_state).toBe('reported');
    expect(t.usage.context_tokens).toBe(lastReportedContext(path));
  });

  it.each(mainTranscripts)('%s has the tool calls on its live branch that the real client sent', async (name) => {
    const sweepPath = join(shared, 'realclients', 'sweep-report.json');
    if (!existsSync(sweepPath)) return;
    const sweep = (JSON.parse(readFileSync(sweepPath, 'utf8')) as Array<{ file: string; tool_use?: number; tool_result?: number }>).find((r) => r.file === name);
    if (!sweep || sweep.tool_use === undefined) return;
    const t = await parse(join(claudeDir, name));
    const live = t.items.filter((i) => i.est_tokens > 0);
    expect(new Set(live.filter((i) => i.kind === 'tool_call').flatMap((i) => i.tool_use_ids ?? [])).size).toBe(sweep.tool_use);
    expect(new Set(live.filter((i) => i.kind === 'tool_result').flatMap((i) => i.tool_use_ids ?? [])).size).toBe(sweep.tool_result);
  });

  it.each(mainTranscripts)('%s forks with only its sessionId values changed', async (name) => {
    const source = join(claudeDir, name);
    const t = await parse(source);
    const { staging, result } = await renderTo(source, t, [], NEW_ID);
    const before = readFileSync(source, 'utf8').split('\n');
    const after = readFileSync(staging, 'utf8').split('\n');
    expect(after).toHaveLength(before.length);
    expect(result.record_count).toBe(t.record_count);
    for (let i = 0; i < before.length; i += 1) {
      if (before[i] === after[i]) continue;
      const a = JSON.parse(before[i]!);
      const b = JSON.parse(after[i]!);
      expect(b.sessionId).toBe(NEW_ID);
      b.sessionId = a.sessionId;
      expect(b).toEqual(a);
      // Only the id's characters differ: the rest of the line is byte-identical.
      expect(after[i]!.replace(NEW_ID, a.sessionId)).toBe(before[i]);
    }
  });

  it.each(mainTranscripts)('%s renders an elide plan that verifies with no new findings', async (name) => {
    const source = join(claudeDir, name);
    const t = await parse(source);
    const elidable = elidableLines(t.items);
    if (elidable.length === 0) return;
    const { staging, result } = await renderTo(source, t, [{ op: 'elide', line_indexes: elidable, stub_template: '[output elided by gobstopper: {bytes} bytes]' }], null);
    expect(result.elided_records).toBe(elidable.length);
    expect(result.bytes).toBeLessThan(t.bytes);
    const before = (await verify(source)).findings.map(key);
    const after = (await verify(staging)).findings.map(key);
    expect(after.filter((f) => !before.includes(f))).toEqual([]);
    const candidate = await parse(staging);
    expect(candidate.items.filter((i) => i.est_tokens > 0).map((i) => i.line_index)).toEqual(t.items.filter((i) => i.est_tokens > 0).map((i) => i.line_index));
    // The UI copy of each elided output keeps its shape; each of its strings is a stub, or is kept
    // as it was only when it is short and single-line (a path, a status), never the output itself.
    const sourceLines = readFileSync(source, 'utf8').split('\n');
    const candidateLines = readFileSync(staging, 'utf8').split('\n');
    const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v !== null && typeof v === 'object' ? Object.values(v).flatMap(strings) : []);
    const shape = (v: unknown): unknown => (Array.isArray(v) ? v.map(shape) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)])) : typeof v);
    let stubbedBytes = 0;
    for (const line of elidable) {
      const before = JSON.parse(sourceLines[line]!).toolUseResult;
      const after = JSON.parse(candidateLines[line]!).toolUseResult;
      if (before === undefined) continue;
      expect(shape(after)).toEqual(shape(before));
      const beforeStrings = strings(before);
      strings(after).forEach((text, k) => {
        // A stubbed string counts its own bytes, not the payload's: a persisted output's copy is
        // far larger than the note the model saw.
        const stub = `[output elided by gobstopper: ${Buffer.byteLength(beforeStrings[k]!, 'utf8')} bytes]`;
        if (text === stub) return;
        expect(text).toBe(beforeStrings[k]);
        const bytes = Buffer.byteLength(JSON.stringify(text));
        if (bytes > Buffer.byteLength(JSON.stringify(stub))) {
          expect(text).not.toMatch(/[\r\n]/);
          expect(bytes).toBeLessThan(1024);
        }
      });
      stubbedBytes += Buffer.byteLength(JSON.stringify(before)) - Buffer.byteLength(JSON.stringify(after));
    }
    expect(t.bytes - result.bytes).toBeGreaterThan(stubbedBytes);
  });

  it('reports every real Codex rollout as not a Claude transcript: one error finding, as Codex verify reports a Claude file', async () => {
    const codexDir = join(fixtures, 'real', 'codex');
    const rollouts = readdirSync(codexDir).filter((f) => f.endsWith('.jsonl'));
    expect(rollouts.length).toBeGreaterThan(0);
    for (const name of rollouts) {
      const result = await verify(join(codexDir, name));
      expect(result.findings.map(key), name).toEqual(['error:not_claude_transcript@-']);
      expect(result.findings[0]!.message, name).toMatch(/verify it with the provider whose transcript it is/);
      expect(result.record_count, name).toBeGreaterThan(0);
      expect(result.session_kind, name).toBeUndefined();
    }
  });

  it('discovers the sessions of a home laid out with them, sizing them from their tails', async () => {
    const home = join(work, 'home');
    const project = join(home, 'projects', '-home-user-project');
    mkdirSync(project, { recursive: true });
    const expected = new Map<string, number>();
    for (const name of mainTranscripts) {
      const t = await parse(join(claudeDir, name));
      const target = join(project, `${t.session.session_id}.jsonl`);
      copyFileSync(join(claudeDir, name), target);
      expected.set(t.session.session_id, t.usage.context_tokens);
    }
    const found = discoverSessions({ provider_id: 'claude_code', home }).sessions;
    expect(new Map(found.map((s) => [s.session.session_id, s.usage?.context_tokens]))).toEqual(expected);
    for (const s of found) expect(s.bytes_read).toBeLessThanOrEqual(600 * 1024);
  });
});

/** Main transcripts are the ones the real client resumes. */
function isMainOk(name: string): boolean {
  return mainTranscripts.includes(name);
}

describe.skipIf(!existsSync(branchFixture))('the original dialects-v1 Claude contract', () => {
  it('matches the manifest: live items, elidable bytes, context and no findings', async () => {
    const manifest = JSON.parse(readFileSync(join(fixtures, 'dialects-v1', 'manifest.json'), 'utf8')) as {
      fixtures: Array<{ file: string; items: Array<{ line: number; active: boolean; elidable_bytes: number | null; parts: number; uuid: string | null }>; context_tokens: number; findings: string[] }>;
    };
    const spec = manifest.fixtures.find((f) => f.file === 'claude-branch.jsonl')!;
    const t = await parse(branchFixture);
    for (const item of spec.items) {
      const got = t.items[item.line]!;
      expect(got.est_tokens > 0, `line ${item.line}`).toBe(item.active);
      expect(got.elidable_bytes ?? null).toBe(item.elidable_bytes);
      expect(got.elidable_parts ?? 0).toBe(item.parts);
      expect(got.uuid ?? null).toBe(item.uuid);
    }
    expect(t.usage.context_tokens).toBe(spec.context_tokens);
    expect((await verify(branchFixture)).findings.map((f) => f.code)).toEqual(spec.findings);
    // A full elision changes only the pointers the manifest names.
    const { staging } = await renderTo(branchFixture, t, [{ op: 'elide', line_indexes: [3], stub_template: '[elided]' }], null);
    const line = JSON.parse(readFileSync(staging, 'utf8').split('\n')[3]!);
    expect(line.message.content[1].content).toEqual([
      { type: 'text', text: '[elided]' },
      { type: 'text', text: '' },
    ]);
  });
});
