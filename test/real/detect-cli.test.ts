/**
 * Real-data tier, through the built CLI: a temporary home laid out with the real transcripts the
 * way the clients store them; `detect` must list every main session with the right provider, id
 * and the context size the file reports (the same number a full parse reports); one `watch` pass
 * must compact each or give the plan's reason, publish forks that verify, and change no source.
 * Skipped with a message when ../shared/fixtures is absent.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateWatchPass } from '../../schemas/generated/validators.js';
import { runJson } from '../helpers/cli.js';
import { makeTempHome } from '../helpers/temp-home.js';

const fixtures = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'real');
const present = existsSync(fixtures);
if (!present) console.log(`real-data tier skipped: ${fixtures} is absent`);

const main = (dir: string) =>
  present ? readdirSync(join(fixtures, dir)).filter((f) => f.endsWith('.jsonl') && !f.includes('jazzyalex') && !f.includes('__subagents__')) : [];

const home = makeTempHome('gob-real-detect-');
afterAll(() => home.cleanup());
const expected = new Map<string, string>();

function layOut(): void {
  const hourAgo = new Date(Date.now() - 3600_000);
  for (const name of main('claude')) {
    const text = readFileSync(join(fixtures, 'claude', name), 'utf8');
    const id = /"sessionId":"([^"]+)"/.exec(text)?.[1];
    if (!id) continue;
    const dir = join(home.claudeHome, 'projects', '-home-dev-real');
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(fixtures, 'claude', name), join(dir, `${id}.jsonl`));
    utimesSync(join(dir, `${id}.jsonl`), hourAgo, hourAgo);
    expected.set(id, 'claude_code');
  }
  const dir = join(home.codexHome, 'sessions', '2026', '02', '23');
  mkdirSync(dir, { recursive: true });
  for (const name of main('codex')) {
    const id = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/.exec(name)?.[1];
    if (!id) continue;
    const target = join(dir, `rollout-2026-02-23T10-00-00-${id}.jsonl`);
    copyFileSync(join(fixtures, 'codex', name), target);
    utimesSync(target, hourAgo, hourAgo);
    expected.set(id, 'codex');
  }
}

describe.skipIf(!present)('detect and watch over a home of real sessions', () => {
  beforeAll(() => layOut());

  it('lists every main session with its provider, id and reported context', async () => {
    expect(expected.size).toBeGreaterThanOrEqual(15);
    const { code, json } = await runJson(['detect', '--all'], home.env);
    expect(code).toBe(0);
    const rows = new Map<string, { provider: string; context_tokens: number | null; context_basis: string }>(json.map((r: any) => [r.session_id, r]));
    for (const [id, provider] of expected) {
      expect(rows.get(id)?.provider, id).toBe(provider);
    }
    // The tail read agrees with a whole-file parse (tune reports the parsed context).
    for (const [id] of expected) {
      const row = rows.get(id)!;
      if (row.context_basis !== 'reported') continue;
      const tuned = await runJson(['tune', id], home.env);
      expect(tuned.json.context_tokens, id).toBe(row.context_tokens);
    }
  });

  it('one watch pass compacts or accounts for every session, each fork verifies, and no source changes', async () => {
    mkdirSync(join(home.configHome, 'gobstopper'), { recursive: true });
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '[policy]\nstrategy = "compacted"\ntrigger_tokens = 10000\nfloor_tokens = 2000\n');
    const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
    const files = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
    const sources = new Map([...files(home.claudeHome), ...files(home.codexHome)].map((path) => [path, digest(path)]));
    const pass = await runJson(['watch', '--once', '--all'], home.env);
    expect(pass.code, pass.stderr).toBe(0);
    expect(validateWatchPass(pass.json)).toBe(true);
    const decided = new Map<string, any>(pass.json.decisions.map((d: any) => [d.session_id, d]));
    for (const [id] of expected) {
      const d = decided.get(id);
      expect(d, id).toBeDefined();
      // Every real session is readable: each is compacted or has the plan's reason not to be.
      expect(['compacted', 'no_plan'], `${id}: ${JSON.stringify(d.error ?? null)}`).toContain(d.outcome);
      if (d.outcome === 'no_plan') expect(d.reason_code, id).toMatch(/^[a-z_]+$/);
    }
    const compacted = [...decided.values()].filter((d) => d.outcome === 'compacted');
    expect(compacted.length).toBeGreaterThanOrEqual(3);
    for (const d of compacted) {
      const verified = await runJson(['verify', d.fork.path], home.env);
      expect(verified.code, d.session_id).toBe(0);
    }
    // The next pass reads nothing again: sources settled, forks unresumed.
    const again = await runJson(['watch', '--once', '--all'], home.env);
    expect(again.json.decisions.filter((d: any) => expected.has(d.session_id))).toEqual([]);
    expect(again.json.skipped.published).toBe(compacted.length);
    for (const [path, sha] of sources) expect(digest(path), path).toBe(sha);
  });
});
