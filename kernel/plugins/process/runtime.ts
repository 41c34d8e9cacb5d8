import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { PluginManifest } from '../../../schemas/generated/types.js';
import { GobstopperError } from '../../errors.js';

export interface Launch {
  file: string;
  args: string[];
}

const resolved = new Map<string, string>();

/**
 * The command line that starts a bundle. Interpreters are found on the host's PATH before the
 * plugin's environment is cleared; node is the node running gobstopper.
 */
export function launchFor(manifest: PluginManifest, root: string, hostEnv: NodeJS.ProcessEnv = process.env): Launch {
  const entry = join(root, manifest.executable);
  const args = manifest.args ?? [];
  switch (manifest.runtime) {
    case 'node':
      return { file: process.execPath, args: [...profilingFlags(hostEnv), entry, ...args] };
    case 'python3':
      // -B: never write __pycache__ into the bundle (it would be an undeclared file next time);
      // -s: no user site-packages.
      return { file: pythonInterpreter(hostEnv), args: ['-B', '-s', entry, ...args] };
    case 'sh':
    case 'bash':
      return { file: onPath(manifest.runtime, hostEnv), args: [entry, ...args] };
    case 'exec':
      return { file: entry, args };
  }
}

/**
 * GOBSTOPPER_PROFILE_PLUGINS=<dir>: node plugins (and their worker threads) write a V8 CPU profile
 * there when they exit, one file per thread, for whoever measures where a command's time goes. The
 * plugin's environment is cleared, so NODE_OPTIONS cannot do this.
 */
export function profilingFlags(hostEnv: NodeJS.ProcessEnv): string[] {
  const dir = hostEnv.GOBSTOPPER_PROFILE_PLUGINS;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(dir)}`] : [];
}

/** Finds an executable on PATH. */
export function onPath(name: string, hostEnv: NodeJS.ProcessEnv = process.env): string {
  const key = `path:${name}:${hostEnv.PATH ?? ''}`;
  const cached = resolved.get(key);
  if (cached) return cached;
  for (const dir of (hostEnv.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      resolved.set(key, candidate);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new GobstopperError('runtime_missing', `cannot start the plugin: ${name} is not on PATH`, { details: { runtime: name } });
}

/**
 * The real python3 binary. Version managers put shell shims on PATH that need their own
 * environment, which a plugin does not get; the interpreter itself needs none.
 */
function pythonInterpreter(hostEnv: NodeJS.ProcessEnv): string {
  const shim = onPath('python3', hostEnv);
  const key = `python:${shim}`;
  const cached = resolved.get(key);
  if (cached) return cached;
  let real = shim;
  try {
    const out = execFileSync(shim, ['-c', 'import sys; sys.stdout.write(sys.executable)'], { env: hostEnv, encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (out && isAbsolute(out)) real = out;
  } catch {
    // Use the PATH entry as is; if it needs an environment the plugin fails with its stderr shown.
  }
  resolved.set(key, real);
  return real;
}
