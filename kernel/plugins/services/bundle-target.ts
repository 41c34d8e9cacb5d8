import { existsSync, lstatSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GobstopperError, usageError } from '../../errors.js';
import type { PluginRef } from '../../../schemas/generated/types.js';
import { MANIFEST_FILE } from '../admission/rules.js';
import type { BundleRef } from '../registry/bundle-ref.js';
import type { PluginRegistry } from '../registry/registry.js';

const BUNDLE_SPEC = /^[A-Za-z0-9_.-]{1,128}(@[A-Za-z0-9_.+-]{1,64})?$/;

/**
 * What a `plugin check|inspect` argument names: an existing path (directory or manifest), else a
 * bundle id (`id` or `id@version`) of a bundle the config `pins`, an installed or a built-in one.
 * `pins` is asked only for an id, so a config that cannot be read stops no look at a path.
 */
export function bundleTarget(arg: string, registry: PluginRegistry, pins: () => PluginRef[], cwd = process.cwd()): { path: string } | { ref: BundleRef } {
  // An empty argument would otherwise resolve to the current directory.
  if (arg.trim() === '') throw usageError('bad_source', 'the bundle argument is empty; give a bundle id (id or id@version) or a bundle directory');
  const path = resolve(cwd, arg);
  if (!BUNDLE_SPEC.test(arg) || arg.startsWith('.')) return { path };
  if (!existsSync(path)) return { ref: registry.findBundle(arg, pins()) };
  // An author's source folder is often named after the bundle it builds (halve-js/, with the
  // bundle in halve-js/bundle/): run from beside it, the id still names the bundle, since a folder
  // without a manifest cannot be what was meant. A bundle of no such id keeps the path's own error.
  if (isDirectoryWithoutManifest(path)) {
    try {
      return { ref: registry.findBundle(arg, pins()) };
    } catch (error) {
      if (error instanceof GobstopperError && error.code === 'plugin_not_found') return { path };
      throw error;
    }
  }
  return { path };
}

function isDirectoryWithoutManifest(path: string): boolean {
  try {
    if (!statSync(path).isDirectory()) return false;
  } catch {
    return false;
  }
  try {
    lstatSync(join(path, MANIFEST_FILE));
    return false;
  } catch {
    return true;
  }
}
