/**
 * A project directory whose name holds a newline (legal, if rare): every line a command prints
 * about a file there names it whole, on one line, with the newline escaped, as vault listings do;
 * a resume command quotes it so that it still pastes. The built CLI in a throwaway home.
 */
import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longOutput } from '../fixtures/claude/session-builder.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { requireBuilt, runCli } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

let home: TempHome;
let dir: string;
let sessionId: string;

beforeAll(() => {
  home = makeTempHome('gob-nlpath-');
  const b = modernSession({ cwd: '/home/dev/proj' });
  for (let i = 0; i < 12; i++) {
    b.user(`Step ${i}`);
    b.tools([{ name: 'Bash', input: { command: `npm test -- mod_${i}` }, output: longOutput(`out${i}`, 120) }]);
    b.text(`Fixed mod_${i}.`);
  }
  b.lastPrompt(b.cursor, 'last');
  sessionId = b.sessionId;
  dir = join(home.claudeHome, 'projects', '-home-dev\nproj');
  mkdirSync(dir, { recursive: true });
  const path = b.write(join(dir, `${sessionId}.jsonl`));
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(path, hourAgo, hourAgo);
});
afterAll(() => home?.cleanup());

/** The directory as printed: the newline as its escape, never raw. */
const shown = () => dir.replace('\n', '\\u000a');

describe('a path with a newline in it', () => {
  requireBuilt('dist/kernel/cli/commands/export.js');
  it('apply, verify, fork, undo and export print it escaped on one line', async () => {
    const applied = await runCli(['apply', sessionId, '--trigger', '1000', '--floor', '0', '--strategy', 'elide'], home.env);
    expect(applied.code, applied.stderr).toBe(0);
    const forkName = readdirSync(dir).find((name) => name !== `${sessionId}.jsonl`)!;
    for (const result of [
      applied,
      await runCli(['verify', join(dir, forkName)], home.env),
      await runCli(['fork', sessionId], home.env),
      await runCli(['undo', sessionId], home.env),
      await runCli(['export', sessionId, '--output', join(home.root, 'copy.jsonl')], home.env),
    ]) {
      expect(result.stdout).not.toContain(dir);
      expect(result.stdout.split('\n').some((line) => line.startsWith('proj/'))).toBe(false);
    }
    expect(applied.stdout).toContain(`published ${shown()}/${forkName}`);
  });
});
