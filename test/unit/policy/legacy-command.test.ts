import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runLegacyCommand, type LegacyCommandRequest } from '../../../kernel/policy/legacy-command.js';
import { planSession } from '../../../kernel/policy/plan-pipeline.js';
import { defaultPolicy } from '../../../kernel/policy/defaults.js';
import { estimatedUsage, item, resultLines, toolSession, transcriptOf } from './transcript-builder.js';

const dir = mkdtempSync(join(tmpdir(), 'gob-legacy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TABLE = '[presets.custom-script]';
/** Seconds longer than a test may run: a call that waited on such a sleep fails its test, not just slows it. */
const OUTLIVES_TEST = 600;

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the command to fail');
}

/** A killed process whose new parent does not reap it lingers as a zombie; that is not running. */
function isRunning(pid: number): boolean {
  if (existsSync('/proc/self/stat')) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
const input = { session_id: 'sess-1', provider: 'codex', items: [item(0, 'user', 10)], usage: estimatedUsage() };
const request = (command: string, extra: Partial<LegacyCommandRequest> = {}): LegacyCommandRequest => ({ command, table: TABLE, input, ...extra });

describe('legacy command presets', () => {
  it('passes one JSON object on stdin and reads the edits it prints', async () => {
    // The script answers with the line indexes of the items it was given, proving it read stdin.
    const script = join(dir, 'echo-lines.mjs');
    writeFileSync(
      script,
      `let text = ''; process.stdin.on('data', (c) => (text += c)); process.stdin.on('end', () => {
         const req = JSON.parse(text);
         const keys = Object.keys(req).sort().join(',');
         process.stdout.write(JSON.stringify({ edits: [{ op: 'elide', line_indexes: req.items.map((i) => i.line_index), stub_template: keys + ':' + req.session_id }] }));
       });`,
    );
    const edits = await runLegacyCommand(request(`node ${JSON.stringify(script)}`));
    expect(edits).toEqual([{ op: 'elide', line_indexes: [0], stub_template: 'items,provider,session_id,usage:sess-1' }]);
  });

  it('accepts a command that ignores its input', async () => {
    const big = { ...input, items: Array.from({ length: 20_000 }, (_, i) => item(i, 'tool_result', 100, { elidable_bytes: 400, label: 'Bash' })) };
    await expect(runLegacyCommand({ command: `printf '{"edits":[]}'`, table: TABLE, input: big })).resolves.toEqual([]);
  });

  it('stops a command at the deadline, with its whole process group', async () => {
    const pidFile = join(dir, 'background.pid');
    await expect(runLegacyCommand(request(`sleep ${OUTLIVES_TEST} & echo $! > ${JSON.stringify(pidFile)}; wait`, { timeoutMs: 400 }))).rejects.toMatchObject({
      code: 'legacy_command_failed',
      message: `legacy command from ${TABLE} did not finish within 400 ms and was stopped`,
    });
    const backgroundPid = Number(readFileSync(pidFile, 'utf8').trim());
    await new Promise((r) => setTimeout(r, 100));
    expect(isRunning(backgroundPid)).toBe(false);
  });

  it('is done when the command exits, though something it left in the background still holds its stdout', async () => {
    const pidFile = join(dir, 'left-behind.pid');
    const edits = await runLegacyCommand(
      request(`cat >/dev/null; sleep ${OUTLIVES_TEST} & echo $! > ${JSON.stringify(pidFile)}; echo '{"edits":[{"op":"elide","line_indexes":[0],"stub_template":"[x]"}]}'`, { timeoutMs: 10_000 }),
    );
    expect(edits).toEqual([{ op: 'elide', line_indexes: [0], stub_template: '[x]' }]);
    const backgroundPid = Number(readFileSync(pidFile, 'utf8').trim());
    await new Promise((r) => setTimeout(r, 100));
    expect(isRunning(backgroundPid)).toBe(false);
  });

  it('says so when the answer was to come from what the command left running', async () => {
    await expect(runLegacyCommand(request(`cat >/dev/null; (sleep 1; echo '{"edits":[]}') &`, { timeoutMs: 10_000 }))).rejects.toMatchObject({
      code: 'legacy_command_failed',
      message: `legacy command from ${TABLE} exited before printing a complete answer and left processes running, which were stopped: a command is done when its own process exits, so print the answer before it does`,
    });
  });

  it('quotes what a command that left processes running printed, and blames them only for output that is not JSON', async () => {
    const traceback = await failure(runLegacyCommand(request(`cat >/dev/null; sleep 30 & echo 'Traceback: no module named foo'`, { timeoutMs: 10_000 })));
    expect(traceback.message).toBe(
      `legacy command from ${TABLE} exited before printing a complete answer (it printed 31 bytes, beginning "Traceback: no module named foo\\n") and left processes running, which were stopped: a command is done when its own process exits, so print the answer before it does`,
    );
    // A whole JSON answer of the wrong shape came from the command itself, not from what it left behind.
    const shape = await failure(runLegacyCommand(request(`cat >/dev/null; sleep 30 & echo '{"plan":[]}'`, { timeoutMs: 10_000 })));
    expect(shape.message).toBe(`legacy command from ${TABLE} must print one JSON object of the form {"edits": [...]}`);
  });

  it('is not held past the deadline by a process that left its group and keeps stdout open', async () => {
    const pidFile = join(dir, 'escaped.pid');
    try {
      await expect(runLegacyCommand(request(`setsid sleep ${OUTLIVES_TEST} & echo $! > ${JSON.stringify(pidFile)}; sleep ${OUTLIVES_TEST}`, { timeoutMs: 400 }))).rejects.toMatchObject({
        message: `legacy command from ${TABLE} did not finish within 400 ms and was stopped`,
      });
      // After its own process exits, too. The script exits only once the escapee has left the group
      // (it writes its pid after setsid), so the group's kill cannot take it first on a loaded
      // machine; it is then named as what holds the output.
      const second = JSON.stringify(`${pidFile}.2`);
      await expect(runLegacyCommand(request(`setsid sh -c 'echo $$ > ${second}; exec sleep ${OUTLIVES_TEST}' & while [ ! -s ${second} ]; do sleep 0.01; done`, { timeoutMs: 10_000 }))).rejects.toMatchObject({
        message: expect.stringContaining('a process it started outside its process group (setsid?) held its output open; it was stopped'),
      });
      // Both escapees are gone: they held the output, so they were found and stopped. A SIGKILL is
      // delivered when the killed process is next scheduled, which on a loaded machine is not at once.
      for (const file of [pidFile, `${pidFile}.2`]) {
        await vi.waitFor(() => expect(alive(Number(readFileSync(file, 'utf8').trim())), file).toBe(false), { timeout: 3_000, interval: 25 });
      }
    } finally {
      for (const file of [pidFile, `${pidFile}.2`]) {
        if (existsSync(file)) process.kill(Number(readFileSync(file, 'utf8').trim()), 'SIGKILL');
      }
    }
  });

  it('stops a command that prints more than the cap', async () => {
    await expect(runLegacyCommand(request('yes', { maxOutputBytes: 1000 }))).rejects.toMatchObject({
      message: `legacy command from ${TABLE} printed more than 1000 bytes and was stopped`,
    });
  });

  it('reports a non-zero exit', async () => {
    await expect(runLegacyCommand(request('cat >/dev/null; exit 3'))).rejects.toMatchObject({ message: `legacy command from ${TABLE} exited with status 3` });
  });

  it('says what a failing command last wrote to stderr, so its author sees why', async () => {
    const error = await failure(runLegacyCommand(request(`cat >/dev/null; echo 'Traceback (most recent call last):' >&2; echo 'ModuleNotFoundError: No module named foo' >&2; exit 3`)));
    expect(error.message).toBe(`legacy command from ${TABLE} exited with status 3 (stderr: Traceback (most recent call last): | ModuleNotFoundError: No module named foo)`);
    expect(error).toMatchObject({ code: 'legacy_command_failed', details: { table: TABLE, exit_code: 3, stderr_tail: 'Traceback (most recent call last): | ModuleNotFoundError: No module named foo' } });
  });

  it('quotes how output that is not JSON began, escaped, with a stderr line after it', async () => {
    const error = await failure(runLegacyCommand(request(`echo 'loading model'; printf 'warn: \\033[31mred\\n' >&2; echo '{"edits":[]}'`)));
    expect(error.message).toBe(`legacy command from ${TABLE} did not print valid JSON (27 bytes, beginning "loading model\\n{\\"edits\\":[]}\\n") (stderr: warn:  [31mred)`);
    const long = await failure(runLegacyCommand(request(`printf '%0200d' 0`)));
    expect(long.message).toBe(`legacy command from ${TABLE} did not print valid JSON (200 bytes, beginning "${'0'.repeat(80)}"…)`);
  });

  it('a command that writes stderr from a process outside its group still ends at its own exit', async () => {
    const error = await failure(runLegacyCommand(request(`(setsid sh -c 'sleep ${OUTLIVES_TEST}' 2>&2 &); echo nope`)));
    // Which of the three it meets first depends on timing; each names the command and stops it.
    expect(error.message).toMatch(/did not print valid JSON|held its output open|left processes running, which were stopped/);
  });

  it.each([
    ['an array', `echo '[]'`, 'must print one JSON object of the form {"edits": [...]}'],
    ['an object without edits', `echo '{"plan":[]}'`, 'must print one JSON object of the form {"edits": [...]}'],
    ['an unknown edit', `echo '{"edits":[{"op":"rewrite","line_indexes":[1]}]}'`, "printed edit 0 (op 'rewrite'), which is not a valid"],
    ['an edit with an extra field', `echo '{"edits":[{"op":"elide","line_indexes":[1],"stub_template":"x","why":"y"}]}'`, "printed edit 0 (op 'elide'), which is not a valid elide, inject_digest, provider_compact or cache_edit edit (at /: must NOT have additional properties (why))"],
    ['an edit with a negative line index', `echo '{"edits":[{"op":"elide","line_indexes":[3,-1],"stub_template":"x"}]}'`, "printed edit 0 (op 'elide'), which is not a valid elide, inject_digest, provider_compact or cache_edit edit (at /line_indexes/1: must be >= 0)"],
    ['an elide without its stub', `echo '{"edits":[{"op":"elide","line_indexes":[1]}]}'`, "(at /: must have required property 'stub_template')"],
  ])('rejects %s', async (_name, command, fragment) => {
    const error = await failure(runLegacyCommand(request(command)));
    expect(error.message).toContain(`legacy command from ${TABLE} `);
    expect(error.message).toContain(fragment);
  });

  it('puts its edits through the same validation as any strategy', async () => {
    const items = toolSession(20, 4000);
    const newest = resultLines(items).at(-1);
    const outcome = planSession({
      transcript: transcriptOf(items),
      config: {
        values: { ...defaultPolicy(), trigger_tokens: 10_000, floor_tokens: 1_000 },
        external: { kind: 'legacy_command', command: `cat >/dev/null; echo '{"edits":[{"op":"elide","line_indexes":[${newest}],"stub_template":"x"}]}'`, table: TABLE },
      },
      active: false,
      runStrategy: async () => {
        throw new Error('a legacy preset must not reach the strategy runner');
      },
    });
    await expect(outcome).rejects.toMatchObject({ code: 'protected_or_non_elidable' });
  });

  it('produces a preset plan end to end', async () => {
    const items = toolSession(20, 4000);
    const stale = resultLines(items).slice(0, 10);
    const before = items.reduce((sum, i) => sum + i.est_tokens, 0);
    const outcome = await planSession({
      transcript: transcriptOf(items),
      config: {
        values: { ...defaultPolicy(), strategy: 'custom-script', trigger_tokens: 10_000, floor_tokens: 1_000 },
        external: { kind: 'legacy_command', command: `cat >/dev/null; echo '{"edits":[{"op":"elide","line_indexes":${JSON.stringify(stale)},"stub_template":"[gone {bytes}]"}]}'`, table: TABLE },
      },
      active: false,
      runStrategy: async () => {
        throw new Error('unreachable');
      },
    });
    expect(outcome).toMatchObject({ status: 'plan', plan: { strategy: 'preset:custom-script', context_tokens_after: before - 10 * 976 } });
  });
});

/** Whether `pid` still runs (a zombie no parent has reaped yet counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
