import { PassThrough } from 'node:stream';
import { createMessageConnection } from 'vscode-jsonrpc/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PluginManifest, StrategyProposeResult } from '../../schemas/generated/types.js';
import { stderrPluginLog } from '../../kernel/plugins/host/plugin-log.js';
import { connectBundle, type RunningBundle } from '../../kernel/plugins/host/running-bundle.js';
import type { PluginLogSink } from '../../kernel/plugins/protocol/host-callbacks.js';
import type { ChannelTransport } from '../../kernel/plugins/protocol/plugin-channel.js';
import { PluginFailure } from '../../kernel/plugins/protocol/plugin-failure.js';
import { attachPlugin, invalidInput, type HostContext, type PluginDefinition } from '../../sdk/serve.js';
import { NdjsonMessageReader, NdjsonMessageWriter } from '../../sdk/transport/ndjson.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';
import { inMemoryBundle } from '../helpers/in-memory-bundle.js';
import { StrategyPropose } from '../../sdk/protocol.js';

/** A plugin definition served over in-memory NDJSON streams, with a transport the channel can "kill". */
function inMemory(def: PluginDefinition, maxMessageBytes = 1024 * 1024) {
  const toPlugin = new PassThrough();
  const toHost = new PassThrough();
  const plugin = createMessageConnection(new NdjsonMessageReader(toPlugin), new NdjsonMessageWriter(toHost));
  attachPlugin(plugin, def);
  plugin.listen();
  let terminations = 0;
  const transport: ChannelTransport = {
    reader: new NdjsonMessageReader(toHost, { maxMessageBytes }),
    writer: new NdjsonMessageWriter(toPlugin),
    terminate: async () => {
      terminations += 1;
      plugin.dispose();
    },
    stderrTail: () => 'in-memory stderr tail',
  };
  return { transport, toHost, terminations: () => terminations, dispose: () => plugin.dispose() };
}

const fakeBundle = (manifest: Partial<PluginManifest> = {}) =>
  inMemoryBundle({ provides: { strategies: ['outer', 'inner', 'slow', 'bad', 'chatty', 'hang', 'flood', 'loop'] }, limits: { timeout_ms: 300 }, ...manifest });

const info = { description: '', kind: 'file' as const };
const noPlan = (rationale: string): StrategyProposeResult => ({ edits: [], rationale });

const definition: PluginDefinition = {
  id: 'mem',
  version: '1.0.0',
  strategies: {
    inner: { info, propose: (p) => noPlan(`inner saw ${p.items.length} items`) },
    outer: {
      info,
      async propose(p, ctx) {
        const scored = await ctx.score(p.items.map((i) => i.line_index));
        const nested = await ctx.propose('inner');
        return noPlan(`scorer ${scored.scorer_id}, nested ${nested.status}: ${nested.message}`);
      },
    },
    slow: {
      info,
      async propose(_p, ctx) {
        await ctx.score([1]); // the host takes longer than the plugin's deadline to answer this
        return noPlan('slow host, fast plugin');
      },
    },
    bad: { info, propose: () => ({ edits: [{ op: 'elide', line_indexes: ['three'] }], rationale: 'x' }) as never },
    chatty: {
      info,
      propose(_p, ctx) {
        ctx.log('info', 'halfway there');
        ctx.progress(1, 2, 'items');
        return noPlan('chatted');
      },
    },
    hang: { info, propose: () => new Promise<never>(() => undefined) },
    flood: {
      info,
      async propose(_p, ctx) {
        // Asks again and again without waiting for the answers.
        await Promise.all(Array.from({ length: 40 }, () => ctx.score([1])));
        return noPlan('never');
      },
    },
    loop: {
      info,
      async propose(_p, ctx) {
        for (;;) await ctx.score([1]);
      },
    },
  },
};

describe('PluginChannel over in-memory streams', () => {
  let mem: ReturnType<typeof inMemory> | undefined;
  afterEach(() => mem?.dispose());

  async function connect(def = definition, manifest: Partial<PluginManifest> = {}, maxMessageBytes?: number, log?: PluginLogSink): Promise<RunningBundle> {
    mem = inMemory(def, maxMessageBytes);
    return connectBundle(fakeBundle(manifest), mem.transport, { hostVersion: '0.1.0', cancelGraceMs: 100, log });
  }
  const params = (id: string) => proposeParams(id, syntheticItems(2));

  it('runs the initialize handshake and reports what the plugin serves', async () => {
    const r = await connect();
    expect(r.handshake.protocol_version).toBe(1);
    expect(r.handshake.strategies?.map((s) => s.id).sort()).toEqual(['bad', 'chatty', 'flood', 'hang', 'inner', 'loop', 'outer', 'slow']);
  });

  it('refuses a plugin whose version differs from its manifest', async () => {
    const error = await connect(definition, { version: '2.0.0' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginFailure);
    expect((error as PluginFailure).message).toContain('it says its version is 1.0.0, the manifest says 2.0.0');
    expect(mem!.terminations()).toBeGreaterThan(0);
  });

  it('routes host requests to the callbacks of the call they belong to, and lets a callback call the same plugin again', async () => {
    const r = await connect();
    const callbacks = {
      score: () => ({ scorer_id: 'heuristic', scores: [] }),
      propose: async () => {
        const inner = await r.channel.request(StrategyPropose, params('inner'));
        return { status: 'no_plan' as const, message: inner.rationale };
      },
    };
    const result = await r.channel.request(StrategyPropose, params('outer'), callbacks);
    expect(result.rationale).toBe('scorer heuristic, nested no_plan: inner saw 8 items');
  });

  it('pauses a call\'s deadline while the host works on its callback', async () => {
    const r = await connect();
    const score = () => new Promise<{ scorer_id: string; scores: [] }>((resolve) => setTimeout(() => resolve({ scorer_id: 's', scores: [] }), 500));
    const result = await r.channel.request(StrategyPropose, params('slow'), { score });
    expect(result.rationale).toBe('slow host, fast plugin');
  });

  it('kills a plugin that opens more host requests at once than the host answers', async () => {
    const r = await connect();
    const score = () => new Promise<{ scorer_id: string; scores: [] }>((resolve) => setTimeout(() => resolve({ scorer_id: 's', scores: [] }), 200));
    const error = (await r.channel.request(StrategyPropose, params('flood'), { score }).catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_output_overflow');
    expect(error.message).toContain('sent more than 32 host requests at once during strategy/propose');
    expect(mem!.terminations()).toBe(1);
  });

  it('bounds a call that keeps calling back by ten times its deadline, callbacks included', async () => {
    const r = await connect();
    const score = () => new Promise<{ scorer_id: string; scores: [] }>((resolve) => setTimeout(() => resolve({ scorer_id: 's', scores: [] }), 20));
    const started = Date.now();
    const error = (await r.channel.request(StrategyPropose, params('loop'), { score }).catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_timeout');
    expect(error.message).toContain('ran for 10 times its 300 ms deadline during strategy/propose, host callbacks included');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(Date.now() - started).toBeLessThan(6000);
  });

  it('delivers host/log and $/progress to the call\'s callbacks', async () => {
    const r = await connect();
    const seen: string[] = [];
    await r.channel.request(StrategyPropose, params('chatty'), {
      log: (p) => seen.push(`${p.level}: ${p.message}`),
      progress: (p) => seen.push(`progress ${p.done}/${p.total}`),
    });
    expect(seen).toEqual(['info: halfway there', 'progress 1/2']);
  });

  it('hands host/log lines of a call without a log callback to the host\'s sink, named by the plugin', async () => {
    const lines: string[] = [];
    const r = await connect(definition, {}, undefined, stderrPluginLog({ GOBSTOPPER_DEBUG: '1' }, (line) => lines.push(line)));
    await r.channel.request(StrategyPropose, params('chatty'));
    expect(lines).toEqual(['gobstopper: mem info: halfway there\n']);
  });

  it('says, under GOBSTOPPER_DEBUG only, why a malformed host/log line was dropped', async () => {
    const misnamed = { ...definition, strategies: { ...definition.strategies, chatty: { info, propose: (_p: unknown, ctx: HostContext) => (ctx.log('warning' as 'warn', 'disk almost full'), noPlan('logged')) } } };
    const lines: string[] = [];
    const r = await connect(misnamed, {}, undefined, stderrPluginLog({ GOBSTOPPER_DEBUG: '1' }, (line) => lines.push(line)));
    await r.channel.request(StrategyPropose, params('chatty'));
    expect(lines).toEqual(['gobstopper: mem debug: dropped a host/log notification that breaks LogParams at /level: must be one of "debug", "info", "warn", "error"\n']);
    const quiet: string[] = [];
    const q = await connect(misnamed, {}, undefined, stderrPluginLog({}, (line) => quiet.push(line)));
    await q.channel.request(StrategyPropose, params('chatty'));
    expect(quiet).toEqual([]);
  });

  it('cuts an SDK log message to the 4096 characters LogParams allows, so a long warning is not dropped unseen', async () => {
    const long = 'é'.repeat(5000);
    const r = await connect({ ...definition, strategies: { ...definition.strategies, chatty: { info, propose: (_p, ctx) => (ctx.log('warn', long), noPlan('logged')) } } });
    const seen: string[] = [];
    await r.channel.request(StrategyPropose, params('chatty'), { log: (p) => seen.push(p.message) });
    expect(seen).toEqual([long.slice(0, 4096)]);
  });

  it('shows a hand-written plugin\'s overlong host/log line cut, saying by how much, instead of dropping it', async () => {
    const r = await connect();
    const seen: string[] = [];
    const pending = r.channel.request(StrategyPropose, params('hang'), { log: (p) => seen.push(p.message) });
    pending.catch(() => undefined);
    mem!.toHost.write(JSON.stringify({ jsonrpc: '2.0', method: 'host/log', params: { level: 'warn', message: `${'é'.repeat(4000)}${'z'.repeat(1000)}` } }) + '\n');
    await vi.waitFor(() => expect(seen).toHaveLength(1));
    expect(Array.from(seen[0]!).length).toBeLessThanOrEqual(4096);
    expect(seen[0]).toMatch(/^é{4000}z+ … \(\d+ more characters\)$/);
    const [kept, more] = [Array.from(seen[0]!.split(' … ')[0]!).length, Number(/\((\d+) more/.exec(seen[0]!)![1])];
    expect(kept + more).toBe(5000);
  });

  it('answers a plugin error as plugin_error and keeps the plugin; its own words, not its stderr, make the message', async () => {
    const r = await connect({ ...definition, strategies: { ...definition.strategies, inner: { info, propose: () => { throw invalidInput('not my kind of session'); } } } });
    const error = (await r.channel.request(StrategyPropose, params('inner')).catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_error');
    expect(error.message).toBe('plugin mem@1.0.0 answered strategy/propose with error -32002: not my kind of session');
    expect(r.channel.alive).toBe(true);
  });

  it("answers a handler's own bug as an internal error naming where it was thrown, its stack on stderr", async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const buggy = (): never => {
        throw new TypeError('items is not iterable');
      };
      // Thrown at once, then from a promise.
      let calls = 0;
      const propose = () => (calls++ === 0 ? buggy() : Promise.resolve().then(buggy));
      const r = await connect({ ...definition, strategies: { ...definition.strategies, inner: { info, propose } } });
      const sync = (await r.channel.request(StrategyPropose, params('inner')).catch((e: unknown) => e)) as PluginFailure;
      expect(sync).toMatchObject({ code: 'plugin_error', rpcCode: -32603 });
      expect(sync.message).toMatch(/answered strategy\/propose with error -32603: TypeError: items is not iterable \(at host-channel\.test\.ts:\d+\)$/);
      const later = (await r.channel.request(StrategyPropose, params('inner')).catch((e: unknown) => e)) as PluginFailure;
      expect(later.message).toMatch(/TypeError: items is not iterable \(at host-channel\.test\.ts:\d+\)$/);
      expect(stderr.mock.calls.some(([text]) => String(text).startsWith('TypeError: items is not iterable\n    at '))).toBe(true);
      expect(r.channel.alive).toBe(true);
    } finally {
      stderr.mockRestore();
    }
  });

  it('kills the plugin when its result violates the schema, naming the place', async () => {
    const r = await connect();
    const error = (await r.channel.request(StrategyPropose, params('bad')).catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_schema_violation');
    expect(error.message).toContain('violates the schema at /edits/0/line_indexes/0');
    expect(mem!.terminations()).toBe(1);
    await expect(r.channel.request(StrategyPropose, params('inner'))).rejects.toBe(error);
  });

  it('times out a plugin that ignores cancellation and kills it', async () => {
    const r = await connect();
    const started = Date.now();
    const error = (await r.channel.request(StrategyPropose, params('hang')).catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_timeout');
    expect(error.message).toMatch(/^plugin mem@1\.0\.0 timed out after 300 ms during strategy\/propose/);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(mem!.terminations()).toBe(1);
  });

  it('kills the plugin on a line that is not JSON', async () => {
    const r = await connect();
    const pending = r.channel.request(StrategyPropose, params('hang'));
    mem!.toHost.write('Traceback (most recent call last):\n');
    const error = (await pending.catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_not_json');
    expect(mem!.terminations()).toBe(1);
  });

  it('quotes the start of the stray line, so its author can find the print that left it', async () => {
    for (const [line, code, quoted] of [
      ['halve-js starting', 'plugin_not_json', 'printed a line that is not JSON on stdout during strategy/propose: "halve-js starting" (logs belong on stderr)'],
      ['{"id":1,"result":{"edits":[]}}', 'plugin_not_jsonrpc', 'printed a line that is not a JSON-RPC 2.0 message during strategy/propose: "{\\"id\\":1,\\"result\\":{\\"edits\\":[]}}"'],
      // Escaped, and cut on a character boundary: a long line costs the message no more than its start.
      [`\u001b[31mé${'x'.repeat(500)}`, 'plugin_not_json', `: "\\u001b[31mé${'x'.repeat(73)}"… (logs`],
    ] as const) {
      const r = await connect();
      const pending = r.channel.request(StrategyPropose, params('hang'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      mem!.toHost.write(`${line}\n`);
      const failure = (await pending.catch((e: unknown) => e)) as PluginFailure;
      expect(failure.code, line).toBe(code);
      expect(failure.message, line).toContain(quoted);
      mem!.dispose();
    }
  });

  it('kills the plugin at once when it answers a request it was never sent', async () => {
    // A deadline longer than the test's own: only the stray answer can end the call.
    const r = await connect(definition, { limits: { timeout_ms: 120_000 } });
    const pending = r.channel.request(StrategyPropose, params('hang'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    mem!.toHost.write('{"jsonrpc":"2.0","id":4242,"result":{"edits":[],"rationale":"stray"}}\n');
    const error = (await pending.catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_not_jsonrpc');
    expect(error.message).toContain('answered a request it was never sent, or answered one twice (id 4242) during strategy/propose');
    expect(mem!.terminations()).toBe(1);
  });

  it('kills the plugin when its error answer has no integer code or no string message, rather than reading it as -32001 (source changed)', async () => {
    for (const error of ['{"message":"parser crashed"}', '{"code":"-32001","message":"parser crashed"}', '{"code":-32603,"message":5}', '"crashed"']) {
      const r = await connect();
      const pending = r.channel.request(StrategyPropose, params('hang'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      // The handshake was request 0; this call is request 1.
      mem!.toHost.write(`{"jsonrpc":"2.0","id":1,"error":${error}}\n`);
      const failure = (await pending.catch((e: unknown) => e)) as PluginFailure;
      expect(failure, error).toBeInstanceOf(PluginFailure);
      expect(failure.code, error).toBe('plugin_not_jsonrpc');
      expect(failure.rpcCode, error).toBeUndefined();
      expect(failure.message).toContain('answered strategy/propose with an error that is not a JSON-RPC error object');
      expect(mem!.terminations()).toBe(1);
      mem!.dispose();
    }
  });

  it('kills the plugin at once when its answer carries both a result and an error', async () => {
    // A deadline longer than the test's own: only the answer can end the call.
    const r = await connect(definition, { limits: { timeout_ms: 120_000 } });
    const pending = r.channel.request(StrategyPropose, params('hang'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    mem!.toHost.write('{"jsonrpc":"2.0","id":1,"result":{"edits":[],"rationale":"both"},"error":{"code":-32001,"message":"source changed"}}\n');
    const failure = (await pending.catch((e: unknown) => e)) as PluginFailure;
    expect(failure.code).toBe('plugin_not_jsonrpc');
    expect(failure.rpcCode).toBeUndefined();
    expect(failure.message).toContain('answered strategy/propose with a response that has both a result and an error');
    expect(mem!.terminations()).toBe(1);
  });

  it('fails the call at once, with what the plugin said, when it answers with id null (it could not read the request)', async () => {
    for (const [line, said] of [
      ['{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: unexpected end"}}', 'answered with error -32700: Parse error: unexpected end'],
      ['{"jsonrpc":"2.0","id":null,"result":{"edits":[],"rationale":"who"}}', 'answered with a response that names no request (id null)'],
    ] as const) {
      // A deadline longer than the test's own: only the answer can end the call, as it used to wait it out.
      const r = await connect(definition, { limits: { timeout_ms: 120_000 } });
      const pending = r.channel.request(StrategyPropose, params('hang'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      mem!.toHost.write(`${line}\n`);
      const failure = (await pending.catch((e: unknown) => e)) as PluginFailure;
      expect(failure.code, line).toBe('plugin_not_jsonrpc');
      expect(failure.message, line).toContain(`could not read a request during strategy/propose and ${said}`);
      expect(mem!.terminations()).toBe(1);
      mem!.dispose();
    }
  });

  it('kills the plugin on a message over the size cap', async () => {
    const r = await connect(definition, {}, 64 * 1024);
    const pending = r.channel.request(StrategyPropose, params('hang'));
    mem!.toHost.write('{"jsonrpc":"2.0","method":"host/log","params":{"level":"info","message":"' + 'y'.repeat(70 * 1024));
    const error = (await pending.catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('plugin_output_overflow');
  });

  it('checks params before sending: a malformed request never reaches the plugin', async () => {
    const r = await connect();
    const bad = { ...params('inner'), items: [{ line_index: -1, kind: 'user', est_tokens: 1, label: 'u' }] };
    await expect(r.channel.request(StrategyPropose, bad)).rejects.toMatchObject({ code: 'invalid_plugin_request' });
    expect(r.channel.alive).toBe(true);
  });

  it('refuses host/read_items from a plugin without read_content', async () => {
    const reader: PluginDefinition = {
      id: 'mem',
      version: '1.0.0',
      strategies: { outer: { info, propose: async (_p, ctx) => noPlan(String((await ctx.readItems([1])).items.length)) } },
    };
    const r = await connect(reader);
    const error = (await r.channel.request(StrategyPropose, params('outer'), { readItems: () => ({ items: [], content_trust: 'untrusted_archived_data' }) }).catch((e: unknown) => e)) as PluginFailure;
    expect(error.code).toBe('capability_denied');
    expect(mem!.terminations()).toBe(1);
  });

  it('answers host/read_items for a plugin that declares read_content', async () => {
    const reader: PluginDefinition = {
      id: 'mem',
      version: '1.0.0',
      strategies: { outer: { info, propose: async (_p, ctx) => noPlan((await ctx.readItems([1])).items.map((i) => i.content).join()) } },
    };
    const r = await connect(reader, { capabilities: ['read_content'] });
    const result = await r.channel.request(StrategyPropose, params('outer'), {
      readItems: (p) => ({ items: p.line_indexes.map((line_index) => ({ line_index, content: 'line one', truncated: false })), content_trust: 'untrusted_archived_data' }),
    });
    expect(result.rationale).toBe('line one');
  });
});
