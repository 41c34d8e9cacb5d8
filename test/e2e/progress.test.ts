/**
 * Long commands say what they are doing on a terminal and nothing when piped. The terminal is the
 * real one `script` (util-linux) gives the built CLI; the test is skipped where it is missing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { binPath, requireBuilt, runCli } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

const SCRIPT = '/usr/bin/script';
const hasScript = existsSync(SCRIPT) && spawnSync(SCRIPT, ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasScript) console.log('terminal progress tests skipped: util-linux script is not installed');

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

/** Runs the built CLI on a pseudo-terminal; what it wrote to stdout and stderr, as the terminal got it. */
function onTerminal(args: string[], env: Record<string, string>, columns?: number): { status: number | null; screen: string } {
  const quoted = [process.execPath, binPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const command = columns === undefined ? quoted : `stty cols ${columns} && ${quoted}`;
  const r = spawnSync(SCRIPT, ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, screen: r.stdout };
}

describe.skipIf(!hasScript)('progress on a terminal, quiet when piped', () => {
  requireBuilt('dist/cli');
  it('apply shows each step on one line and clears it before the answer', async () => {
    home = demoHome();
    const { status, screen } = onTerminal(['apply', DEMO_CLAUDE_ID], home.env);
    expect(status, screen).toBe(0);
    for (const step of ['reading and planning the session', 'archiving the source and rendering the fork', 'verifying the fork', 'publishing the fork']) {
      expect(screen).toContain(`\r\x1b[2Kapply: ${step}…`);
    }
    // The line is cleared, and the answer starts at the beginning of a clean line.
    expect(screen).toMatch(/\r\x1b\[2Kclaude_code 7d3f1c2a/);
    expect(screen).toContain('resume the new session:');
  });

  it('a terminal that cannot move the cursor (TERM=dumb) gets no status line', async () => {
    home = demoHome();
    const { status, screen } = onTerminal(['apply', DEMO_CLAUDE_ID], { ...home.env, TERM: 'dumb' });
    expect(status, screen).toBe(0);
    expect(screen).toContain('resume the new session:');
    expect(screen).not.toContain('\x1b');
    expect(screen).not.toContain('apply: verifying the fork');
  });

  it('plan says it is reading and planning, and clears that before the plan', async () => {
    home = demoHome();
    const { status, screen } = onTerminal(['plan', DEMO_CLAUDE_ID], home.env);
    expect(status, screen).toBe(0);
    expect(screen).toMatch(/^\r\x1b\[2Kplan: reading and planning the session…\r\x1b\[2Kclaude_code 7d3f1c2a/);
  });

  it('fork and undo show their steps too', async () => {
    home = demoHome();
    const forked = onTerminal(['fork', DEMO_CLAUDE_ID], home.env);
    expect(forked.status, forked.screen).toBe(0);
    for (const step of ['checking and archiving the session', 'rendering the copy', 'verifying the copy', 'publishing the copy']) expect(forked.screen).toContain(`\r\x1b[2Kfork: ${step}…`);
    expect(forked.screen).toMatch(/\r\x1b\[2Kforked 7d3f1c2a/);
    const undone = onTerminal(['undo', DEMO_CLAUDE_ID], home.env);
    expect(undone.status, undone.screen).toBe(0);
    for (const step of ['restoring the snapshot', 'rendering the restored copy', 'publishing the restored copy']) expect(undone.screen).toContain(`\r\x1b[2Kundo: ${step}…`);
    expect(undone.screen).toMatch(/\r\x1b\[2Krestored snapshot /);
  });

  it('eval counts the strategies done and clears the bar before the table', async () => {
    home = demoHome();
    const { status, screen } = onTerminal(['eval', DEMO_CLAUDE_ID, '--strategy', 'elide', '--strategy', 'sawtooth'], home.env);
    expect(status, screen).toBe(0);
    expect(screen).toContain('2/2 strategies');
    expect(screen).toMatch(/\r\x1b\[2Kclaude_code 7d3f1c2a/);
  });

  it('eval-study counts the replay rounds of its three arms and clears the bar before the report', async () => {
    home = demoHome();
    const manifest = join(home.root, 'study.json');
    const prepared = await runCli(['eval-study', DEMO_CLAUDE_ID, '--prepare-manifest', manifest], home.env);
    expect(prepared.code, prepared.stderr).toBe(0);
    const { status, screen } = onTerminal(['eval-study', DEMO_CLAUDE_ID, '--manifest', manifest, '--rounds', '2', '--trigger', '1000', '--floor', '0'], home.env);
    expect(status, screen).toBe(0);
    expect(screen).toContain('6/6 rounds');
    expect(screen).toMatch(/\r\x1b\[2K\S/);
  });

  it('rehearse says the client is running, and clears that before its answer', async () => {
    home = demoHome();
    const { status, screen } = onTerminal(['rehearse', DEMO_CLAUDE_ID, '--claude-bin', join(home.root, 'no-such-claude')], home.env);
    expect(status, screen).not.toBe(0);
    expect(screen).toContain('rehearse: resuming a copy with the real client (up to 60 s a run)…');
    expect(screen).toMatch(/\r\x1b\[2K.*no-such-claude/);
  });

  it('vault --verify counts the snapshots it reads back and clears that before its answer; --json shows none', async () => {
    home = demoHome();
    expect((await runCli(['apply', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    const { status, screen } = onTerminal(['vault', '--verify'], home.env);
    expect(status, screen).toBe(0);
    expect(screen).toMatch(/\r\x1b\[2Kverifying snapshot 1 of 2 \([0-9a-f]{16}\): [\d.]+ KiB of [\d.]+ KiB/);
    expect(screen).toContain('verifying snapshot 2 of 2');
    // The listing shows the session's one snapshot; the other read back is the fork's own bytes.
    expect(screen).toMatch(/\r\x1b\[2K2 stored snapshots read back \(1 listed, 1 a fork's retained copy\): 0 damaged/);
    const json = onTerminal(['vault', '--verify', '--json'], home.env);
    expect(json.status, json.screen).toBe(0);
    expect(json.screen).not.toContain('verifying');
  });

  it("a status longer than the terminal is cut to one row: a wrapped one's first rows would stay on the screen", async () => {
    home = demoHome();
    const { screen } = onTerminal(['rehearse', DEMO_CLAUDE_ID, '--baseline', DEMO_CLAUDE_ID, '--timeout', '3600', '--claude-bin', join(home.root, 'no-such-claude')], home.env, 60);
    const drawn = screen.split('\r\x1b[2K').slice(1, -1);
    expect(drawn).toEqual(['rehearse: resuming a copy with the real client, the baseli…']);
  });

  it('piped, none of them prints anything but its answer', async () => {
    home = demoHome();
    const apply = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stderr).toBe('');
    expect(apply.stdout).not.toContain('\r');
    const evaluated = await runCli(['eval', DEMO_CLAUDE_ID, '--strategy', 'elide'], home.env);
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(evaluated.stderr).toBe('');
    const planned = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stderr).toBe('');
  });
});
