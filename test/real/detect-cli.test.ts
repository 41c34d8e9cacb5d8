/**
 * Real-data tier, through the built CLI: a temporary home laid out with the real transcripts the
 * way the clients store them; `detect` must list every main session with the right provider, id
 * and the context size the file reports (the same number a full parse reports). Skipped with a
 * message when ../shared/fixtures is absent.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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

describe.skipIf(!present)('detect over a home of real sessions', () => {
  it('lists every main session with its provider, id and reported context', async () => {
    layOut();
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
});
