import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { MAX_PARAMS_SCHEMA_DEPTH } from '../../kernel/plugins/host/handshake.js';
import { startBundle, type RunningBundle } from '../../kernel/plugins/host/running-bundle.js';
import { PluginFailure } from '../../kernel/plugins/protocol/plugin-failure.js';
import { fixturePluginBundle, fixturesDir, tempDir, writeBundle, type ManifestFields, type TempDir } from '../fixtures/bundles/build-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';
import { StrategyPropose } from '../../sdk/protocol.js';

/** Gone, or a zombie waiting for init to reap it (it no longer runs). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

/** The misbehaving strategy, run by own-session.mjs in a session of its own (as `setsid -w` would). */
function ownSessionBundle(dir: string, args: string[], manifest: ManifestFields = {}): string {
  const read = (name: string) => readFileSync(join(fixturesDir, 'plugins', name));
  const files = { 'own-session.mjs': read('own-session.mjs'), 'misbehaving-strategy.mjs': read('misbehaving-strategy.mjs') };
  return writeBundle(dir, { files, manifest: { executable: 'own-session.mjs', args, ...manifest } });
}

const pidAfter = (label: string, text: string) => Number(new RegExp(`${label} (\\d+)`).exec(text)?.[1]);

async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

describe('plugin processes that misbehave', () => {
  let dir: TempDir | undefined;
  let running: RunningBundle | undefined;
  afterEach(async () => {
    await running?.channel.close().catch(() => undefined);
    running = undefined;
    dir?.cleanup();
  });

  async function start(mode: string, manifest: ManifestFields = {}, hostEnv?: NodeJS.ProcessEnv): Promise<RunningBundle> {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: [mode], limits: { timeout_ms: 600 }, ...manifest });
    running = await startBundle(admitBundle(root), { hostVersion: '0.1.0', cancelGraceMs: 200, hostEnv });
    return running;
  }

  const propose = (r: RunningBundle) => r.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(3)));

  async function failureOf(promise: Promise<unknown>): Promise<PluginFailure> {
    const error = await promise.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(PluginFailure);
    return error as PluginFailure;
  }

  it('never answers: cancelled at the deadline, then the whole process group is killed', async () => {
    const r = await start('hang');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_timeout');
    expect(failure.message).toMatch(/^plugin fixture@1\.0\.0 timed out after 600 ms during strategy\/propose/);
    const grandchild = Number(/grandchild (\d+)/.exec(failure.stderrTail)?.[1]);
    expect(grandchild).toBeGreaterThan(0);
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
    expect(await eventually(() => isGone(grandchild))).toBe(true);
    expect(r.channel.alive).toBe(false);
  });

  it('answers the cancellation in time: the call fails as a timeout but the process stays warm', async () => {
    const r = await start('cancellable');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_timeout');
    expect(r.channel.alive).toBe(true);
    expect(isGone(r.pid!)).toBe(false);
  });

  it('leaves behind a program in a session of its own holding its pipes: gobstopper ends at once, and so does the program', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['escaped-child'] });
    const started = Date.now();
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'escaped-child-driver.ts'), root], { encoding: 'utf8', timeout: 30_000 });
    const escaped = pidAfter('escaped', out);
    expect(escaped).toBeGreaterThan(0);
    try {
      // The program would hold the pipes for a minute; the command was not kept waiting for it.
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(await eventually(() => isGone(escaped))).toBe(true);
    } finally {
      if (!isGone(escaped)) process.kill(escaped, 'SIGKILL');
    }
  });

  it('stops in the middle of its answer: the timeout says how much of a line it printed and how it began', async () => {
    const r = await start('half-line');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_timeout');
    expect(failure.message).toMatch(/timed out after 600 ms during strategy\/propose; it printed \d+ bytes of a line it never ended: "\{\\"jsonrpc\\":\\"2\.0\\",\\"id\\":\d+,\\"resu"/);
  });

  it('runs itself again in a session of its own and hangs: the process that answered, and what it started, are killed too', async () => {
    dir = tempDir();
    const root = ownSessionBundle(join(dir.path, 'bundle'), ['hang'], { limits: { timeout_ms: 600 } });
    running = await startBundle(admitBundle(root), { hostVersion: '0.1.0', cancelGraceMs: 200 });
    const failure = await failureOf(propose(running));
    expect(failure.code).toBe('plugin_timeout');
    expect(failure.message).toMatch(/^plugin fixture@1\.0\.0 timed out after 600 ms during strategy\/propose/);
    const inner = pidAfter('session', failure.stderrTail);
    const grandchild = pidAfter('grandchild', failure.stderrTail);
    try {
      expect(inner).toBeGreaterThan(0);
      expect(grandchild).toBeGreaterThan(0);
      expect(await eventually(() => isGone(running!.pid!))).toBe(true);
      expect(await eventually(() => isGone(inner))).toBe(true);
      expect(await eventually(() => isGone(grandchild))).toBe(true);
    } finally {
      for (const pid of [inner, grandchild]) if (pid > 0 && !isGone(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('runs itself again in a session of its own and gobstopper is interrupted mid-call: nothing of it is left', async () => {
    dir = tempDir();
    const log = join(dir.path, 'log');
    writeFileSync(log, '');
    const root = ownSessionBundle(join(dir.path, 'bundle'), ['hang', log], { limits: { timeout_ms: 60_000 } });
    const driver = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'interrupted-driver.ts'), root, log], { encoding: 'utf8', timeout: 30_000 });
    expect(driver.status).toBe(143);
    const text = readFileSync(log, 'utf8');
    const inner = pidAfter('session', text);
    const grandchild = pidAfter('grandchild', text);
    try {
      expect(inner).toBeGreaterThan(0);
      expect(grandchild).toBeGreaterThan(0);
      expect(await eventually(() => isGone(inner))).toBe(true);
      expect(await eventually(() => isGone(grandchild))).toBe(true);
    } finally {
      for (const pid of [inner, grandchild]) if (pid > 0 && !isGone(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('exits mid-call: the error says how, with its stderr', async () => {
    const r = await start('exit');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_exited');
    expect(failure.message).toContain('plugin fixture@1.0.0 exited with code 3 during strategy/propose');
    expect(failure.message).toContain('dying on purpose');
  });

  it('ends cleanly before answering initialize: the error asks whether it starts serving', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['never-serves'], limits: { timeout_ms: 600 } });
    const failure = await failureOf(startBundle(admitBundle(root), { hostVersion: '0.1.0' }));
    expect(failure.code).toBe('plugin_exited');
    expect(failure.message).toContain("plugin fixture@1.0.0 exited with code 0 during initialize before answering it: does the program start serving (the SDK's serve() called at the end)?");
  });

  it('closes stdout mid-call but keeps running: the error says so, and the process is killed', async () => {
    const r = await start('close-stdout', { limits: { timeout_ms: 60_000 } });
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_exited');
    expect(failure.message).toContain('plugin fixture@1.0.0 closed its output during strategy/propose');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('prints a line that is not JSON', async () => {
    const r = await start('nonjson');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_not_json');
    expect(failure.message).toContain('plugin fixture@1.0.0 printed a line that is not JSON');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('prints JSON that is not JSON-RPC', async () => {
    const r = await start('notjsonrpc');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_not_jsonrpc');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('floods stdout past limits.max_output_bytes', async () => {
    const r = await start('flood', { limits: { timeout_ms: 5000, max_output_bytes: 1024 * 1024 } });
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_output_overflow');
    expect(failure.message).toContain('printed a message larger than 1048576 bytes');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('sends notifications without end: refused at the count limit, not left to run to its deadline', async () => {
    // A deadline far away: a timeout would fail the call as plugin_timeout, not as this overflow.
    const r = await start('notify-forever', { limits: { timeout_ms: 60_000 } });
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_output_overflow');
    expect(failure.message).toContain('sent more than 10000 notifications without an answer during strategy/propose');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('answers with a result that violates the schema', async () => {
    const r = await start('badresult');
    const failure = await failureOf(propose(r));
    expect(failure.code).toBe('plugin_schema_violation');
    expect(failure.message).toContain('plugin fixture@1.0.0 answered strategy/propose with a result that violates the schema at /edits/0/op');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('asks for content without the read_content capability', async () => {
    const r = await start('readcontent');
    const failure = await failureOf(r.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(3)), { readItems: () => ({ items: [], content_trust: 'untrusted_archived_data' }) }));
    expect(failure.code).toBe('capability_denied');
    expect(failure.message).toContain('without the read_content capability');
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('sees only the environment variables its manifest declares, and runs in its bundle root', async () => {
    const r = await start('env', { environment: ['GOB_TEST_VISIBLE', 'GOB_TEST_UNSET'] }, { ...process.env, GOB_TEST_VISIBLE: 'yes', GOB_TEST_HIDDEN: 'no' });
    const result = (await propose(r)) as { rationale: string };
    const seen = JSON.parse(result.rationale) as { env: string[]; cwd: string };
    expect(seen.env).toEqual(['GOB_TEST_VISIBLE']);
    expect(seen.cwd).toBe(realpathSync(join(dir!.path, 'bundle')));
  });

  it('a host request with no callback gets a clear protocol error; with one it is answered', async () => {
    const r = await start('score');
    const without = (await propose(r)) as { rationale: string };
    expect(JSON.parse(without.rationale)).toMatchObject({ code: -32005, message: 'host/score is not available during strategy/propose' });
    const withCallback = (await r.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(3)), {
      score: (p) => ({ scorer_id: 'test', scores: p.candidates.map((line_index) => ({ line_index, keep_probability: 0.5 })) }),
    })) as { rationale: string };
    expect(JSON.parse(withCallback.rationale)).toEqual({ scorer_id: 'test', scores: [{ line_index: 3, keep_probability: 0.5 }, { line_index: 7, keep_probability: 0.5 }] });
  });

  it('close() shuts the plugin down and leaves nothing of its process group', async () => {
    const r = await start('ok');
    expect(((await propose(r)) as { rationale: string }).rationale).toBe('ok');
    await r.channel.close();
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
    expect(r.channel.alive).toBe(false);
    await expect(propose(r)).rejects.toMatchObject({ code: 'plugin_closed' });
  });

  it('a plugin that ignores shutdown costs close() about a second, then its group is killed', async () => {
    const r = await start('deaf', { limits: { timeout_ms: 60_000 } });
    const started = Date.now();
    await r.channel.close();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(4_000);
    expect(await eventually(() => isGone(r.pid!))).toBe(true);
  });

  it('lies about its id in initialize: the handshake fails and nothing keeps running', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['wrong-id'] });
    const failure = await failureOf(startBundle(admitBundle(root), { hostVersion: '0.1.0' }));
    expect(failure.code).toBe('plugin_handshake_failed');
    expect(failure.message).toContain('it says its id is someone-else, the manifest says fixture');
  });

  it('serves a strategy its manifest does not declare: the handshake fails', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['undeclared-strategy'] });
    const failure = await failureOf(startBundle(admitBundle(root), { hostVersion: '0.1.0' }));
    expect(failure.code).toBe('plugin_handshake_failed');
    expect(failure.message).toContain('not_in_manifest');
  });

  it("an exec script whose #! interpreter is missing is said to be missing its interpreter, not to be missing itself", async () => {
    dir = tempDir();
    const cases = [
      { script: '#!/nonexistent/interp\necho hi\n', why: 'its first line names the interpreter /nonexistent/interp, which is not there' },
      { script: '#!/bin/sh\r\necho hi\r\n', why: 'its first line ends in a carriage return (Windows line endings), so the interpreter it names is "/bin/sh\\r", which is not there' },
    ];
    for (const [i, { script, why }] of cases.entries()) {
      const root = writeBundle(join(dir.path, `exec-${i}`), { files: { 'run.sh': script }, executable: ['run.sh'], manifest: { runtime: 'exec', executable: 'run.sh' } });
      const failure = await failureOf(startBundle(admitBundle(root), { hostVersion: '0.1.0' }));
      expect(failure.code).toBe('plugin_spawn_failed');
      expect(failure.message).toBe(`plugin fixture@1.0.0 could not be started (${join(realpathSync(root), 'run.sh')}: ${why})`);
    }
  });

  it('offers one strategy id twice, as two kinds: the handshake fails naming it, instead of the host using one and inspect showing both', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['offered-twice'] });
    const failure = await failureOf(startBundle(admitBundle(root), { hostVersion: '0.1.0' }));
    expect(failure.code).toBe('plugin_handshake_failed');
    expect(failure.message).toBe('plugin fixture@1.0.0 failed the initialize handshake: it offers strategy fixture_strategy twice');
  });

  it('declares a params_schema nested thousands deep: the handshake fails naming it, instead of a bare stack overflow when the schema is used', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['deep-params-schema'] });
    const failure = await failureOf(startBundle(admitBundle(root), { hostVersion: '0.1.0' }));
    expect(failure.code).toBe('plugin_handshake_failed');
    expect(failure.message).toContain(`the params_schema of strategy fixture_strategy nests more than ${MAX_PARAMS_SCHEMA_DEPTH} levels deep`);
  });

  it('keeps only a bounded tail of stderr and shows its last lines in the error', async () => {
    dir = tempDir();
    const root = fixturePluginBundle(join(dir.path, 'bundle'), 'stderr-noise.mjs', { limits: { timeout_ms: 5000, max_stderr_bytes: 4096 } });
    const spawned = await startBundle(admitBundle(root), { hostVersion: '0.1.0' });
    running = spawned;
    const failure = await failureOf(propose(spawned));
    expect(failure.code).toBe('plugin_not_json');
    expect(failure.stderrTail).toContain('last words before failing');
    expect(failure.stderrTail.length).toBeLessThanOrEqual(400);
  });
});
