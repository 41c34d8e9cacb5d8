/**
 * The items_ref transport feature between the real PluginChannel and the real SDK over in-memory
 * NDJSON streams, with every line the host writes to the plugin recorded as it crossed the wire.
 */
import { PassThrough } from 'node:stream';
import { createMessageConnection, ResponseError } from 'vscode-jsonrpc/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PluginHost } from '../../kernel/plugins/host/plugin-host.js';
import { connectBundle, type RunningBundle } from '../../kernel/plugins/host/running-bundle.js';
import type { ChannelTransport } from '../../kernel/plugins/protocol/plugin-channel.js';
import type * as T from '../../schemas/generated/types.js';
import { ItemsCache } from '../../sdk/items-cache.js';
import * as P from '../../sdk/protocol.js';
import { attachPlugin, PluginError, type PluginDefinition } from '../../sdk/serve.js';
import { NdjsonMessageReader, NdjsonMessageWriter, serializeMessage, type NdjsonReaderOptions } from '../../sdk/transport/ndjson.js';
import { connectInMemory } from '../helpers/memory-connection.js';
import { policy, proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';
import { inMemoryBundle } from '../helpers/in-memory-bundle.js';

interface WireLine {
  bytes: number;
  raw: Buffer;
  message: { id?: number; method?: string; params?: Record<string, unknown>; error?: { code: number; message: string } };
}

/** Splits a stream into the JSON-RPC messages written to it, keeping each line's size. */
function tap(stream: PassThrough): WireLine[] {
  const lines: WireLine[] = [];
  let pending = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let nl = pending.indexOf(0x0a); nl !== -1; nl = pending.indexOf(0x0a)) {
      const line = pending.subarray(0, nl);
      pending = pending.subarray(nl + 1);
      lines.push({ bytes: line.length, raw: Buffer.from(line), message: parsedOrEmpty(line) });
    }
  });
  return lines;
}

/** A line that is not JSON (some tests send one on purpose) is recorded with an empty message. */
function parsedOrEmpty(line: Buffer): WireLine['message'] {
  try {
    return JSON.parse(line.toString('utf8')) as WireLine['message'];
  } catch {
    return {};
  }
}

type PluginSide = (connection: ReturnType<typeof createMessageConnection>) => void;

/** A plugin wired to a PluginChannel through in-memory streams; both directions are tapped. */
function inMemory(attach: PluginSide, pluginReader: NdjsonReaderOptions = {}) {
  const toPlugin = new PassThrough();
  const toHost = new PassThrough();
  const sent = tap(toPlugin);
  const answered = tap(toHost);
  const plugin = createMessageConnection(new NdjsonMessageReader(toPlugin, pluginReader), new NdjsonMessageWriter(toHost));
  attach(plugin);
  plugin.listen();
  const transport: ChannelTransport = {
    reader: new NdjsonMessageReader(toHost),
    writer: new NdjsonMessageWriter(toPlugin),
    terminate: async () => plugin.dispose(),
  };
  /** Writes one message to the plugin as a host would, bypassing the channel. */
  const raw = (message: object) => toPlugin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
  /** Writes one line to the host as a plugin would, bypassing the plugin's connection. */
  const rawToHost = (line: string) => toHost.write(line + '\n');
  return { transport, sent, answered, raw, rawToHost, dispose: () => plugin.dispose() };
}

const fakeBundle = (provides: T.PluginManifest['provides']) => inMemoryBundle({ provides });

const info = { description: '', kind: 'file' as const };
/** 1,200 items: above the size where a reference pays off. */
const bigItems = () => syntheticItems(300);

/** A provider's parse result over `items`. */
function transcript(items: T.TranscriptItem[]): T.Transcript {
  return {
    session: { provider: 'claude_code', session_id: 'b16b16b1-0000-4000-8000-000000000001', path: '/nonexistent/session.jsonl' },
    items,
    usage: { context_tokens: 0, lifetime_input_tokens: 0, lifetime_cached_tokens: 0, context_state: 'absent', lifetime_scope: 'absent' },
    source_sha256: '0'.repeat(64),
    bytes: 0,
    record_count: items.length,
  };
}

const proposals = (lines: WireLine[]) => lines.filter((l) => l.message.method === P.Methods.strategyPropose);

describe('items_ref between the plugin channel and the TypeScript SDK', () => {
  let mem: ReturnType<typeof inMemory> | undefined;
  afterEach(() => mem?.dispose());

  /** Runs the real handshake against a definition served by attachPlugin. */
  async function connectSdk(def: PluginDefinition, itemsCache?: ItemsCache): Promise<RunningBundle> {
    mem = inMemory((connection) => attachPlugin(connection, def, { itemsCache }));
    return connectBundle(fakeBundle({ strategies: Object.keys(def.strategies ?? {}), scorers: Object.keys(def.scorers ?? {}) }), mem.transport, { hostVersion: '0.1.0' });
  }

  /** A strategy that records the items array each call received. */
  function recording() {
    const seen: T.TranscriptItem[][] = [];
    const def: PluginDefinition = {
      id: 'mem',
      version: '1.0.0',
      strategies: {
        echo: {
          info,
          propose: (p) => {
            seen.push(p.items);
            return { edits: [], rationale: `saw ${p.items.length} items, last line ${p.items.at(-1)?.line_index}` };
          },
        },
      },
      scorers: {
        count: {
          info: { description: '' },
          score: (p) => {
            seen.push(p.items);
            return { scores: [], summary: `scored among ${p.items.length} items` };
          },
        },
      },
    };
    return { seen, def };
  }

  it('sends a large items array once, then a small items_ref, and the handler still gets the whole identical array', async () => {
    const { seen, def } = recording();
    const running = await connectSdk(def);
    expect(running.handshake.features).toEqual(['items_ref']);

    const items = bigItems();
    const first = await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    const second = await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    const scored = await running.channel.request(P.ScorerScore, {
      scorer_id: 'count',
      session: proposeParams('echo', items).session,
      items,
      candidates: [3, 7],
      policy: policy(),
    });

    expect(first.rationale).toBe('saw 1200 items, last line 1199');
    expect(second.rationale).toBe(first.rationale);
    expect(scored.summary).toBe('scored among 1200 items');
    expect(seen[0]).toEqual(items);
    // The plugin keeps the array it parsed once and hands that same object to every later call.
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);

    const [whole, byRef] = proposals(mem!.sent);
    expect(whole!.message.params).toMatchObject({ items_id: expect.any(String) });
    expect(whole!.message.params!.items).toHaveLength(1200);
    expect(whole!.bytes).toBeGreaterThan(100_000);
    expect(byRef!.message.params).not.toHaveProperty('items');
    expect(byRef!.message.params!.items_ref).toBe(whole!.message.params!.items_id);
    expect(byRef!.bytes).toBeLessThan(2_000);
    const score = mem!.sent.find((l) => l.message.method === P.Methods.scorerScore)!;
    expect(score.message.params!.items_ref).toBe(whole!.message.params!.items_id);
    expect(score.bytes).toBeLessThan(2_000);
  });

  it('tells the plugin about items sent ahead (itemsArrived), with the array later calls get', async () => {
    const { seen, def } = recording();
    const arrived: unknown[][] = [];
    const running = await connectSdk({ ...def, itemsArrived: (items) => void arrived.push(items as unknown[]) });
    const items = bigItems();
    running.channel.offerItems(items);
    await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    await vi.waitFor(() => expect(arrived).toHaveLength(1));
    expect(arrived[0]).toEqual(items);
    expect(seen[0]).toBe(arrived[0]);
  });

  it('keeps serving when itemsArrived throws (items passed on unchecked may be anything)', async () => {
    const { def } = recording();
    const running = await connectSdk({
      ...def,
      itemsArrived: () => {
        throw new Error('not transcript items');
      },
    });
    const items = bigItems();
    running.channel.offerItems(items);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const result = await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    expect(result.rationale).toBe('saw 1200 items, last line 1199');
  });

  it('sends items ahead of any call ($/items), and the first call then carries only items_ref', async () => {
    const { seen, def } = recording();
    const running = await connectSdk(def);
    const items = bigItems();
    running.channel.offerItems(items);
    running.channel.offerItems(items);
    const result = await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    expect(result.rationale).toBe('saw 1200 items, last line 1199');
    expect(seen[0]).toEqual(items);
    const offers = mem!.sent.filter((l) => l.message.method === P.Methods.items);
    // Offered once: the second offer finds the process already holds them.
    expect(offers).toHaveLength(1);
    expect(offers[0]!.message.params).toMatchObject({ items_id: expect.any(String) });
    const [call] = proposals(mem!.sent);
    expect(call!.message.params!.items_ref).toBe(offers[0]!.message.params!.items_id);
    expect(call!.bytes).toBeLessThan(2_000);
  });

  it('drops a malformed $/items offer and keeps serving', async () => {
    const { def } = recording();
    const cache = new ItemsCache();
    const running = await connectSdk(def, cache);
    mem!.raw({ method: P.Methods.items, params: { items_id: 'bad id with spaces', items: bigItems() } });
    mem!.raw({ method: P.Methods.items, params: { items_id: 'items-x' } });
    const result = await running.channel.request(P.StrategyPropose, proposeParams('echo', syntheticItems(3)));
    expect(result.rationale).toMatch(/^saw \d+ items/);
    expect(cache.size).toBe(0);
  });

  it('keys on the array object, and leaves small arrays alone', async () => {
    const { seen, def } = recording();
    const running = await connectSdk(def);
    const items = bigItems();
    await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    // Equal content in a different array is a different transcript as far as the host knows.
    await running.channel.request(P.StrategyPropose, proposeParams('echo', [...items]));
    const small = syntheticItems(3);
    await running.channel.request(P.StrategyPropose, proposeParams('echo', small));
    await running.channel.request(P.StrategyPropose, proposeParams('echo', small));

    const wire = proposals(mem!.sent).map((l) => l.message.params!);
    expect(wire[0]!.items_id).toBeDefined();
    expect(wire[1]!.items_id).toBeDefined();
    expect(wire[1]!.items_id).not.toBe(wire[0]!.items_id);
    for (const params of wire.slice(2)) {
      expect(params.items).toHaveLength(12);
      expect(params).not.toHaveProperty('items_id');
      expect(params).not.toHaveProperty('items_ref');
    }
    expect(seen.map((s) => s.length)).toEqual([1200, 1200, 12, 12]);
  });

  it('resends the items whole, once, when the plugin no longer holds them (a restarted cache)', async () => {
    const { seen, def } = recording();
    const cache = new ItemsCache();
    const running = await connectSdk(def, cache);
    const items = bigItems();
    await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    cache.clear();
    const again = await running.channel.request(P.StrategyPropose, proposeParams('echo', items));

    expect(again.rationale).toBe('saw 1200 items, last line 1199');
    expect(seen).toHaveLength(2);
    expect(seen[1]).toEqual(items);
    const wire = proposals(mem!.sent);
    expect(wire.map((l) => Object.keys(l.message.params!).filter((k) => k.startsWith('items')).sort())).toEqual([
      ['items', 'items_id'],
      ['items_ref'],
      ['items', 'items_id'],
    ]);
    const miss = mem!.answered.find((l) => l.message.id === wire[1]!.message.id)!;
    expect(miss.message.error?.code).toBe(P.PluginErrorCodes.ItemsNotCached);
    // Held again after the resend: the next call is a reference once more.
    await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    expect(proposals(mem!.sent).at(-1)!.message.params!.items_ref).toBe(wire[2]!.message.params!.items_id);
    expect(running.channel.alive).toBe(true);
  });

  it('resends to a plugin that keeps fewer arrays than the host assumes', async () => {
    const { seen, def } = recording();
    const running = await connectSdk(def, new ItemsCache(1));
    const a = bigItems();
    const b = bigItems();
    await running.channel.request(P.StrategyPropose, proposeParams('echo', a));
    await running.channel.request(P.StrategyPropose, proposeParams('echo', b));
    await running.channel.request(P.StrategyPropose, proposeParams('echo', a));
    expect(seen.map((s) => s.length)).toEqual([1200, 1200, 1200]);
    expect(seen[2]).toEqual(a);
    expect(proposals(mem!.sent)).toHaveLength(4);
  });

  it('does not retry forever: an ItemsNotCached answer to whole items is the plugin\'s error', async () => {
    let calls = 0;
    const running = await connectSdk({
      id: 'mem',
      version: '1.0.0',
      strategies: {
        forgetful: {
          info,
          propose: () => {
            calls += 1;
            if (calls === 1) return { edits: [], rationale: 'first' };
            throw new PluginError(P.PluginErrorCodes.ItemsNotCached, 'lost it');
          },
        },
      },
    });
    const items = bigItems();
    await running.channel.request(P.StrategyPropose, proposeParams('forgetful', items));
    await expect(running.channel.request(P.StrategyPropose, proposeParams('forgetful', items))).rejects.toMatchObject({
      code: 'plugin_error',
      rpcCode: P.PluginErrorCodes.ItemsNotCached,
    });
    expect(calls).toBe(3);
    expect(proposals(mem!.sent)).toHaveLength(3);
  });

  it('checks the params it was given with GOBSTOPPER_CHECK_REQUESTS=1, not the wire form', async () => {
    expect(process.env.GOBSTOPPER_CHECK_REQUESTS).toBe('1');
    const { def } = recording();
    const running = await connectSdk(def);
    const items = bigItems();
    await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    await running.channel.request(P.StrategyPropose, proposeParams('echo', items));
    const { items: _dropped, ...withoutItems } = proposeParams('echo', items);
    await expect(running.channel.request(P.StrategyPropose, withoutItems)).rejects.toMatchObject({ code: 'invalid_plugin_request' });
  });
});

describe('items_ref with a plugin that does not advertise it', () => {
  let mem: ReturnType<typeof inMemory> | undefined;
  afterEach(() => mem?.dispose());

  it.each([
    ['lists no features', undefined],
    ['lists only features this host does not know', ['columnar_items']],
  ])('%s: always gets the items whole', async (_name, features) => {
    const received: unknown[] = [];
    // Written against the bare protocol, the way a plugin in another language answers.
    mem = inMemory((connection) => {
      connection.onRequest(P.Methods.initialize, () => ({ protocol_version: 1, plugin: { id: 'mem', version: '1.0.0' }, strategies: [{ id: 'plain', ...info }], ...(features ? { features } : {}) }));
      connection.onRequest(P.Methods.strategyPropose, (params: Record<string, unknown>) => {
        received.push(params);
        return { edits: [], rationale: `saw ${(params.items as unknown[] | undefined)?.length ?? 'no'} items` };
      });
    });
    const running = await connectBundle(fakeBundle({ strategies: ['plain'] }), mem.transport, { hostVersion: '0.1.0' });
    expect(running.handshake.features).toEqual(features);
    const items = bigItems();
    for (let i = 0; i < 3; i++) {
      const result = await running.channel.request(P.StrategyPropose, proposeParams('plain', items));
      expect(result.rationale).toBe('saw 1200 items');
    }
    for (const params of received) {
      expect(Object.keys(params as object).filter((k) => k.startsWith('items'))).toEqual(['items']);
    }
    expect(proposals(mem.sent).every((l) => l.bytes > 100_000)).toBe(true);
  });
});

describe('items a provider sends ahead of its result ($/items, plugin to host)', () => {
  let mem: ReturnType<typeof inMemory> | undefined;
  afterEach(() => mem?.dispose());

  const providerDef = (result: T.Transcript): PluginDefinition => ({
    id: 'mem',
    version: '1.0.0',
    providers: { claude_code: { info: { display_name: 'Mem' }, parse: () => result } },
  });

  it('sends a parsed transcript\'s items ahead of the result, and the host gets them whole', async () => {
    const items = bigItems();
    mem = inMemory((connection) => attachPlugin(connection, providerDef(transcript(items))));
    const running = await connectBundle(inMemoryBundle({ provides: { providers: ['claude_code'] } }), mem.transport, { hostVersion: '0.1.0' });
    const parsed = await running.channel.request(P.ProviderParse, { provider_id: 'claude_code', path: '/nonexistent/session.jsonl' });
    expect(parsed.items).toEqual(items);
    expect(parsed).not.toHaveProperty('items_ref');
    const offer = mem.answered.findIndex((l) => l.message.method === P.Methods.items);
    const response = mem.answered.findIndex((l) => (l.message as { result?: { items_ref?: string } }).result?.items_ref !== undefined);
    expect(offer).toBeGreaterThanOrEqual(0);
    expect(response).toBeGreaterThan(offer);
    expect(mem.answered[response]!.bytes).toBeLessThan(2_000);
  });

  it('passes items on as the bytes the provider wrote, not a fresh encoding', async () => {
    const items = bigItems();
    // Valid JSON no encoder of ours writes: a space after every comma between items.
    const spaced = '[' + items.map((i) => JSON.stringify(i)).join(', ') + ']';
    mem = inMemory((connection) => {
      connection.onRequest(P.Methods.initialize, () => ({ protocol_version: 1, plugin: { id: 'mem', version: '1.0.0' }, providers: [{ id: 'claude_code', display_name: 'Mem' }] }));
      connection.onRequest(P.Methods.providerParse, () => {
        mem!.rawToHost(`{"jsonrpc":"2.0","method":"$/items","params":{"items_id":"r-1","items":${spaced}}}`);
        const { items: _items, ...rest } = transcript(items);
        return { ...rest, items_ref: 'r-1' };
      });
    });
    const running = await connectBundle(inMemoryBundle({ provides: { providers: ['claude_code'] } }), mem.transport, { hostVersion: '0.1.0' });
    const parsed = await running.channel.request(P.ProviderParse, { provider_id: 'claude_code', path: '/x' });
    expect(parsed.items).toEqual(items);
    expect(serializeMessage({ jsonrpc: '2.0', id: 9, method: 'strategy/propose', params: { items: parsed.items } } as never)).toContain(spaced);
    // A copy of the array has no bytes kept for it and is encoded afresh.
    expect(serializeMessage({ jsonrpc: '2.0', id: 9, method: 'strategy/propose', params: { items: [...parsed.items] } } as never)).not.toContain(spaced);
  });

  it('keeps the items inline for a host that did not list items_ref', async () => {
    const items = bigItems();
    const conn = connectInMemory(providerDef(transcript(items)));
    try {
      await conn.host.sendRequest(P.Methods.initialize, { protocol_versions: [1], host: { name: 'old-host', version: '0.0.1' } });
      const result = (await conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'claude_code', path: '/x' })) as T.Transcript & { items_ref?: string };
      expect(result.items).toHaveLength(items.length);
      expect(result.items_ref).toBeUndefined();
    } finally {
      conn.dispose();
    }
  });

  it('sends a long transcript ahead in numbered pieces, and the host puts them together', async () => {
    // 20,000 items: three pieces of at most 8,192.
    const items = syntheticItems(5000);
    mem = inMemory((connection) => attachPlugin(connection, providerDef(transcript(items))));
    const running = await connectBundle(inMemoryBundle({ provides: { providers: ['claude_code'] } }), mem.transport, { hostVersion: '0.1.0' });
    const parsed = await running.channel.request(P.ProviderParse, { provider_id: 'claude_code', path: '/nonexistent/session.jsonl' });
    expect(parsed.items).toEqual(items);
    const pieces = mem.answered.filter((l) => l.message.method === P.Methods.items).map((l) => l.message.params!);
    expect(pieces.map((p) => [p.part, p.more, (p.items as unknown[]).length])).toEqual([
      [0, true, 8192],
      [1, true, 8192],
      [2, false, 20000 - 2 * 8192],
    ]);
    expect(new Set(pieces.map((p) => p.items_id)).size).toBe(1);
    // The host keeps the pieces' text: passing the array on writes exactly what the provider wrote.
    expect(serializeMessage({ jsonrpc: '2.0', id: 9, method: 'strategy/propose', params: { items: parsed.items } } as never)).toContain(JSON.stringify(items));
  });

  it('checks every piece against the schema as it arrives, and names the bad item by its place in the whole array', async () => {
    const items = syntheticItems(5000);
    (items[9000] as { est_tokens: unknown }).est_tokens = 'many';
    mem = inMemory((connection) => attachPlugin(connection, providerDef(transcript(items))));
    const running = await connectBundle(inMemoryBundle({ provides: { providers: ['claude_code'] } }), mem.transport, { hostVersion: '0.1.0' });
    const error = await running.channel.request(P.ProviderParse, { provider_id: 'claude_code', path: '/x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'plugin_schema_violation' });
    expect((error as Error).message).toContain('sent items ahead ($/items) that violate the schema at /items/9000/est_tokens');
  });

  it('drops an offer whose pieces come out of order, so the result naming it fails', async () => {
    const piece = (part: number, more: boolean) => JSON.stringify({ jsonrpc: '2.0', method: P.Methods.items, params: { items_id: 'r-1', part, more, items: bigItems() } });
    mem = inMemory((connection) => {
      connection.onRequest(P.Methods.initialize, () => ({ protocol_version: 1, plugin: { id: 'mem', version: '1.0.0' }, providers: [{ id: 'claude_code', display_name: 'Mem' }] }));
      connection.onRequest(P.Methods.providerParse, () => {
        mem!.rawToHost(piece(0, true));
        mem!.rawToHost(piece(2, false));
        return { ...transcript([]), items: undefined, items_ref: 'r-1' };
      });
    });
    const running = await connectBundle(inMemoryBundle({ provides: { providers: ['claude_code'] } }), mem.transport, { hostVersion: '0.1.0' });
    const error = await running.channel.request(P.ProviderParse, { provider_id: 'claude_code', path: '/x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'plugin_schema_violation' });
    expect((error as Error).message).toContain('naming items it never sent ahead');
  });

  it('a result naming items the plugin never sent ahead ends the plugin with a clear error', async () => {
    mem = inMemory((connection) => {
      connection.onRequest(P.Methods.initialize, () => ({ protocol_version: 1, plugin: { id: 'mem', version: '1.0.0' }, providers: [{ id: 'claude_code', display_name: 'Mem' }] }));
      connection.onRequest(P.Methods.providerParse, () => ({ ...transcript([]), items: undefined, items_ref: 'r-404' }));
    });
    const running = await connectBundle(inMemoryBundle({ provides: { providers: ['claude_code'] } }), mem.transport, { hostVersion: '0.1.0' });
    const error = await running.channel.request(P.ProviderParse, { provider_id: 'claude_code', path: '/x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'plugin_schema_violation' });
    expect((error as Error).message).toContain('items_ref "r-404" in its result, naming items it never sent ahead');
  });
});

describe('the SDK facing a host that misuses items_ref', () => {
  let conn: ReturnType<typeof connectInMemory> | undefined;
  afterEach(() => {
    conn?.dispose();
    conn = undefined;
  });

  const echo: PluginDefinition = {
    id: 'demo',
    version: '1.0.0',
    strategies: { echo: { info, propose: (p) => ({ edits: [], rationale: `saw ${p.items.length} items` }) } },
  };

  async function failure(params: Record<string, unknown>): Promise<ResponseError<unknown>> {
    conn ??= connectInMemory(echo);
    const error = await conn.host.sendRequest(P.Methods.strategyPropose, params).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResponseError);
    return error as ResponseError<unknown>;
  }

  it('answers an items_ref it never received with ItemsNotCached and a sentence saying so', async () => {
    const { items: _items, ...rest } = proposeParams('echo', bigItems());
    const error = await failure({ ...rest, items_ref: 'items-41' });
    expect(error.code).toBe(P.PluginErrorCodes.ItemsNotCached);
    expect(error.message).toBe('items_ref items-41 is not held by this plugin process (it keeps the last 4 item arrays it was sent); send the items again');
  });

  it('refuses malformed items fields with invalid params', async () => {
    const params = proposeParams('echo', bigItems());
    const { items: _items, ...rest } = params;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...params, items_id: 'a', items_ref: 'a' }, 'a request may carry items_id or items_ref, not both'],
      [{ ...rest, items_id: 'a' }, 'items_id must come with an items array'],
      [{ ...params, items_ref: 'a' }, 'items_ref stands for items; a request may not carry both'],
      [{ ...rest, items_ref: 42 }, "items_ref must be a string of 1 to 64 letters, digits, '_', '-', '.' or ':'"],
      [{ ...params, items_id: 'x'.repeat(65) }, "items_id must be a string of 1 to 64 letters, digits, '_', '-', '.' or ':'"],
    ];
    for (const [bad, message] of cases) {
      const error = await failure(bad);
      expect(error.code).toBe(-32602);
      expect(error.message).toBe(message);
    }
    // The connection is still fine afterwards.
    expect((await conn!.host.sendRequest(P.StrategyPropose, params)).rationale).toBe('saw 1200 items');
  });
});

describe('a provider\'s items passed on to strategies while the host reads them', () => {
  const mems: ReturnType<typeof inMemory>[] = [];
  let host: PluginHost | undefined;
  afterEach(async () => {
    await host?.close();
    for (const m of mems.splice(0)) m.dispose();
  });

  /**
   * A host over the built-in registry whose bundles run in memory: the Claude provider answers
   * parse with `parse`, strategies-core serves elide and records the items each call got.
   */
  function memoryHost(provider: (manifest: T.PluginManifest) => PluginSide) {
    const got: T.TranscriptItem[][] = [];
    const wires: Record<string, ReturnType<typeof inMemory>> = {};
    const strategy: PluginDefinition = {
      id: 'strategies-core',
      version: '1.0.0',
      strategies: {
        elide: {
          info,
          propose: (params) => {
            got.push(params.items);
            return { edits: [], rationale: 'recorded' };
          },
        },
      },
    };
    host = new PluginHost({
      start: (bundle, options) => {
        const id = bundle.manifest.id;
        // Plugins drop an offer they cannot parse, as servePlugin sets up.
        const { version } = bundle.manifest;
        const mem = id === 'provider-claude-code' ? inMemory(provider(bundle.manifest)) : inMemory((c) => attachPlugin(c, { ...strategy, id, version }), { dropBrokenOffers: true });
        mems.push(mem);
        wires[id] = mem;
        return connectBundle(bundle, mem.transport, options);
      },
    });
    return { host, got, wires };
  }

  const proposeNothing = (items: T.TranscriptItem[]) => proposeParams('elide', items);

  it('sends the items to a strategy already running as they arrive, and the propose then names them', async () => {
    const items = syntheticItems(5000);
    const { host, got, wires } = memoryHost(({ id, version }) => (c) => attachPlugin(c, { id, version, providers: { claude_code: { info: { display_name: 'Mem' }, parse: () => transcript(items) } } }));
    await host.strategy('elide');
    const provider = await host.provider('claude_code');
    const parsed = await provider.parse({ path: '/nonexistent/session.jsonl' });
    const strategy = await host.strategy('elide');
    await strategy.propose(proposeNothing(parsed.items));
    const toStrategy = wires['strategies-core']!.sent;
    const offers = toStrategy.filter((l) => l.message.method === P.Methods.items);
    expect(offers.map((l) => [l.message.params!.part, l.message.params!.more])).toEqual([
      [0, true],
      [1, true],
      [2, false],
    ]);
    const [propose] = proposals(toStrategy);
    expect(toStrategy.indexOf(propose!)).toBeGreaterThan(toStrategy.indexOf(offers[2]!));
    expect(propose!.message.params).not.toHaveProperty('items');
    expect(propose!.message.params!.items_ref).toBe(offers[0]!.message.params!.items_id);
    expect(got).toHaveLength(1);
    expect(got[0]).toEqual(items);
  });

  it('a provider line that is not JSON fails the provider, and the strategy it was passed on to drops it and keeps serving', async () => {
    const items = syntheticItems(5000);
    const broken = `{"jsonrpc":"2.0","method":"$/items","params":{"items_id":"r-1","items":[${'{"line_index":0,'.repeat(6000)}}}`;
    const { host, got, wires } = memoryHost(({ id, version }) => (c) => {
      c.onRequest(P.Methods.initialize, () => ({ protocol_version: 1, plugin: { id, version }, providers: [{ id: 'claude_code', display_name: 'Mem' }], features: ['items_ref'] }));
      c.onRequest(P.Methods.providerParse, () => {
        mems[1]!.rawToHost(broken);
        return new Promise(() => undefined);
      });
    });
    await host.strategy('elide');
    const provider = await host.provider('claude_code');
    const error = await provider.parse({ path: '/x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'plugin_not_json' });
    // The broken text did reach the strategy (passed on before the host parsed it).
    const passedOn = wires['strategies-core']!.sent.filter((l) => l.raw.toString('utf8').startsWith(`{"jsonrpc":"2.0","method":"${P.Methods.items}"`));
    expect(passedOn).toHaveLength(1);
    expect(passedOn[0]!.message).toEqual({});
    const strategy = await host.strategy('elide');
    await strategy.propose(proposeNothing(items));
    expect(got[0]).toEqual(items);
  });
});
