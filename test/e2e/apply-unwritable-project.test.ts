/**
 * A fork goes beside its session, so a project directory this user cannot write to fails apply and
 * fork before the source is archived: no snapshot, receipt or event is left for a fork that could
 * never be published.
 */
import { chmodSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles, sha256File } from '../helpers/demo-home.js';
import { modeBoundUser } from '../helpers/mode-bound-user.js';

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => {
  if (home) chmodSync(home.claudeDir, 0o700);
  home?.cleanup();
  home = undefined;
});

describe('a project directory that cannot be written to', () => {
  for (const command of ['apply', 'fork'] as const) {
    it(`${command} refuses it before archiving anything`, async (ctx) => {
      home = demoHome();
      const as = modeBoundUser(home);
      if (as === null) return ctx.skip('the unprivileged user cannot run the CLI from this checkout');
      const before = sha256File(home.claudeSession);
      chmodSync(home.claudeDir, 0o500);
      const r = await runJson([command, DEMO_CLAUDE_ID], home.env, as);
      expect(r.code, JSON.stringify(r.json)).toBe(1);
      expect(r.json.error.code).toBe('eacces');
      expect(r.json.error.message).toContain(`the fork goes beside the session, into ${home.claudeDir}, which cannot be written to`);
      expect(readdirSync(home.claudeDir)).toEqual([`${DEMO_CLAUDE_ID}.jsonl`]);
      expect(sha256File(home.claudeSession)).toBe(before);
      // Nothing archived: no vault, no receipt, no event.
      const data = join(home.dataHome, 'gobstopper');
      expect(existsSync(data) ? listFiles(data) : []).toEqual([]);
    });
  }
});
