import { describe, expect, it } from 'vitest';
import { ProviderClient } from '../../../kernel/plugins/host/clients.js';
import type { RunningBundle } from '../../../kernel/plugins/host/running-bundle.js';
import { PluginFailure } from '../../../kernel/plugins/protocol/plugin-failure.js';
import { PluginErrorCodes } from '../../../sdk/protocol.js';

/** A provider client whose every call is answered with `failure`. */
function answering(failure: Error): ProviderClient {
  const running = { channel: { request: () => Promise.reject(failure) } } as unknown as RunningBundle;
  return new ProviderClient(running, { id: 'claude_code' } as never);
}

const answered = (rpcCode: number, text: string) =>
  new PluginFailure('plugin_error', { pluginId: 'provider-x', method: 'provider/parse', reason: `answered provider/parse with error ${rpcCode}: ${text}`, rpcCode, rpcMessage: text });

describe('provider answers the kernel reads', () => {
  it('a "source changed" answer is the kernel\'s source_changed, in the provider\'s words', async () => {
    const client = answering(answered(PluginErrorCodes.SourceChanged, '/s/a.jsonl changed since it was hashed'));
    await expect(client.parse({ path: '/s/a.jsonl' })).rejects.toMatchObject({
      code: 'source_changed',
      message: '/s/a.jsonl changed since it was hashed; run the command again on the session as it is now',
      details: { plugin_id: 'provider-x', rpc_code: PluginErrorCodes.SourceChanged },
    });
  });

  it('a file it cannot read or that is over a limit is named as such, in its words', async () => {
    const invalid = answering(answered(PluginErrorCodes.InvalidInput, '/s/a.jsonl: record 60 is not valid UTF-8'));
    await expect(invalid.verify({ path: '/s/a.jsonl' })).rejects.toMatchObject({ code: 'invalid_transcript', message: '/s/a.jsonl: record 60 is not valid UTF-8' });
    const large = answering(answered(PluginErrorCodes.LimitExceeded, '/s/a.jsonl has more than 100000 records'));
    await expect(large.parse({ path: '/s/a.jsonl' })).rejects.toMatchObject({ code: 'transcript_too_large' });
  });

  it('any other answer stays a plugin error', async () => {
    const client = answering(answered(PluginErrorCodes.CapabilityDenied, 'not allowed'));
    await expect(client.parse({ path: '/s/a.jsonl' })).rejects.toMatchObject({ code: 'plugin_error' });
  });
});

describe("a provider's items name each record at most once", () => {
  const item = (line_index: number) => ({ line_index, kind: 'user', est_tokens: 1, label: 'u' });
  /** A provider client whose parse answers with `items` over `records` records. */
  function parsing(items: ReturnType<typeof item>[], records: number): ProviderClient {
    const transcript = { items, record_count: records };
    const running = { channel: { request: () => Promise.resolve(transcript) }, bundle: { manifest: { id: 'provider-x' } } } as unknown as RunningBundle;
    return new ProviderClient(running, { id: 'claude_code' } as never);
  }

  it('two items on one line, or one past the last record, name the provider before any strategy is blamed', async () => {
    await expect(parsing([item(0), item(1), item(1)], 3).parse({ path: '/s/a.jsonl' })).rejects.toMatchObject({
      code: 'invalid_provider_transcript',
      message: 'provider claude_code (plugin provider-x) returned items that are not one per record: two items have line index 1',
      details: { plugin_id: 'provider-x' },
    });
    await expect(parsing([item(0), item(1006)], 3).parse({ path: '/s/a.jsonl' })).rejects.toMatchObject({
      message: expect.stringContaining("an item has line index 1006, past the transcript's 3 records"),
    });
  });

  it('items in any order, or fewer than the records, are fine', async () => {
    await expect(parsing([item(2), item(0)], 3).parse({ path: '/s/a.jsonl' })).resolves.toMatchObject({ record_count: 3 });
    // A record count no memory could index by is not allocated for.
    await expect(parsing([item(5)], 1e12).parse({ path: '/s/a.jsonl' })).resolves.toMatchObject({ record_count: 1e12 });
  });
});

describe('a provider reports its own sessions only', () => {
  /** A claude_code provider client whose every call is answered with `result`. */
  function answeringWith(result: unknown): ProviderClient {
    const running = { channel: { request: () => Promise.resolve(result) }, bundle: { manifest: { id: 'provider-x' } } } as unknown as RunningBundle;
    return new ProviderClient(running, { id: 'claude_code' } as never);
  }
  const handle = (provider: string) => ({ provider, session_id: '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11', path: '/s/a.jsonl' });

  it("a session handle naming another provider is refused, naming the plugin, instead of routing the file to that provider", async () => {
    const expected = {
      code: 'invalid_provider_session',
      message: 'provider claude_code (plugin provider-x) answered provider/discover with a session of provider codex (/s/a.jsonl); a provider may only report its own sessions',
      details: { plugin_id: 'provider-x', claimed_provider: 'codex' },
    };
    await expect(answeringWith({ sessions: [{ session: handle('claude_code'), usage: null, bytes_read: 1 }, { session: handle('codex'), usage: null, bytes_read: 1 }] }).discover()).rejects.toMatchObject(expected);
    await expect(answeringWith({ matches: true, session: handle('codex') }).identify({ path: '/s/a.jsonl' })).rejects.toMatchObject({ code: 'invalid_provider_session', message: expect.stringContaining('answered provider/identify') });
    await expect(answeringWith({ session: handle('codex'), items: [], record_count: 0 }).parse({ path: '/s/a.jsonl' })).rejects.toMatchObject({ code: 'invalid_provider_session', message: expect.stringContaining('answered provider/parse') });
  });

  it('its own sessions, and no match at all, pass', async () => {
    await expect(answeringWith({ sessions: [{ session: handle('claude_code'), usage: null, bytes_read: 1 }] }).discover()).resolves.toMatchObject({ sessions: [{ session: { provider: 'claude_code' } }] });
    await expect(answeringWith({ matches: false, session: null }).identify({ path: '/s/a.jsonl' })).resolves.toMatchObject({ matches: false });
  });
});
