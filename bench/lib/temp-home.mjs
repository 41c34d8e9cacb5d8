// A throwaway home for a benchmark: the client homes and every XDG directory inside one temporary
// directory, so a run never reads or writes the configuration, sessions, plugins or vault of
// whoever runs it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const DIRS = {
  CLAUDE_CONFIG_DIR: '.claude',
  CODEX_HOME: '.codex',
  XDG_CONFIG_HOME: '.config',
  XDG_DATA_HOME: join('.local', 'share'),
  XDG_STATE_HOME: join('.local', 'state'),
  XDG_CACHE_HOME: '.cache',
};

/** The environment of a home at `dir`, its directories made. */
export function tempHomeEnv(dir) {
  const env = { ...process.env, HOME: dir };
  for (const [key, sub] of Object.entries(DIRS)) {
    env[key] = join(dir, sub);
    mkdirSync(env[key], { recursive: true });
  }
  return env;
}
