/**
 * Where gobstopper keeps its own state. Every function takes the environment as an argument so tests
 * (and long-lived hosts serving several homes) never depend on the process environment.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export interface PathEnv {
  HOME?: string | undefined;
  XDG_DATA_HOME?: string | undefined;
}

/**
 * `$XDG_DATA_HOME/gobstopper`, else `$HOME/.local/share/gobstopper`. A relative XDG value is ignored,
 * as the XDG base-directory spec requires, so a stray `XDG_DATA_HOME=.` cannot scatter a vault into
 * whatever directory a command happened to run in.
 */
export function dataDir(env: PathEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'gobstopper');
  return join(homeDir(env), '.local', 'share', 'gobstopper');
}

export function homeDir(env: PathEnv = process.env): string {
  const home = env.HOME;
  return home && isAbsolute(home) ? home : homedir();
}

/** The content-addressed vault: chunks, manifests, index, operation receipts, pins. */
export function vaultDir(env: PathEnv = process.env): string {
  return join(dataDir(env), 'vault');
}

/** Private staging files a provider renders into before publication. */
export function stagingDir(env: PathEnv = process.env): string {
  return join(dataDir(env), 'staging');
}

/** The live compaction-events log; `events.1.jsonl` beside it is the rotated generation. */
export function eventsLogPath(env: PathEnv = process.env): string {
  return join(dataDir(env), 'events.jsonl');
}
