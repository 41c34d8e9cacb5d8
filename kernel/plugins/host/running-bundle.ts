import type { InitializeResult } from '../../../schemas/generated/types.js';
import type { AdmittedBundle } from '../admission/admit.js';
import { spawnPluginProcess } from '../process/plugin-process.js';
import type { PluginLogSink } from '../protocol/host-callbacks.js';
import { PluginChannel, type ChannelTransport } from '../protocol/plugin-channel.js';
import { handshake } from './handshake.js';
import { effectiveLimits, type EffectiveLimits } from './plugin-limits.js';

/** A bundle's warm process after a successful handshake. */
export interface RunningBundle {
  bundle: AdmittedBundle;
  channel: PluginChannel;
  handshake: InitializeResult;
  limits: EffectiveLimits;
  /** Process id (= process group id); undefined for in-memory plugins. */
  pid: number | undefined;
}

export interface StartOptions {
  hostEnv?: NodeJS.ProcessEnv;
  hostVersion: string;
  cancelGraceMs?: number;
  log?: PluginLogSink;
}

/** Spawns an admitted bundle and runs the initialize handshake; a failed handshake leaves nothing running. */
export async function startBundle(bundle: AdmittedBundle, options: StartOptions): Promise<RunningBundle> {
  const limits = effectiveLimits(bundle.manifest);
  const child = await spawnPluginProcess(bundle, { hostEnv: options.hostEnv, maxOutputBytes: limits.maxOutputBytes, stderrBytes: limits.stderrBytes });
  return connectBundle(bundle, child.transport, options, child.pid);
}

/** The same over any transport (in-memory streams in protocol tests). */
export async function connectBundle(bundle: AdmittedBundle, transport: ChannelTransport, options: StartOptions, pid?: number): Promise<RunningBundle> {
  const limits = effectiveLimits(bundle.manifest);
  const channel = new PluginChannel(transport, {
    pluginId: bundle.manifest.id,
    pluginVersion: bundle.manifest.version,
    timeoutMs: limits.timeoutMs,
    cancelGraceMs: options.cancelGraceMs,
    capabilities: bundle.manifest.capabilities ?? [],
    maxOutputBytes: limits.maxOutputBytes,
    log: options.log,
  });
  try {
    const result = await handshake(channel, bundle.manifest, options.hostVersion);
    return { bundle, channel, handshake: result, limits, pid };
  } catch (error) {
    await channel.kill('plugin_handshake_failed', 'failed the initialize handshake').catch(() => undefined);
    throw error;
  }
}
