import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectLoopbackNamespace, rehearse, resolveClientBin } from '../../../kernel/rehearse/index.js';
import { validateRehearsalReport } from '../../../schemas/generated/validators.js';
import { makeTempHome } from '../../helpers/temp-home.js';
import { writeFakeClient } from './fake-clients.js';
import { fileSha256, treeHash } from './tree-hash.js';
import { LISTING, writeClaudeSession, writeCodexRollout } from './transcripts.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gob-rehearse-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether `pid` still runs; a zombie waiting for its reaper has exited. */
function isAlive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function waitDead(pid: number, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

describe('rehearse with a client that replays the copy faithfully', () => {
  it('passes a Claude transcript: accepted, same session, context equal to the prediction', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const before = fileSha256(session.path);
    const report = await rehearse({
      provider: 'claude_code',
      path: session.path,
      sessionId: session.sessionId,
      predicted: session.predicted,
      clientBin: writeFakeClient(dir, 'claude', 'ok'),
      timeoutMs: 20_000,
    });
    expect(report.status).toBe('passed');
    expect(report.ok).toBe(true);
    expect(report.accepted).toBe(true);
    expect(report.resumed_session_id).toBe(session.sessionId);
    expect(report.session_matches).toBe(true);
    expect(report.rebuilt).toMatchObject({ messages: 8, tool_calls: 2, tool_results: 2, unanswered_tool_calls: 0, orphan_tool_results: 0 });
    expect(report.comparison?.equal).toBe(true);
    expect(report.requests).toBe(2);
    expect(report.model_requests).toBe(1);
    expect(report.network).toBe((await detectLoopbackNamespace()).available ? 'netns' : 'loopback');
    expect(report.source_unchanged).toBe(true);
    expect(fileSha256(session.path)).toBe(before);
    expect(validateRehearsalReport(report)).toBe(true);
  });

  it('passes a Codex rollout recorded for the openai provider, pointing that provider at the stub', async () => {
    const session = writeCodexRollout(dir, '019b0000-0000-7000-8000-000000000001');
    const mark = join(dir, 'codex-args.json');
    const report = await rehearse({
      provider: 'codex',
      path: session.path,
      sessionId: session.sessionId,
      predicted: session.predicted,
      clientBin: writeFakeClient(dir, 'codex', 'dump-env', mark),
      timeoutMs: 20_000,
      keepWorkDir: true,
    });
    try {
      expect(report.reason).toMatch(/^accepted; the rebuilt context matches/);
      expect(report.status).toBe('passed');
      expect(report.rebuilt).toMatchObject({ messages: 4, tool_calls: 1, tool_results: 1 });
      const dump = JSON.parse(readFileSync(mark, 'utf8')) as { args: string[]; env: Record<string, string> };
      expect(dump.args.slice(0, 5)).toEqual(['exec', '-c', 'model_provider="openai"', '-c', expect.stringMatching(/^openai_base_url="http:\/\/127\.0\.0\.1:\d+\/v1"$/)]);
      expect(dump.args.slice(-3)).toEqual(['resume', session.sessionId, 'gobstopper rehearsal probe: reply with one short line.']);
      expect(dump.env.OPENAI_API_KEY).toBe('gobstopper-rehearsal-offline-key');
      const config = readFileSync(join(dump.env.CODEX_HOME!, 'config.toml'), 'utf8');
      expect(config).toContain('model_provider = "openai"');
      expect(config).toContain('check_for_update_on_startup = false');
      expect(config).toMatch(/\[analytics\]\nenabled = false/);
      expect(config).toMatch(/plugins = false/);
      expect(config).not.toContain('[model_providers');
      const copy = join(dump.env.CODEX_HOME!, 'sessions', '2026', '01', '02', `rollout-2026-01-02T03-04-05-${session.sessionId}.jsonl`);
      expect(fileSha256(copy)).not.toBe('');
      expect(report.workDir && existsSync(report.workDir)).toBe(true);
    } finally {
      if (report.workDir) rmSync(report.workDir, { recursive: true, force: true });
    }
  });
});

describe('rehearse judges what the client does, not what it says', () => {
  it('reports a silently shortened context as a failure although the client exits 0', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const report = await rehearse({
      provider: 'claude_code',
      path: session.path,
      sessionId: session.sessionId,
      predicted: session.predicted,
      clientBin: writeFakeClient(dir, 'claude', 'drop-history'),
      timeoutMs: 20_000,
    });
    expect(report.accepted).toBe(true);
    expect(report.client.exit_code).toBe(0);
    expect(report.status).toBe('context_mismatch');
    expect(report.ok).toBe(false);
    expect(report.comparison?.verdict).toBe('shorter');
    expect(report.reason).toMatch(/^the client accepted the transcript but rebuilt a shorter context than predicted: tool calls shorter/);
  });

  it('reports an exit 1 without a word as rejected, saying the client gave no reason', async () => {
    const session = writeCodexRollout(dir, '019b0000-0000-7000-8000-000000000002');
    const report = await rehearse({ provider: 'codex', path: session.path, sessionId: session.sessionId, predicted: session.predicted, clientBin: writeFakeClient(dir, 'codex', 'silent-exit-1'), timeoutMs: 20_000 });
    expect(report.status).toBe('rejected');
    expect(report.accepted).toBe(false);
    expect(report.rebuilt).toBeNull();
    expect(report.comparison).toBeNull();
    expect(report.reason).toBe('the client exited 1 without sending a model request and gave no reason');
    expect(validateRehearsalReport(report)).toBe(true);
  });

  it("shows the client's own error when it refuses the session", async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const report = await rehearse({ provider: 'claude_code', path: session.path, sessionId: session.sessionId, clientBin: writeFakeClient(dir, 'claude', 'no-conversation'), timeoutMs: 20_000 });
    expect(report.status).toBe('rejected');
    expect(report.client.error_text).toBe(`No conversation found with session ID: ${session.sessionId}`);
    expect(report.reason).toBe(`the client exited 1 without sending a model request: No conversation found with session ID: ${session.sessionId}`);
  });

  it('notices when the client resumed another session', async () => {
    const session = writeCodexRollout(dir, '019b0000-0000-7000-8000-000000000003');
    const report = await rehearse({ provider: 'codex', path: session.path, sessionId: session.sessionId, clientBin: writeFakeClient(dir, 'codex', 'wrong-session'), timeoutMs: 20_000 });
    expect(report.status).toBe('wrong_session');
    expect(report.resumed_session_id).toBe('00000000-0000-4000-8000-000000000000');
    expect(report.session_matches).toBe(false);
  });
});

describe('rehearse bounds and isolates the client', () => {
  it('kills a hanging client and its helpers at the timeout and frees the port', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const mark = join(dir, 'hang-loopback.pid');
    const port = await freePort();
    const started = Date.now();
    const report = await rehearse({
      provider: 'claude_code',
      path: session.path,
      sessionId: session.sessionId,
      clientBin: writeFakeClient(dir, 'claude', 'hang', mark),
      timeoutMs: 1500,
      network: 'loopback',
      stubPort: port,
    });
    const elapsed = Date.now() - started;
    expect(report.status).toBe('timed_out');
    expect(report.client.timed_out).toBe(true);
    expect(report.client.signal).toBe('SIGKILL');
    expect(report.reason).toBe('the client did not finish within 1500 ms and was killed');
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(elapsed).toBeLessThan(10_000);
    const helper = Number(readFileSync(mark, 'utf8'));
    expect(await waitDead(helper)).toBe(true);
    expect(await canBind(port)).toBe(true);
  });

  it('kills a hanging client inside the network namespace too', async (ctx) => {
    const namespace = await detectLoopbackNamespace();
    if (!namespace.available) {
      console.log(`network-namespace rehearsal test skipped: ${namespace.reason}`);
      ctx.skip();
      return;
    }
    const session = writeCodexRollout(dir, '019b0000-0000-7000-8000-000000000004');
    const mark = join(dir, 'hang-netns.pid');
    const report = await rehearse({ provider: 'codex', path: session.path, sessionId: session.sessionId, clientBin: writeFakeClient(dir, 'codex', 'hang', mark), timeoutMs: 1500, network: 'netns' });
    expect(report.status).toBe('timed_out');
    expect(report.network).toBe('netns');
    expect(await waitDead(Number(readFileSync(mark, 'utf8')))).toBe(true);
  });

  it('gives a clear error when the stub port is taken, and changes nothing', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const before = fileSha256(session.path);
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as { port: number }).port;
    try {
      await expect(
        rehearse({ provider: 'claude_code', path: session.path, sessionId: session.sessionId, clientBin: writeFakeClient(dir, 'claude', 'ok'), network: 'loopback', stubPort: port }),
      ).rejects.toMatchObject({ code: 'stub_port_in_use', message: `stub model server: 127.0.0.1:${port} is already in use; choose another port or 0 for a free one` });
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
    expect(fileSha256(session.path)).toBe(before);
  });

  it('passes no credential, proxy or home of the caller to the client, and removes its work directory', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const mark = join(dir, 'claude-env.json');
    const saved = { ...process.env };
    process.env.ANTHROPIC_API_KEY = 'sk-real-secret';
    process.env.HTTPS_PROXY = 'http://proxy.invalid:8080';
    process.env.AWS_SECRET_ACCESS_KEY = 'aws-secret';
    try {
      const report = await rehearse({ provider: 'claude_code', path: session.path, sessionId: session.sessionId, clientBin: writeFakeClient(dir, 'claude', 'dump-env', mark), timeoutMs: 20_000 });
      expect(report.status).toBe('passed');
    } finally {
      process.env = saved;
    }
    const { env, cwd, args } = JSON.parse(readFileSync(mark, 'utf8')) as { env: Record<string, string>; cwd: string; args: string[] };
    expect(env.ANTHROPIC_API_KEY).toBe('gobstopper-rehearsal-offline-key');
    expect(env.HTTPS_PROXY).toBeUndefined();
    expect(env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    expect(env.ANTHROPIC_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const key of ['DISABLE_TELEMETRY', 'DISABLE_ERROR_REPORTING', 'DISABLE_AUTOUPDATER', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC']) expect(env[key]).toBe('1');
    const work = env.HOME!.replace(/\/home$/, '');
    expect(work).toMatch(/gobstopper-rehearse-/);
    for (const key of ['CLAUDE_CONFIG_DIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'TMPDIR']) expect(env[key]!.startsWith(env.HOME!)).toBe(true);
    expect(cwd.startsWith(work)).toBe(true);
    expect(args).toEqual(['-p', '--resume', session.sessionId, '--output-format', 'json', expect.any(String)]);
    expect(existsSync(work)).toBe(false);
  });

  it("leaves the user's homes and the source byte-identical", async () => {
    const home = makeTempHome('gob-user-home-');
    const saved = { ...process.env };
    try {
      Object.assign(process.env, home.env);
      const projectDir = join(home.claudeHome, 'projects', '-home-u-proj');
      mkdirSync(projectDir, { recursive: true });
      const session = writeClaudeSession(projectDir, randomUUID());
      const codexDir = join(home.codexHome, 'sessions', '2026', '01', '02');
      mkdirSync(codexDir, { recursive: true });
      const rollout = writeCodexRollout(codexDir, '019b0000-0000-7000-8000-000000000005');
      const before = treeHash(home.root);
      const a = await rehearse({ provider: 'claude_code', path: session.path, sessionId: session.sessionId, predicted: session.predicted, clientBin: writeFakeClient(dir, 'claude', 'ok'), timeoutMs: 20_000 });
      const b = await rehearse({ provider: 'codex', path: rollout.path, sessionId: rollout.sessionId, predicted: rollout.predicted, clientBin: writeFakeClient(dir, 'codex', 'ok'), timeoutMs: 20_000 });
      expect([a.status, b.status]).toEqual(['passed', 'passed']);
      expect(treeHash(home.root)).toBe(before);
    } finally {
      process.env = saved;
      home.cleanup();
    }
  });
});

describe('rehearse refuses what it cannot run', () => {
  it('says how to get the client when it is missing', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    await expect(rehearse({ provider: 'claude_code', path: session.path, sessionId: session.sessionId, env: { PATH: '' } })).rejects.toMatchObject({
      code: 'client_missing',
      message: 'claude client not found on PATH; install @anthropic-ai/claude-code or pass --claude-bin (or set GOBSTOPPER_CLAUDE_BIN)',
    });
    await expect(rehearse({ provider: 'codex', path: session.path, sessionId: session.sessionId, env: { PATH: '', GOBSTOPPER_CODEX_BIN: join(dir, 'nope') } })).rejects.toMatchObject({
      code: 'client_missing',
      message: `codex client not found at ${join(dir, 'nope')} (from GOBSTOPPER_CODEX_BIN); point --codex-bin or GOBSTOPPER_CODEX_BIN at an installed @openai/codex`,
    });
    await expect(rehearse({ provider: 'codex', path: session.path, sessionId: session.sessionId, clientBin: dir, env: { PATH: '' } })).rejects.toMatchObject({
      code: 'client_missing',
      message: expect.stringMatching(/ is a directory, not the codex client \(from --codex-bin\)/),
    });
    // A file that is there but cannot be run is named as such, not as missing.
    const notExecutable = join(dir, 'claude-not-executable');
    writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    expect(() => resolveClientBin('claude_code', notExecutable, { PATH: '' })).toThrow(
      `${notExecutable} is not executable (mode 0644), so it cannot be run as the claude client (from --claude-bin); point --claude-bin or GOBSTOPPER_CLAUDE_BIN at an installed @anthropic-ai/claude-code`,
    );
  });

  it('finds the client on PATH when nothing names it', async () => {
    const binDir = mkdtempSync(join(dir, 'bin-'));
    const fake = writeFakeClient(dir, 'claude', 'ok');
    writeFileSync(join(binDir, 'claude'), readFileSync(fake), { mode: 0o755 });
    expect(resolveClientBin('claude_code', undefined, { PATH: `relative/dir:${binDir}` })).toBe(join(binDir, 'claude'));
    expect(resolveClientBin('claude_code', undefined, { PATH: binDir, GOBSTOPPER_CLAUDE_BIN: fake })).toBe(fake);
    expect(resolveClientBin('claude_code', fake, { PATH: binDir, GOBSTOPPER_CLAUDE_BIN: join(dir, 'nope') })).toBe(fake);
  });

  it('refuses an unusable session id, path or timeout before starting anything', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const bin = writeFakeClient(dir, 'claude', 'ok');
    await expect(rehearse({ provider: 'claude_code', path: session.path, sessionId: '../escape', clientBin: bin })).rejects.toMatchObject({ code: 'invalid_session_id', exit: 2 });
    await expect(rehearse({ provider: 'claude_code', path: join(dir, 'missing.jsonl'), sessionId: session.sessionId, clientBin: bin })).rejects.toMatchObject({ code: 'source_unreadable' });
    await expect(rehearse({ provider: 'claude_code', path: dir, sessionId: session.sessionId, clientBin: bin })).rejects.toMatchObject({ code: 'source_unreadable' });
    await expect(rehearse({ provider: 'claude_code', path: session.path, sessionId: session.sessionId, clientBin: bin, timeoutMs: 5 })).rejects.toMatchObject({ code: 'invalid_timeout' });
    await expect(rehearse({ provider: 'devin' as never, path: session.path, sessionId: session.sessionId, clientBin: bin })).rejects.toMatchObject({ code: 'unknown_provider' });
  });
});

describe('rehearse against a baseline (a fork judged by what it changed)', () => {
  /** A provider-style prediction: ceil(bytes/4) of each whole stored line, as the provider plugins estimate. */
  function storedLinePrediction(path: string, toolIds: number) {
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    return { items: lines.length, est_tokens: lines.reduce((n, l) => n + Math.ceil(Buffer.byteLength(l) / 4), 0), by_kind: {}, tool_calls: toolIds, tool_results: toolIds, messages: null, units: null };
  }

  /** The source under a new id with the long tool output replaced by a stub, as an elide rewrite does. */
  function elidedFork(source: string, forkId: string, dropFirstLines = 0): string {
    const listing = JSON.stringify(LISTING).slice(1, -1);
    const text = readFileSync(source, 'utf8').replace(listing, '[elided]').replaceAll(/"sessionId":"[^"]+"/g, `"sessionId":"${forkId}"`);
    const path = join(dir, `${forkId}.jsonl`);
    writeFileSync(path, text.split('\n').slice(dropFirstLines).join('\n'));
    return path;
  }

  it('passes an elided fork whose stored-line estimate is far from what the client sends', async () => {
    const source = writeClaudeSession(dir, randomUUID());
    const forkId = randomUUID();
    const fork = elidedFork(source.path, forkId);
    const bin = writeFakeClient(dir, 'claude', 'ok');
    const candidate = storedLinePrediction(fork, 2);
    const direct = await rehearse({ provider: 'claude_code', path: fork, sessionId: forkId, predicted: candidate, clientBin: bin, timeoutMs: 20_000 });
    expect(direct.status).toBe('context_mismatch');
    const report = await rehearse({
      provider: 'claude_code',
      path: fork,
      sessionId: forkId,
      predicted: candidate,
      baseline: { path: source.path, sessionId: source.sessionId, predicted: storedLinePrediction(source.path, 2) },
      clientBin: bin,
      timeoutMs: 20_000,
    });
    expect(report.status, report.reason).toBe('passed');
    expect(report.prediction_basis).toBe('baseline');
    expect(report.baseline?.messages).toBe(8);
    expect(report.predicted?.units).toBe(report.baseline!.units);
    expect(report.rebuilt!.est_tokens).toBeLessThan(report.baseline!.est_tokens - 300);
    expect(validateRehearsalReport(report)).toBe(true);
  });

  it('still catches a fork that rebuilds less than the baseline predicts', async () => {
    const source = writeClaudeSession(dir, randomUUID());
    const forkId = randomUUID();
    const intended = storedLinePrediction(elidedFork(source.path, forkId), 2);
    // The fork that was actually written lost its first turn.
    const fork = elidedFork(source.path, forkId, 4);
    const report = await rehearse({
      provider: 'claude_code',
      path: fork,
      sessionId: forkId,
      predicted: intended,
      baseline: { path: source.path, sessionId: source.sessionId, predicted: storedLinePrediction(source.path, 2) },
      clientBin: writeFakeClient(dir, 'claude', 'ok'),
      timeoutMs: 20_000,
    });
    expect(report.status).toBe('context_mismatch');
    expect(report.comparison?.verdict).toBe('shorter');
    expect(report.comparison?.checks.find((c) => c.name === 'units')).toMatchObject({ outcome: 'shorter', predicted: report.baseline!.units, rebuilt: report.baseline!.units - 5 });
  });

  it('refuses when the baseline itself does not rehearse', async () => {
    const source = writeClaudeSession(dir, randomUUID());
    await expect(
      rehearse({
        provider: 'claude_code',
        path: source.path,
        sessionId: source.sessionId,
        predicted: source.predicted,
        baseline: { path: source.path, sessionId: source.sessionId, predicted: source.predicted },
        clientBin: writeFakeClient(dir, 'claude', 'silent-exit-1'),
        timeoutMs: 20_000,
      }),
    ).rejects.toMatchObject({ code: 'baseline_failed' });
  });
});
