import { existsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { loadExeca } from '../../load-execa.js';

export type NetworkChoice = 'auto' | 'netns' | 'loopback';

export type NamespaceSupport =
  | { available: true; unshare: string; unshareArgs: string[]; ip: string }
  | { available: false; reason: string };

const SYSTEM_DIRS = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];

function findTool(name: string, env: NodeJS.ProcessEnv): string | null {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter((d) => d && isAbsolute(d)), ...SYSTEM_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

let cached: Promise<NamespaceSupport> | null = null;

/**
 * Whether a client can be put in a private network namespace that has only loopback: `unshare -n`
 * as root, else `unshare -r -n` through an unprivileged user namespace, and `ip` to bring `lo` up
 * inside it. Probed once per process by doing exactly that.
 */
export function detectLoopbackNamespace(env: NodeJS.ProcessEnv = process.env): Promise<NamespaceSupport> {
  cached ??= probe(env);
  return cached;
}

async function probe(env: NodeJS.ProcessEnv): Promise<NamespaceSupport> {
  if (process.platform !== 'linux') return { available: false, reason: 'network namespaces exist only on Linux' };
  const unshare = findTool('unshare', env);
  const ip = findTool('ip', env);
  if (!unshare) return { available: false, reason: 'unshare (util-linux) is not installed' };
  if (!ip) return { available: false, reason: 'ip (iproute2) is not installed' };
  let lastError = '';
  for (const unshareArgs of [['-n'], ['-r', '-n']]) {
    const execa = await loadExeca();
    const result = await execa(unshare, [...unshareArgs, '--', ip, 'link', 'set', 'lo', 'up'], {
      reject: false,
      timeout: 5000,
      stdin: 'ignore',
      extendEnv: false,
      env: { PATH: env.PATH ?? '' },
    });
    if (result.exitCode === 0) return { available: true, unshare, unshareArgs, ip };
    lastError = String(result.stderr || result.shortMessage).split('\n')[0] ?? '';
  }
  return { available: false, reason: `unshare -n is not permitted here (${lastError.trim()})` };
}
