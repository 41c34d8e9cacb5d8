import { join } from 'node:path';
import { dataDir } from '../../paths.js';
import { packageRoot } from '../package-root.js';

/** Built-in bundles ship as dist/plugins/<name>/ inside the gobstopper package. */
export function builtinPluginsDir(): string {
  return join(packageRoot(), 'dist', 'plugins');
}

/** `$XDG_DATA_HOME/gobstopper`, else `~/.local/share/gobstopper`. */
export function gobstopperDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return dataDir(env);
}

/** Where `plugin add` puts bundles: `<data>/plugins/<id>/<version>/`. */
export function installedPluginsDir(data: string): string {
  return join(data, 'plugins');
}

/** The pins of installed bundles, one per id@version. */
export function trustFilePath(data: string): string {
  return join(data, 'plugin-trust.json');
}

/** Held while `plugin add` or `plugin remove` changes the plugins directory and the pins. */
export function pluginsLockPath(data: string): string {
  return join(data, 'plugins.lock');
}
