/** Load both config files and resolve them for one command invocation. */
import { loadConfig, type LoadedConfig } from './load-config.js';
import { resolveConfig, type PolicyFlags, type ResolvedConfig } from './resolve-config.js';

export interface CommandConfigOptions {
  configPath?: string | undefined;
  provider?: string | null | undefined;
  session_id?: string | null | undefined;
  preset?: string | null | undefined;
  flags?: PolicyFlags;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export async function resolveForCommand(options: CommandConfigOptions): Promise<{ loaded: LoadedConfig; resolved: ResolvedConfig }> {
  const loaded = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
  const resolved = resolveConfig(loaded, {
    provider: options.provider,
    session_id: options.session_id,
    preset: options.preset,
    flags: options.flags,
  });
  return { loaded, resolved };
}
