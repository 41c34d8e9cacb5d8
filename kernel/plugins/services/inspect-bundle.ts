import { resolve } from 'node:path';
import type { ConfigPinUse, InitializeResult, PluginInspectCommandResult, PluginManifest, StrategyInfo } from '../../../schemas/generated/types.js';
import { checkStrategyParams } from '../host/strategy-params.js';
import { GobstopperError, usageError } from '../../errors.js';
import { admitBundle } from '../admission/admit.js';
import { PluginHost } from '../host/plugin-host.js';
import { bundleLabel, pinUse, providesOf, type BundleRef, type ConfigPin } from '../registry/bundle-ref.js';
import type { PluginRegistry } from '../registry/registry.js';
import { bundleTarget } from './bundle-target.js';

export interface InspectOptions {
  /** Required to run a bundle from a directory: the manifest_sha256 `plugin check` printed. */
  trustedSha256?: string;
  /**
   * The config's pins: a bundle id names a pinned bundle first, and the result names the tables
   * pinning it. Asked only for an id, so a config that cannot be read stops no look at a path.
   */
  pins?: () => ConfigPin[];
  hostEnv?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** `plugin inspect`: starts the bundle, runs initialize, reports the handshake, shuts it down. */
export async function inspectBundle(arg: string, registry: PluginRegistry, options: InspectOptions = {}): Promise<PluginInspectCommandResult> {
  const pins = options.pins ?? (() => []);
  const target = bundleTarget(arg, registry, pins, options.cwd);
  let ref: BundleRef;
  let source: PluginInspectCommandResult['source'];
  let pinnedIn: ConfigPinUse[] | undefined;
  if ('ref' in target) {
    ref = withTrustedPin(target.ref, options.trustedSha256);
    source = ref.source;
    if (source === 'config') pinnedIn = pinUses(pins(), target.ref);
  } else {
    // Running code from a directory is only done against the pin the user read from `plugin check`,
    // or the one `plugin add` recorded for exactly these bytes (the directory it installed from).
    const admitted = admitBundle(target.path, { gobstopperVersion: registry.version });
    const recorded = registry.trust.find(admitted.manifest.id, admitted.manifest.version)?.manifest_sha256;
    // Hex in either case, as for an installed bundle: sha256 tools differ in which they print.
    const trustedSha256 = options.trustedSha256?.toLowerCase() ?? (recorded === admitted.manifestSha256 ? recorded : undefined);
    if (!trustedSha256) {
      throw usageError(
        'trust_required',
        `inspecting ${target.path} runs its code; pass --trusted-sha256 ${admitted.manifestSha256} after checking it with \`gobstopper plugin check\`, or add it with \`gobstopper plugin add\``,
      );
    }
    const { manifest } = admitted;
    ref = { source: 'config', root: admitted.root, id: manifest.id, version: manifest.version, provides: providesOf(manifest), capabilities: manifest.capabilities ?? [], pinnedSha256: trustedSha256 };
    source = 'directory';
  }
  const host = new PluginHost({ registry, hostEnv: options.hostEnv });
  try {
    const running = await host.inspect(ref);
    // Closed here rather than with the host, to see whether it answers shutdown: one that does not
    // costs every command that starts it the shutdown deadline.
    await running.channel.close();
    const unusable = await unusableParamsSchemas(running.handshake.strategies ?? []);
    return {
      id: running.bundle.manifest.id,
      version: running.bundle.manifest.version,
      source,
      path: running.bundle.root,
      manifest_sha256: running.bundle.manifestSha256,
      protocol_version: running.handshake.protocol_version,
      capabilities: running.bundle.manifest.capabilities ?? [],
      limits: { timeout_ms: running.limits.timeoutMs, max_output_bytes: running.limits.maxOutputBytes, max_stderr_bytes: running.limits.stderrBytes },
      providers: running.handshake.providers ?? [],
      strategies: running.handshake.strategies ?? [],
      scorers: running.handshake.scorers ?? [],
      not_served: notServed(running.bundle.manifest.provides, running.handshake),
      ...(unusable.length > 0 ? { unusable_params_schemas: unusable } : {}),
      ...(pinnedIn === undefined ? {} : { pinned_in: pinnedIn }),
      shutdown_answered: running.channel.shutdownAnswered,
    };
  } finally {
    await host.close();
  }
}

/**
 * A hash given for a named bundle is held to as well: a script that passes one relies on it being
 * checked. It must agree with the bundle's own pin, and the bundle's files must still match it.
 */
function withTrustedPin(ref: BundleRef, trusted: string | undefined): BundleRef {
  if (trusted === undefined) return ref;
  const wanted = trusted.toLowerCase();
  if (ref.pinnedSha256 !== null && ref.pinnedSha256 !== wanted) {
    throw new GobstopperError('pin_mismatch', `--trusted-sha256 ${wanted} is not the pin of ${bundleLabel(ref)} (${ref.pinnedSha256}); nothing was run`, {
      details: { pinned_sha256: ref.pinnedSha256, trusted_sha256: wanted },
    });
  }
  return { ...ref, pinnedSha256: wanted };
}

/** The tables that pin exactly this bundle: its manifest, with its hash. */
function pinUses(pins: ConfigPin[], ref: BundleRef): ConfigPinUse[] {
  return pins
    .filter((pin) => resolve(pin.manifest, '..') === ref.root && pin.trusted_sha256 === ref.pinnedSha256)
    .map(pinUse);
}

/** What the manifest promises and the handshake does not offer: a call for it would fail. */
function notServed(provides: PluginManifest['provides'], handshake: InitializeResult): string[] {
  const offered = (list: Array<{ id: string }> | undefined) => new Set((list ?? []).map((x) => x.id));
  const kinds = [
    ['provider', provides.providers, offered(handshake.providers)],
    ['strategy', provides.strategies, offered(handshake.strategies)],
    ['scorer', provides.scorers, offered(handshake.scorers)],
  ] as const;
  return kinds.flatMap(([kind, ids, served]) => (ids ?? []).filter((id) => !served.has(id)).map((id) => `${kind} ${id}`));
}

/**
 * Each params_schema checked as plan checks it before a strategy runs (empty params against it): one
 * the host cannot compile would otherwise pass inspect and fail every plan of that strategy.
 */
async function unusableParamsSchemas(strategies: readonly StrategyInfo[]): Promise<Array<{ strategy: string; problem: string }>> {
  const found: Array<{ strategy: string; problem: string }> = [];
  for (const s of strategies) {
    if (!s.params_schema) continue;
    try {
      await checkStrategyParams(s.id, s.params_schema, {});
    } catch (error) {
      if (error instanceof GobstopperError && error.code === 'plugin_schema_violation') found.push({ strategy: s.id, problem: error.message });
    }
  }
  return found;
}
