/**
 * The host drops a host/log notification it cannot read (there is no one to answer), so a Python
 * plugin that logs at a level the protocol does not have would lose the line without a word. The
 * SDK refuses such a level where the handler calls it, and the author sees the error answer.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const sdkDir = join(import.meta.dirname, '..', '..', '..', 'sdk', 'python');

const PLUGIN = `
import sys
from gobstopper_sdk import Plugin
plugin = Plugin("logs", "0.1.0")

@plugin.strategy("logs", description="logs", kind="file")
def propose(params, ctx):
    ctx.log(params["level"], "a line")
    ctx.progress(1, 2, "p" * 300)
    return {"edits": [], "rationale": "logged"}

plugin.serve()
`;

function propose(level: string): Array<Record<string, any>> {
  const lines = [
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocol_versions: [1], host: { name: 'gobstopper', version: '0.1.0' } } },
    { jsonrpc: '2.0', id: 1, method: 'strategy/propose', params: { strategy_id: 'logs', level } },
    { jsonrpc: '2.0', id: 2, method: 'shutdown' },
    { jsonrpc: '2.0', method: 'exit' },
  ];
  const run = spawnSync('python3', ['-B', '-c', PLUGIN], { cwd: sdkDir, input: lines.map((l) => JSON.stringify(l)).join('\n') + '\n', encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim().split('\n').map((line) => JSON.parse(line));
}

describe('the Python SDK ctx.log and ctx.progress', () => {
  it('refuse a level the protocol does not have, in an error answer naming the levels and the line', () => {
    const answer = propose('warning').find((m) => m.id === 1)!;
    expect(answer.result).toBeUndefined();
    expect(answer.error.code).toBe(-32603);
    expect(answer.error.message).toMatch(/^ValueError: log level must be one of debug, info, warn, error, not 'warning' \(at <string>:\d+ in propose\)$/);
  });

  it('send a known level as it is, and a progress message cut to what the host takes', () => {
    const messages = propose('warn');
    expect(messages.find((m) => m.method === 'host/log')!.params).toEqual({ level: 'warn', message: 'a line' });
    expect(messages.find((m) => m.method === '$/progress')!.params.message).toHaveLength(256);
    expect(messages.find((m) => m.id === 1)!.result).toEqual({ edits: [], rationale: 'logged' });
  });
});
