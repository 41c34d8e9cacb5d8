import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { makeTempHome, type TempHome } from './temp-home.js';

const root = join(import.meta.dirname, '..', '..');
export const DEMO_CLAUDE_ID = '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11';
export const DEMO_CODEX_ID = '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77';
/** A detail only the demo's failed migration output holds: its stack frame, which no state card keeps. */
export const DEMO_ELIDED_DETAIL = 'at Migrator.run (src/db/migrate.ts:88:13)';

export function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
    .sort();
}

export const sha256File = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** A temp home holding the generated demo sessions (idle) and a config with a low trigger. */
export function demoHome(config = '[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n'): TempHome & { claudeSession: string; codexSession: string; claudeDir: string; codexDir: string } {
  const home = makeTempHome('gob-e2e-');
  cpSync(join(root, 'examples', 'sessions', 'claude'), join(home.claudeHome, 'projects'), { recursive: true });
  cpSync(join(root, 'examples', 'sessions', 'codex'), join(home.codexHome, 'sessions'), { recursive: true });
  const hourAgo = new Date(Date.now() - 3600_000);
  for (const f of [...listFiles(home.claudeHome), ...listFiles(home.codexHome)]) utimesSync(f, hourAgo, hourAgo);
  mkdirSync(join(home.configHome, 'gobstopper'), { recursive: true });
  writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config);
  const claudeDir = join(home.claudeHome, 'projects', '-home-dev-projects-invoices');
  const codexDir = join(home.codexHome, 'sessions', '2026', '02', '23');
  return {
    ...home,
    claudeDir,
    codexDir,
    claudeSession: join(claudeDir, `${DEMO_CLAUDE_ID}.jsonl`),
    codexSession: join(codexDir, `rollout-2026-02-23T11-54-34-${DEMO_CODEX_ID}.jsonl`),
  };
}

/**
 * Moves the demo Claude session into another project directory (a name a test wants to try), an
 * hour old as before; returns the new path.
 */
export function moveDemoClaudeSession(home: ReturnType<typeof demoHome>, projectDirName: string): string {
  const dir = join(home.claudeHome, 'projects', projectDirName);
  mkdirSync(dir);
  const moved = join(dir, `${DEMO_CLAUDE_ID}.jsonl`);
  writeFileSync(moved, readFileSync(home.claudeSession));
  rmSync(home.claudeDir, { recursive: true });
  const hourAgo = new Date(Date.now() - 3600_000);
  utimesSync(moved, hourAgo, hourAgo);
  return moved;
}
