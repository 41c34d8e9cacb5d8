import { PassThrough } from 'node:stream';
import { createMessageConnection, type MessageConnection } from 'vscode-jsonrpc/node';
import { attachPlugin, type PluginDefinition } from '../../sdk/serve.js';
import { NdjsonMessageReader, NdjsonMessageWriter } from '../../sdk/transport/ndjson.js';

/**
 * A host connection wired to a plugin definition through in-memory NDJSON streams: protocol
 * tests run the real framing and dispatch without spawning anything.
 */
export function connectInMemory(def: PluginDefinition): { host: MessageConnection; plugin: MessageConnection; dispose(): void } {
  const toPlugin = new PassThrough();
  const toHost = new PassThrough();
  const plugin = createMessageConnection(new NdjsonMessageReader(toPlugin), new NdjsonMessageWriter(toHost));
  attachPlugin(plugin, def);
  plugin.listen();
  const host = createMessageConnection(new NdjsonMessageReader(toHost), new NdjsonMessageWriter(toPlugin));
  host.listen();
  return {
    host,
    plugin,
    dispose() {
      host.dispose();
      plugin.dispose();
    },
  };
}
