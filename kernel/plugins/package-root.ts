import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'gobstopper';

let cachedRoot: string | undefined;
let cachedVersion: string | undefined;

/**
 * The directory holding gobstopper's own package.json. Found by walking up from this module, so it
 * is the same whether the compiled module (dist/kernel/...) or the TypeScript source (kernel/...)
 * is running.
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: unknown };
        if (pkg.name === PACKAGE_NAME) return (cachedRoot = dir);
      } catch {
        // A malformed package.json of some enclosing project is not ours; keep walking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the gobstopper package root above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** The running gobstopper version, from the package.json at the package root. */
export function gobstopperVersion(): string {
  if (cachedVersion) return cachedVersion;
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string') throw new Error('gobstopper package.json has no version');
  return (cachedVersion = pkg.version);
}

/**
 * The compiled file of a kernel module (`name` relative to kernel/, as `eval/parallel-worker.js`)
 * that a worker or child process is started with, when the caller at `callerUrl` runs compiled;
 * null when it runs from TypeScript sources (tests), whose callers then start the source beside
 * them. Found from the package root, not beside the caller: the CLI's commands run bundled from
 * dist/cli/, while the modules workers start stay in dist/kernel/.
 */
export function compiledKernelModule(callerUrl: string, name: string): string | null {
  if (!callerUrl.endsWith('.js')) return null;
  const file = join(packageRoot(), 'dist', 'kernel', name);
  return existsSync(file) ? file : null;
}
