/**
 * A command refused after it made a staging file leaves the data directory as it found it: the
 * staging directory it had to create is gone again with the file, not left behind empty.
 */
import { appendFileSync, readdirSync, truncateSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { demoHome, DEMO_CLAUDE_ID } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

/** Every file and directory under `dir`, directories included, as paths relative to it. */
function entries(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((d) => `${d.isDirectory() ? 'dir ' : ''}${relative(dir, join(d.parentPath, d.name))}`)
    .sort();
}

async function archived(h: NonNullable<typeof home>): Promise<string> {
  const snap = await runJson(['snapshot', DEMO_CLAUDE_ID], h.env);
  expect(snap.code, JSON.stringify(snap.json)).toBe(0);
  return snap.json.entry.sha256 as string;
}

describe('a command refused after staging', () => {
  it('apply on a vault whose index is damaged leaves no staging directory behind', async () => {
    home = demoHome();
    await archived(home);
    appendFileSync(join(home.dataHome, 'gobstopper', 'vault', 'index.jsonl'), 'not json\n');
    const before = entries(home.dataHome);

    const refused = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('vault_damaged');
    expect(entries(home.dataHome)).toEqual(before);
  });

  it('undo of a snapshot whose chunk was cut short leaves no staging directory behind', async () => {
    home = demoHome();
    const sha = await archived(home);
    const chunks = join(home.dataHome, 'gobstopper', 'vault', 'chunks');
    for (const chunk of readdirSync(chunks)) truncateSync(join(chunks, chunk), 1000);
    const before = entries(home.dataHome);

    const refused = await runJson(['undo', sha], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('vault_damaged');
    expect(entries(home.dataHome)).toEqual(before);
  });
});
