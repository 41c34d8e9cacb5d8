/** Flags every session-taking command shares: provider homes for managed or sandboxed setups. */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Flags } from '@oclif/core';
import { providerIdOf } from '../config/cli-flags.js';
import { usageError } from '../errors.js';
import type { ProviderHomes } from '../sessions/provider-port.js';

export const homeFlags = {
  'claude-home': Flags.string({ summary: 'Claude Code home (default $CLAUDE_CONFIG_DIR or ~/.claude).', helpValue: '<path>', helpGroup: 'PROVIDER HOMES' }),
  'codex-home': Flags.string({ summary: 'Codex home (default $CODEX_HOME or ~/.codex).', helpValue: '<path>', helpGroup: 'PROVIDER HOMES' }),
  'provider-home': Flags.string({
    summary: 'Home of any provider, as <provider-id>=<path> (claude is taken for claude_code); repeatable (--provider-home a=/x --provider-home b=/y).',
    helpValue: '<id>=<path>',
    multiple: true,
    // One value per flag: a session argument after it is the argument, not a second home.
    multipleNonGreedy: true,
    helpGroup: 'PROVIDER HOMES',
  }),
};

export function providerHomes(flags: { 'claude-home'?: string; 'codex-home'?: string; 'provider-home'?: string[] }): ProviderHomes {
  const homes: ProviderHomes = {};
  for (const entry of flags['provider-home'] ?? []) {
    const eq = entry.indexOf('=');
    if (eq <= 0 || eq === entry.length - 1) throw usageError('bad_flag', `--provider-home takes <provider-id>=<path>, got ${JSON.stringify(entry)}`);
    const id = providerIdOf(entry.slice(0, eq));
    const home = givenHome(`--provider-home ${id}=`, entry.slice(eq + 1));
    if (homes[id] !== undefined && homes[id] !== home) throw usageError('bad_flag', `--provider-home names two homes for ${id}; give one`);
    homes[id] = home;
  }
  // Two flags naming one provider's home would have one silently win.
  const twice = (id: string, flag: string) => {
    if (homes[id] !== undefined) throw usageError('bad_flag', `${flag} and --provider-home ${id}= both name the ${id} home; give one`);
  };
  if (flags['claude-home'] !== undefined) {
    twice('claude_code', '--claude-home');
    homes.claude_code = givenHome('--claude-home ', flags['claude-home']);
  }
  if (flags['codex-home'] !== undefined) {
    twice('codex', '--codex-home');
    homes.codex = givenHome('--codex-home ', flags['codex-home']);
  }
  return homes;
}

/**
 * A home named on the command line, made absolute here: providers run in their own directories, so a
 * relative path would name another place there. A home that is not a directory is a typo, not an
 * empty home: reading it as one would answer "no sessions" for sessions that exist.
 */
function givenHome(flag: string, path: string): string {
  // `flag` is how the value is written after it: '--claude-home ' or '--provider-home codex='.
  if (path === '') throw usageError('bad_flag', `${flag.trimEnd()} needs a directory`);
  // `--claude-home=~/x` reaches here unexpanded: the shell expands ~ only at the start of a word.
  const home = process.env.HOME;
  const expanded = home && (path === '~' || path.startsWith('~/')) ? home + path.slice(1) : path;
  const absolute = resolve(expanded);
  const st = statSync(absolute, { throwIfNoEntry: false });
  if (!st) throw usageError('bad_flag', `${flag}${path}: no such directory`);
  if (!st.isDirectory()) throw usageError('bad_flag', `${flag}${path}: not a directory`);
  return absolute;
}
