import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { PluginCheckCommandResult, PluginRef } from '../../../schemas/generated/types.js';
import { admitBundle } from '../admission/admit.js';
import { providesOf } from '../registry/bundle-ref.js';
import { aboutArchive, isTarballFile, openBundleSource } from '../registry/bundle-source.js';
import type { PluginRegistry } from '../registry/registry.js';
import { addRefusal } from '../registry/install.js';
import { bundleTarget } from './bundle-target.js';

/** `plugin check`: admission only; nothing of the bundle runs. A bundle id names one of the config's `pins` first. */
export function checkBundle(arg: string, registry: PluginRegistry, pins: () => PluginRef[], cwd = process.cwd()): PluginCheckCommandResult {
  const target = bundleTarget(arg, registry, pins, cwd);
  const admitted = 'ref' in target ? registry.admit(target.ref) : admitBundle(target.path, { gobstopperVersion: registry.version });
  // A bundle given by its files is one to add: what add would refuse is said now.
  const refusal = 'ref' in target ? null : addRefusal(registry, admitted);
  const { manifest } = admitted;
  const pin = registry.trust.find(manifest.id, manifest.version);
  // Built-ins are trusted because they ship inside the gobstopper package.
  const builtin = registry.builtins().refs.some((r) => realpathSync(r.root) === admitted.root);
  return {
    path: admitted.root,
    protocol_version: manifest.protocol_version,
    id: manifest.id,
    version: manifest.version,
    manifest_sha256: admitted.manifestSha256,
    provides: providesOf(manifest),
    capabilities: manifest.capabilities ?? [],
    runtime: manifest.runtime,
    files: admitted.files.length,
    bytes: admitted.totalBytes,
    code_executed: false,
    // A config pin was just compared with the manifest by registry.admit.
    trusted: builtin || pin?.manifest_sha256 === admitted.manifestSha256 || ('ref' in target && target.ref.source === 'config'),
    ...(refusal && !builtin ? { add_refusal: { code: refusal.code, message: refusal.message } } : {}),
  };
}

/**
 * `plugin check` of anything it takes: a packed bundle (.tgz) is checked as `plugin add` would see
 * it, unpacked into a temporary directory, admitted and thrown away; anything else as checkBundle.
 */
export async function checkBundleSource(arg: string, registry: PluginRegistry, pins: () => PluginRef[], cwd = process.cwd()): Promise<PluginCheckCommandResult> {
  const local = resolve(cwd, arg);
  if (!isTarballFile(local)) return checkBundle(arg, registry, pins, cwd);
  const opened = await openBundleSource(local);
  try {
    return { ...checkBundle(opened.dir, registry, pins, cwd), path: local };
  } catch (error) {
    throw aboutArchive(opened, error);
  } finally {
    opened.cleanup();
  }
}
