/**
 * Interrupting gobstopper (Ctrl-C, a service manager's SIGTERM) while a plugin works: plugins run
 * detached in their own process groups, so the terminal's signal never reaches them; the kernel
 * must take them down on its way out.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fixturePluginBundle } from '../fixtures/bundles/build-bundle.js';
import { binPath, runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome, listFiles, sha256File } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => home?.cleanup());

/** Pids of processes whose command line mentions `needle`. */
function processesWith(needle: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe.skipIf(!existsSync('/proc'))('an interrupted command takes its plugins down', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while a strategy hangs: exit %i and no plugin process left', async (signal, status) => {
    home = demoHome();
    const bundle = fixturePluginBundle(join(home.root, `hanging-${signal}`), 'misbehaving-strategy.mjs', { args: ['hang'], id: 'fixture', limits: { timeout_ms: 60_000 } });
    const env = { PATH: process.env.PATH ?? '', ...home.env };
    expect(spawnSync(process.execPath, [binPath, 'plugin', 'add', bundle], { env }).status).toBe(0);
    const installed = join(home.dataHome, 'gobstopper', 'plugins', 'fixture');
    const child = spawn(process.execPath, [binPath, 'plan', DEMO_CLAUDE_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let done = false;
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        done = true;
        resolve(code);
      }),
    );
    expect(await until(() => done || processesWith(installed).length > 0, 60_000), 'the plugin never started').toBe(true);
    expect(done, `the command ended before it was interrupted: ${stderr}`).toBe(false);
    child.kill(signal);
    expect(await exited).toBe(status);
    // Said in one line, as every other ending is.
    expect(stderr).toBe(`gobstopper: interrupted by ${signal}\n`);
    expect(await until(() => processesWith(installed).length === 0, 5_000)).toBe(true);
  });

  it('a bench stopped by a signal to its own process (not its group) leaves no worker or plugin behind', async () => {
    home = demoHome();
    const bundle = fixturePluginBundle(join(home.root, 'hanging-bench'), 'misbehaving-strategy.mjs', { args: ['hang'], id: 'fixture', limits: { timeout_ms: 60_000 } });
    const env = { PATH: process.env.PATH ?? '', ...home.env };
    expect(spawnSync(process.execPath, [binPath, 'plugin', 'add', bundle], { env }).status).toBe(0);
    const installed = join(home.dataHome, 'gobstopper', 'plugins', 'fixture');
    // A supervisor stops the bench alone: its workers are not in the signal's way.
    const child = spawn(process.execPath, [binPath, 'bench', '--all', '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], { env, stdio: 'ignore', detached: true });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    expect(await until(() => processesWith(installed).length > 0, 60_000), 'the plugin never started').toBe(true);
    const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
    const workers = processesWith('parallel-worker').filter((pid) => parentOf(pid) === child.pid);
    expect(workers.length).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    const gone = (pid: number) => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').startsWith('Z');
    expect(await until(() => workers.every(gone) && processesWith(installed).length === 0, 10_000), 'a worker or its plugin outlived the bench').toBe(true);
  });

  it('an interrupted plan takes its legacy command down, with what the command started', async () => {
    const pidFile = join(tmpdir(), `gob-legacy-${process.pid}-${Date.now()}`);
    const script = `echo $$ > ${pidFile}; sleep 300; echo '{"edits":[]}'`;
    home = demoHome(`[policy]\ntrigger_tokens = 1000\nfloor_tokens = 0\n\n[presets.slow]\ncommand = ${JSON.stringify(script)}\ntrusted_legacy_command = true\n`);
    const env = { PATH: process.env.PATH ?? '', ...home.env };
    const child = spawn(process.execPath, [binPath, 'plan', DEMO_CLAUDE_ID, '--preset', 'slow'], { env, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 60_000), 'the command never started').toBe(true);
      const group = Number(readFileSync(pidFile, 'utf8').trim());
      const inGroup = () =>
        readdirSync('/proc').filter((name) => {
          try {
            return /^\d+$/.test(name) && Number(readFileSync(`/proc/${name}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[2]) === group;
          } catch {
            return false;
          }
        });
      expect(await until(() => inGroup().length >= 2, 10_000), 'the command and its sleep').toBe(true);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(await until(() => inGroup().length === 0, 5_000), 'the command or its sleep outlived the plan').toBe(true);
    } finally {
      rmSync(pidFile, { force: true });
    }
  });

  /** An eval whose strategy hangs, running with its own temporary dir, once the plugin has started. */
  async function hangingEval(name: string) {
    home = demoHome();
    const bundle = fixturePluginBundle(join(home.root, name), 'misbehaving-strategy.mjs', { args: ['hang'], id: 'fixture', limits: { timeout_ms: 60_000 } });
    const tmp = join(home.root, 'tmp');
    mkdirSync(tmp);
    const env = { PATH: process.env.PATH ?? '', ...home.env, TMPDIR: tmp };
    expect(spawnSync(process.execPath, [binPath, 'plugin', 'add', bundle], { env }).status).toBe(0);
    const installed = join(home.dataHome, 'gobstopper', 'plugins', 'fixture');
    const child = spawn(process.execPath, [binPath, 'eval', DEMO_CLAUDE_ID, '--strategy', 'fixture_strategy', '--trigger', '1000', '--floor', '0'], { env, stdio: 'ignore' });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    expect(await until(() => processesWith(installed).length > 0, 60_000), 'the plugin never started').toBe(true);
    return { child, exited, tmp, env, installed };
  }

  it('an interrupted eval leaves no private copy of the session in the temporary directory', async () => {
    const { child, exited, tmp } = await hangingEval('hanging-eval');
    expect(readdirSync(tmp).some((n) => n.startsWith('gobstopper-eval-'))).toBe(true);
    child.kill('SIGINT');
    expect((await exited).code).toBe(130);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('the copy an eval killed outright left behind is removed by the next eval', async () => {
    const { child, exited, tmp, env, installed } = await hangingEval('hanging-killed');
    child.kill('SIGKILL');
    expect((await exited).signal).toBe('SIGKILL');
    // SIGKILL runs no exit hook: the copy stays, with the pid of its dead owner in its name.
    const left = readdirSync(tmp).filter((n) => n.startsWith(`gobstopper-eval-${child.pid}-`));
    expect(left).toHaveLength(1);
    // Someone else's directory of that shape is no workspace of a dead run: it has a live pid.
    mkdirSync(join(tmp, `gobstopper-eval-${process.pid}-AbCdEf`));
    await until(() => processesWith(installed).length === 0, 10_000);
    const next = spawnSync(process.execPath, [binPath, 'eval', DEMO_CLAUDE_ID, '--strategy', 'elide', '--trigger', '1000', '--floor', '0', '--json'], { env });
    expect(next.status).toBe(0);
    expect(readdirSync(tmp)).toEqual([`gobstopper-eval-${process.pid}-AbCdEf`]);
  });
});

describe('an interrupted apply leaves nothing half-made behind', () => {
  const stagingOf = (h: NonNullable<typeof home>) => join(h.dataHome, 'gobstopper', 'staging');
  const vaultTemps = (h: NonNullable<typeof home>) =>
    ['chunks', 'manifests', 'operations'].flatMap((d) => {
      const dir = join(h.dataHome, 'gobstopper', 'vault', d);
      return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('.tmp-')) : [];
    });
  // A lock or a custody hold left behind would make the next run wait for a process that is gone.
  const locksAndHolds = (h: NonNullable<typeof home>) => {
    const vault = join(h.dataHome, 'gobstopper', 'vault');
    const custody = join(vault, 'custody');
    return [
      ...(existsSync(custody) ? readdirSync(custody) : []),
      ...['', 'operations'].flatMap((d) => (existsSync(join(vault, d)) ? readdirSync(join(vault, d)).filter((n) => n.endsWith('.lock')) : [])),
    ];
  };

  it.each(['staging.after_create', 'vault.after_read'])('a stop signal at %s removes the staged fork and every temp file, and the next apply completes', async (step) => {
    home = demoHome();
    const source = sha256File(home.claudeSession);
    const stopped = await runCli(['apply', DEMO_CLAUDE_ID, '--json'], home.env, { extraEnv: { GOBSTOPPER_FAULT: `${step}:term` } });
    expect(stopped.code).toBe(143);
    expect(JSON.parse(stopped.stdout).error).toMatchObject({ code: 'interrupted', details: { signal: 'SIGTERM' } });
    expect(existsSync(stagingOf(home)) ? readdirSync(stagingOf(home)) : []).toEqual([]);
    expect(vaultTemps(home)).toEqual([]);
    expect(locksAndHolds(home)).toEqual([]);
    expect(listFiles(home.claudeDir)).toEqual([home.claudeSession]);
    expect(sha256File(home.claudeSession)).toBe(source);
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(again.json.receipt.completed).toBe(true);
  });

  it.each([
    ['apply', 'publish.after_link'],
    ['undo', 'publish.after_link'],
    ['apply', 'publish.before_link'],
    ['undo', 'publish.before_link'],
  ])('%s stopped at %s says a fork is there exactly when one is', async (command, step) => {
    home = demoHome();
    if (command === 'undo') expect((await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    // Between the link and the command's own word on it, the fork is re-read whole: a stop there
    // must not read as "nothing happened".
    const stopped = await runCli([command, DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: `${step}:term` } });
    expect(stopped.code).toBe(143);
    const forks = listFiles(home.claudeDir).filter((f) => f !== home!.claudeSession);
    expect(forks.length).toBeLessThanOrEqual(1);
    if (step === 'publish.after_link') expect(forks).toHaveLength(1);
    const said = forks.length ? `; ${forks[0]} was already published; run the same command again to finish its record and see how to resume it` : '';
    expect(stopped.stderr.trim()).toBe(`gobstopper: interrupted by SIGTERM${said}`);
    const again = await runJson([command, DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(again.json.receipt.completed).toBe(true);
    if (forks.length) expect(again.json.receipt.path).toBe(forks[0]);
  });

  it('a stop signal after the fork is published says it is there, and the same command finishes it', async () => {
    home = demoHome();
    const stopped = await runCli(['apply', DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'apply.after_publish:term' } });
    expect(stopped.code).toBe(143);
    const forks = listFiles(home.claudeDir).filter((f) => f !== home!.claudeSession);
    expect(forks).toHaveLength(1);
    expect(stopped.stderr.trim()).toBe(`gobstopper: interrupted by SIGTERM; ${forks[0]} was already published; run the same command again to finish its record and see how to resume it`);
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(again.json.receipt).toMatchObject({ completed: true, path: forks[0] });
    expect(listFiles(home.claudeDir).filter((f) => f !== home!.claudeSession)).toEqual(forks);
  });

  it('a stop signal once the fork is published and recorded says how to resume it, since the answer that would have is lost', async () => {
    home = demoHome();
    const stopped = await runCli(['apply', DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'apply.after_complete:term' } });
    expect(stopped.code).toBe(143);
    expect(stopped.stdout).toBe('');
    const forks = listFiles(home.claudeDir).filter((f) => f !== home!.claudeSession);
    expect(forks).toHaveLength(1);
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.json.receipt).toMatchObject({ completed: true, path: forks[0] });
    expect(stopped.stderr.trim()).toBe(`gobstopper: interrupted by SIGTERM; ${forks[0]} was published; resume it with: ${again.json.receipt.resume_command}`);
    const json = await runCli(['apply', DEMO_CODEX_ID, '--json'], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'apply.after_complete:term' } });
    expect(json.code).toBe(143);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'interrupted', details: { done: expect.stringMatching(/ was published; resume it with: codex resume /) } });
  });
});
