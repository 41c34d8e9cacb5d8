import type { InitializeResult, PluginManifest } from '../../../schemas/generated/types.js';
import { Initialize, Methods, ProtocolFeatures, SUPPORTED_PROTOCOL_VERSIONS } from '../../../sdk/protocol.js';
import type { PluginChannel } from '../protocol/plugin-channel.js';
import { PluginFailure } from '../protocol/plugin-failure.js';

/**
 * `initialize`: offers the protocol versions the host speaks and checks the answer against the
 * manifest (same id and version, a version both sides speak, nothing served that the manifest
 * does not declare). A mismatch kills the plugin.
 */
export async function handshake(channel: PluginChannel, manifest: PluginManifest, hostVersion: string): Promise<InitializeResult> {
  const result = await channel.request(Initialize, {
    protocol_versions: [...SUPPORTED_PROTOCOL_VERSIONS],
    host: { name: 'gobstopper', version: hostVersion },
    features: [ProtocolFeatures.itemsRef],
  });
  const problem = handshakeProblem(result, manifest);
  if (problem) throw await channel.kill('plugin_handshake_failed', `failed the initialize handshake: ${problem}`, Methods.initialize);
  channel.useFeatures(result.features ?? []);
  return result;
}

/**
 * How deeply a strategy's params_schema may nest (objects and arrays). It is the one member of a
 * handshake the schemas leave free, and the host serializes and compiles it recursively (to cache
 * its validator, to look for patterns, for plugin inspect): a schema nested thousands deep ended
 * every command that used the strategy in a bare "Maximum call stack size exceeded". Real schemas
 * nest a handful of levels.
 */
export const MAX_PARAMS_SCHEMA_DEPTH = 64;

/** Whether `value` nests objects or arrays more than `limit` deep; iterative, so it cannot overflow itself. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

export function handshakeProblem(result: InitializeResult, manifest: PluginManifest): string | null {
  if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly number[]).includes(result.protocol_version)) {
    return `it chose protocol version ${result.protocol_version}, the host speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`;
  }
  if (result.protocol_version !== manifest.protocol_version) {
    return `it chose protocol version ${result.protocol_version} but its manifest says ${manifest.protocol_version}`;
  }
  if (result.plugin.id !== manifest.id) return `it says its id is ${result.plugin.id}, the manifest says ${manifest.id}`;
  if (result.plugin.version !== manifest.version) return `it says its version is ${result.plugin.version}, the manifest says ${manifest.version}`;
  const undeclared = (kind: string, served: { id: string }[] | undefined, declared: string[] | undefined) => {
    const allowed = new Set(declared ?? []);
    const extra = (served ?? []).map((s) => s.id).filter((id) => !allowed.has(id));
    return extra.length > 0 ? `it serves ${kind} ${extra.join(', ')} that its manifest does not declare` : null;
  };
  // Two entries for one id may differ in kind, schema or provider_ids; the host would use one and
  // plugin inspect show both, so neither can be trusted to be the one the plugin meant.
  const twice = (kind: string, served: { id: string }[] | undefined) => {
    const seen = new Set<string>();
    const again = (served ?? []).find((s) => seen.size === seen.add(s.id).size);
    return again ? `it offers ${kind} ${again.id} twice` : null;
  };
  const offeredTwice = twice('provider', result.providers) ?? twice('strategy', result.strategies) ?? twice('scorer', result.scorers);
  if (offeredTwice) return offeredTwice;
  const tooDeep = (result.strategies ?? []).find((s) => nestedDeeperThan(s.params_schema, MAX_PARAMS_SCHEMA_DEPTH));
  if (tooDeep) return `the params_schema of strategy ${tooDeep.id} nests more than ${MAX_PARAMS_SCHEMA_DEPTH} levels deep`;
  return (
    undeclared('providers', result.providers, manifest.provides.providers) ??
    undeclared('strategies', result.strategies, manifest.provides.strategies) ??
    undeclared('scorers', result.scorers, manifest.provides.scorers)
  );
}

export { PluginFailure };
