import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { usageError } from '../../errors.js';
import type { PluginRef } from '../../../schemas/generated/types.js';
import type { BundleRef } from '../registry/bundle-ref.js';
import type { PluginRegistry } from '../registry/registry.js';

const BUNDLE_SPEC = /^[A-Za-z0-9_.-]{1,128}(@[A-Za-z0-9_.+-]{1,64})?$/;

/**
 * What a `plugin check|inspect` argument names: an existing path (directory or manifest), else a
 * bundle id (`id` or `id@version`) of a bundle the config `pins`, an installed or a built-in one.
 */
export function bundleTarget(arg: string, registry: PluginRegistry, pins: PluginRef[], cwd = process.cwd()): { path: string } | { ref: BundleRef } {
  // An empty argument would otherwise resolve to the current directory.
  if (arg.trim() === '') throw usageError('bad_source', 'the bundle argument is empty; give a bundle id (id or id@version) or a bundle directory');
  const path = resolve(cwd, arg);
  if (existsSync(path) || !BUNDLE_SPEC.test(arg) || arg.startsWith('.')) return { path };
  return { ref: registry.findBundle(arg, pins) };
}
