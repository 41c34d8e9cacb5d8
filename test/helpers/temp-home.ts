import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway HOME with every XDG and provider home inside it; tests never see the real ones. */
export interface TempHome {
  root: string;
  env: Record<string, string>;
  claudeHome: string;
  codexHome: string;
  dataHome: string;
  configHome: string;
  cleanup(): void;
}

export function makeTempHome(prefix = 'gob-home-'): TempHome {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const claudeHome = join(root, '.claude');
  const codexHome = join(root, '.codex');
  const dataHome = join(root, '.local', 'share');
  const configHome = join(root, '.config');
  const stateHome = join(root, '.local', 'state');
  const cacheHome = join(root, '.cache');
  for (const d of [claudeHome, codexHome, dataHome, configHome, stateHome, cacheHome]) mkdirSync(d, { recursive: true });
  const env: Record<string, string> = {
    HOME: root,
    CLAUDE_CONFIG_DIR: claudeHome,
    CODEX_HOME: codexHome,
    XDG_DATA_HOME: dataHome,
    XDG_CONFIG_HOME: configHome,
    XDG_STATE_HOME: stateHome,
    XDG_CACHE_HOME: cacheHome,
  };
  return { root, env, claudeHome, codexHome, dataHome, configHome, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
