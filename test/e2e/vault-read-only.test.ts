/**
 * A vault made read-only (0700 → 0500, say by a backup restore) still answers every command that
 * only reads it; one that would write says which directory to make writable again, and leaves every
 * file as it was.
 */
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles, sha256File } from '../helpers/demo-home.js';
import { modeBoundUser } from '../helpers/mode-bound-user.js';

let home: ReturnType<typeof demoHome> | undefined;
let vault: string | undefined;
afterEach(() => {
  if (vault) chmodSync(vault, 0o700);
  home?.cleanup();
  home = undefined;
  vault = undefined;
});

const state = (dir: string) => listFiles(dir).map((f) => `${f} ${statSync(f).mode.toString(8)} ${sha256File(f)}`);

describe('a vault that cannot be written to', () => {
  it('is read as usual, and a write names the vault directory to fix and changes nothing', async (ctx) => {
    home = demoHome();
    const as = modeBoundUser(home);
    if (as === null) return ctx.skip('the unprivileged user cannot run the CLI from this checkout');
    const archived = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env, as);
    expect(archived.code, archived.stderr).toBe(0);
    const sha = archived.json.entry.sha256 as string;
    vault = join(home.dataHome, 'gobstopper', 'vault');
    chmodSync(vault, 0o500);
    const before = state(home.root);

    for (const args of [['vault'], ['history', DEMO_CLAUDE_ID], ['show', sha], ['search-snapshot', sha, '--query', 'ECONNREFUSED'], ['read-snapshot', sha, '--record', '0'], ['prune']]) {
      const r = await runJson(args, home.env, as);
      expect(r.code, `${args.join(' ')}: ${JSON.stringify(r.json)}`).toBe(0);
    }
    for (const args of [['snapshot', DEMO_CLAUDE_ID, '--label', 'again'], ['prune', '--apply'], ['undo', DEMO_CLAUDE_ID]]) {
      const r = await runJson(args, home.env, as);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.json.error.code, args.join(' ')).toBe('eacces');
      expect(r.json.error.message, args.join(' ')).toContain(`check that you own ${vault} and can write to it`);
    }
    expect(state(home.root)).toEqual(before);
  });
});
