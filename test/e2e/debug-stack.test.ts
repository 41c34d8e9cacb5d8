/**
 * The CLI runs bundled, so without source maps a GOBSTOPPER_DEBUG stack trace would name chunk
 * files nobody can open. With the flag it names the TypeScript files and lines; without it no
 * stack is printed at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuilt, runCli } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

let home: TempHome;

describe('GOBSTOPPER_DEBUG stack traces', () => {
  requireBuilt('dist/cli/commands/show.js');
  beforeAll(() => {
    home = makeTempHome();
  });
  afterAll(() => home?.cleanup());

  it('name the TypeScript source that threw, not a bundle chunk', async () => {
    const r = await runCli(['show', 'nosuchsession'], home.env, { extraEnv: { GOBSTOPPER_DEBUG: '1' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\n {4}at .*kernel\/vault\/selectors\.ts:\d+:\d+\)/);
    expect(r.stderr).not.toContain('/dist/cli/chunks/');
  });

  it('are not printed without the flag', async () => {
    const r = await runCli(['show', 'nosuchsession'], home.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("gobstopper: no archived session matches 'nosuchsession' (gobstopper vault lists them; apply and snapshot archive a session)\n");
  });
});
