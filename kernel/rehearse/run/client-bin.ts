import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { GobstopperError } from '../../errors.js';
import type { RehearsalProvider } from '../../../schemas/generated/types.js';

interface ClientSpec {
  command: string;
  envVar: string;
  flag: string;
  packageName: string;
}

export const CLIENTS: Record<RehearsalProvider, ClientSpec> = {
  claude_code: { command: 'claude', envVar: 'GOBSTOPPER_CLAUDE_BIN', flag: '--claude-bin', packageName: '@anthropic-ai/claude-code' },
  codex: { command: 'codex', envVar: 'GOBSTOPPER_CODEX_BIN', flag: '--codex-bin', packageName: '@openai/codex' },
};

/** Whether `provider` has a client a rehearsal can run. */
export const isRehearsable = (provider: string): provider is RehearsalProvider => Object.hasOwn(CLIENTS, provider);

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The client binary to rehearse with: the explicit path, else the provider's environment variable,
 * else the first executable of that name on PATH. A missing client is an error that says how to
 * get one, never a silent skip.
 */
export function resolveClientBin(provider: RehearsalProvider, explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const spec = CLIENTS[provider];
  const chosen = explicit ?? (env[spec.envVar] || undefined);
  if (chosen !== undefined) {
    const path = isAbsolute(chosen) || chosen.includes('/') ? resolve(chosen) : findOnPath(chosen, env);
    if (path && isExecutableFile(path)) return path;
    const source = explicit !== undefined ? spec.flag : spec.envVar;
    throw new GobstopperError('client_missing', `${whyNotClient(chosen, path, spec.command)} (from ${source}); point ${spec.flag} or ${spec.envVar} at an installed ${spec.packageName}`);
  }
  const found = findOnPath(spec.command, env);
  if (found) return found;
  throw new GobstopperError(
    'client_missing',
    `${spec.command} client not found on PATH; install ${spec.packageName} or pass ${spec.flag} (or set ${spec.envVar})`,
  );
}

/** Why the file a flag or variable named cannot be run as the client, in the words of the file itself. */
function whyNotClient(chosen: string, path: string | null, command: string): string {
  const st = path ? statSync(path, { throwIfNoEntry: false }) : undefined;
  if (!st) return `${command} client not found at ${chosen}`;
  if (st.isDirectory()) return `${chosen} is a directory, not the ${command} client`;
  if (!st.isFile()) return `${chosen} is not a regular file, so not the ${command} client`;
  return `${chosen} is not executable (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}), so it cannot be run as the ${command} client`;
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}
