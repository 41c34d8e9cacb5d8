/**
 * --json printed on a terminal: text a hostile transcript or argument carries (a CSI, a
 * right-to-left override, a line separator) reaches stdout as \u escapes, never raw, and still
 * parses to exactly what it was. The built CLI in a throwaway home holding one generated Claude
 * Code session whose prompts and working directory carry those characters.
 */
import { mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longOutput } from '../fixtures/claude/session-builder.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { requireBuilt, runCli } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';


const CSI = '\u009b';
const RLO = '\u202e';
const LINE_SEPARATOR = '\u2028';
const HOSTILE_CWD = `/home/dev/${LINE_SEPARATOR}proj${CSI}2J${RLO}txt.exe`;
const HOSTILE_PROMPT = `deploy ${CSI}31m now ${RLO} reversed`;

let home: TempHome;
let sessionId: string;

/** Passes when `stdout` holds none of the three characters raw and each as its escape. */
function expectEscaped(stdout: string, escapes: string[]): void {
  for (const raw of [CSI, RLO, LINE_SEPARATOR]) expect(stdout).not.toContain(raw);
  for (const escape of escapes) expect(stdout).toContain(escape);
}

beforeAll(() => {
  home = makeTempHome('gob-jsonsafe-');
  const b = modernSession({ cwd: HOSTILE_CWD });
  for (let i = 0; i < 20; i++) {
    b.user(`Step ${i}: ${HOSTILE_PROMPT}`);
    b.tools([{ name: 'Bash', input: { command: `npm test -- mod_${i}` }, output: longOutput(`out${i}`, 120) }]);
    b.text(`Fixed mod_${i}.`);
  }
  b.lastPrompt(b.cursor, 'last');
  sessionId = b.sessionId;
  const dir = join(home.claudeHome, 'projects', '-home-dev-proj');
  mkdirSync(dir, { recursive: true });
  const path = b.write(join(dir, `${sessionId}.jsonl`));
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(path, hourAgo, hourAgo);
});
afterAll(() => home.cleanup());

describe('--json cannot steer the terminal it is printed on', () => {
  requireBuilt('dist/kernel/cli/commands/plan.js');
  it('plan quotes the prompt and the working directory escaped, and they parse back unchanged', async () => {
    const r = await runCli(['plan', sessionId.slice(0, 8), '--strategy', 'compacted', '--trigger', '1000', '--floor', '0', '--json'], home.env);
    expect(r.code, r.stderr).toBe(0);
    expectEscaped(r.stdout, ['\\u009b', '\\u202e', '\\u2028']);
    const body = JSON.parse(r.stdout);
    expect(body.session.cwd).toBe(HOSTILE_CWD);
    const card = body.plan.edits.find((e: { op: string }) => e.op === 'inject_digest');
    expect(card.digest.goal).toContain(HOSTILE_PROMPT);
    // The layout is the indented one it always was.
    expect(r.stdout.startsWith('{\n  "status": "plan",\n')).toBe(true);
  });

  it('an error quoting a hostile session id is one escaped JSON object', async () => {
    const typed = `ab${RLO}cd${CSI}`;
    const r = await runCli(['plan', typed, '--json'], home.env);
    expect(r.code).toBe(1);
    expectEscaped(r.stdout, ['\\u202e', '\\u009b']);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, error: { code: 'session_not_found', message: `no session matching '${typed}' (gobstopper detect --all lists the sessions there are)` } });
  });

  it('an unknown command quoting hostile words is answered escaped too', async () => {
    const r = await runCli([`nosuch${RLO}`, '--json'], home.env);
    expect(r.code).toBe(2);
    expectEscaped(r.stdout, ['\\u202e']);
    expect(JSON.parse(r.stdout).error.message).toContain(`nosuch${RLO}`);
  });

  it('GOBSTOPPER_DEBUG prints the stack of an error quoting hostile input escaped', async () => {
    const r = await runCli(['plan', `ab${RLO}cd${CSI}`], home.env, { extraEnv: { GOBSTOPPER_DEBUG: '1' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("GobstopperError: no session matching 'ab\\u202ecd\\u009b' (gobstopper detect --all lists the sessions there are)\n    at ");
    expect(r.stderr).not.toMatch(/[\u202e\u009b]/);
  });

  it('without --json, the unknown command is named on stderr escaped, as other errors are', async () => {
    const r = await runCli([`nosuch${RLO}${CSI}`], home.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("gobstopper: unknown command 'nosuch\\u202e\\u009b'; gobstopper --help lists the commands\n");
  });
});
