/** Where configuration lives. The user file is found by path, never by searching. */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** Names a project file may have, checked in each directory from the working directory upwards. */
export const PROJECT_CONFIG_PLACES = ['.gobstopperrc.toml', 'gobstopper.config.toml', '.config/gobstopper.toml'] as const;

export const MAX_CONFIG_BYTES = 64 * 1024;

/** $XDG_CONFIG_HOME/gobstopper/config.toml, else ~/.config/gobstopper/config.toml. A relative XDG value is ignored, as the XDG spec asks. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), '.config');
  return join(base, 'gobstopper', 'config.toml');
}
