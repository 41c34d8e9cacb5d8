/**
 * `agentic` forwards the plan of the strategy named as its editor. A selector as the editor (auto)
 * is refused every plan it asks for in turn; the person reading the answer is told so, rather than
 * only that the editor deferred.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome>;
beforeAll(() => {
  home = demoHome('[policy]\nstrategy = "agentic"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy_params = { editor = "auto" }\n');
});
afterAll(() => home.cleanup());

describe('agentic with a selector as its editor', () => {
  it('says the editor could not ask for the strategies it selects among', async () => {
    const { code, stdout, stderr } = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(code).toBe(0);
    expect(stdout).toContain("editor 'auto' deferred");
    expect(stderr).toContain('strategy auto was asked for through host/propose and may not ask for other strategies in turn');
    // Once, not once per candidate auto asked for.
    expect(stderr.match(/may not ask for other strategies in turn/g)).toHaveLength(1);
  });
});
