/**
 * `agentic` forwards the plan of the strategy named as its editor. A selector as the editor is
 * refused: the built-in `auto` by agentic's own parameter schema, before anything runs; a
 * third-party selector at run time, when it asks the host for another strategy's plan. The person
 * reading the answer is told which, rather than only that the editor deferred.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdkFixtureBundle } from '../fixtures/bundles/build-bundle.js';
import { runCli } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

const config = (editor: string) =>
  `[policy]\nstrategy = "agentic"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy_params = { editor = "${editor}" }\n`;

describe('agentic with a selector as its editor', () => {
  const homes: ReturnType<typeof demoHome>[] = [];
  const homeWith = (editor: string) => {
    const home = demoHome(config(editor));
    homes.push(home);
    return home;
  };
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'gob-relay-'));
  });
  afterAll(() => {
    for (const home of homes) home.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses auto as the editor in the configuration, naming the parameter and the file that set it', async () => {
    const home = homeWith('auto');
    const { code, stdout, stderr } = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('strategy_params for agentic');
    expect(stderr).toContain('/editor: must not be "auto"');
    expect(stderr).toContain('[policy] in');
  });

  it('says a third-party selector as the editor could not ask for the strategy it forwards', async () => {
    const home = homeWith('relay');
    const bundle = await buildSdkFixtureBundle(join(work, 'relay'), 'relay-sdk-strategy.ts', { id: 'relay', provides: { strategies: ['relay'] } });
    const added = await runCli(['plugin', 'add', bundle], home.env);
    expect(added.code, added.stderr).toBe(0);
    const { code, stdout, stderr } = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("editor 'relay' deferred");
    expect(stderr).toContain('strategy relay was asked for through host/propose and may not ask for other strategies in turn (it asked for elide)');
    expect(stderr.match(/may not ask for other strategies in turn/g)).toHaveLength(1);
  });
});
