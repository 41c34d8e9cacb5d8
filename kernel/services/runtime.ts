/**
 * One command's connection to the plugin world: a plugin host with warm
 * processes, the provider clients, and the per-provider home overrides. Services take a runtime
 * so they can be called in-process, not only through the CLI.
 */
import { checkLimitEnvironment } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';
import { PluginHost } from '../plugins/host/plugin-host.js';
import type { ProviderClient } from '../plugins/host/clients.js';
import { stderrPluginLog } from '../plugins/host/plugin-log.js';
import type { PluginLogSink } from '../plugins/protocol/host-callbacks.js';
import type { ProviderHomes } from '../sessions/provider-port.js';
import { meantNote } from '../text/edit-distance.js';

export interface RuntimeOptions {
  env?: NodeJS.ProcessEnv;
  homes?: ProviderHomes;
  /** Restrict to these provider ids (`--provider`). */
  providers?: string[];
  /** Where plugins' warnings go; default stderr, one line each (plugin-log.ts). */
  log?: PluginLogSink;
  /**
   * withRuntime fails the command when a plugin broke the protocol after answering (an answer sent
   * twice), found by the time every plugin has shut down: for commands that write nothing.
   */
  refuseLateBreaches?: boolean;
}

export class Runtime {
  readonly host: PluginHost;
  readonly env: NodeJS.ProcessEnv;
  readonly homes: ProviderHomes;
  private readonly only: string[] | undefined;

  constructor(options: RuntimeOptions = {}) {
    this.env = options.env ?? process.env;
    checkLimitEnvironment(this.env);
    this.homes = options.homes ?? {};
    this.only = options.providers;
    this.host = new PluginHost({ env: this.env, hostEnv: this.env, log: options.log ?? stderrPluginLog(this.env) });
  }

  /** Every provider id some usable bundle provides, in a stable order. */
  providerIds(): string[] {
    const r = this.host.registry;
    const ids = new Set<string>();
    for (const ref of [...r.installed(), ...r.builtins().refs]) for (const id of ref.provides.providers) ids.add(id);
    const all = [...ids].sort();
    const homeless = Object.keys(this.homes).filter((id) => !ids.has(id));
    if (homeless.length) {
      const meant = homeless.length === 1 ? meantNote(homeless[0]!, all) : '';
      throw new GobstopperError('unknown_provider', `--provider-home names unknown provider ${homeless.map((p) => JSON.stringify(p)).join(', ')}${meant}; known: ${all.join(', ') || 'none'}`, { exit: 2 });
    }
    if (!this.only) return all;
    const unknown = this.only.filter((id) => !ids.has(id));
    if (unknown.length) {
      const meant = unknown.length === 1 ? meantNote(unknown[0]!, all) : '';
      throw new GobstopperError('unknown_provider', `unknown provider ${unknown.map((p) => JSON.stringify(p)).join(', ')}${meant}; known: ${all.join(', ') || 'none'}`, { exit: 2 });
    }
    return all.filter((id) => this.only!.includes(id));
  }

  async provider(id: string): Promise<ProviderClient> {
    return this.host.provider(id);
  }

  /** Every provider client; their processes start in parallel. */
  async providers(): Promise<ProviderClient[]> {
    return Promise.all(this.providerIds().map((id) => this.host.provider(id)));
  }

  async close(): Promise<void> {
    await this.host.close();
  }
}

export async function withRuntime<T>(options: RuntimeOptions, body: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = new Runtime(options);
  let answer: T;
  try {
    answer = await body(runtime);
  } finally {
    await runtime.close();
  }
  // A command that only reports (plan) can still refuse what it found once every plugin has
  // answered its shutdown: a breach written before that answer has been read by now.
  if (options.refuseLateBreaches) await runtime.host.requireNoIdleBreach();
  return answer;
}
