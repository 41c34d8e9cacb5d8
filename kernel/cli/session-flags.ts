/** Flags every session-taking command shares: provider homes for managed or sandboxed setups. */
import { Flags } from '@oclif/core';
import { usageError } from '../errors.js';
import type { ProviderHomes } from '../sessions/provider-port.js';

export const homeFlags = {
  'claude-home': Flags.string({ summary: 'Claude Code home (default $CLAUDE_CONFIG_DIR or ~/.claude).', helpGroup: 'PROVIDER HOMES' }),
  'codex-home': Flags.string({ summary: 'Codex home (default $CODEX_HOME or ~/.codex).', helpGroup: 'PROVIDER HOMES' }),
  'provider-home': Flags.string({
    summary: 'Home of any provider, as <provider-id>=<path>; repeatable.',
    multiple: true,
    helpGroup: 'PROVIDER HOMES',
  }),
};

export function providerHomes(flags: { 'claude-home'?: string; 'codex-home'?: string; 'provider-home'?: string[] }): ProviderHomes {
  const homes: ProviderHomes = {};
  for (const entry of flags['provider-home'] ?? []) {
    const eq = entry.indexOf('=');
    if (eq <= 0 || eq === entry.length - 1) throw usageError('bad_flag', `--provider-home takes <provider-id>=<path>, got ${JSON.stringify(entry)}`);
    homes[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  if (flags['claude-home']) homes.claude_code = flags['claude-home'];
  if (flags['codex-home']) homes.codex = flags['codex-home'];
  return homes;
}
