/**
 * What the real-data tests that call the providers in-process share: where the real transcripts
 * are, the two providers' definitions, a host context for methods that ask the host nothing, and
 * the main (resumable) transcripts of each provider.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CancellationToken } from 'vscode-jsonrpc/node';
import { claudeCodePlugin } from '../../plugins/provider-claude-code/src/plugin.js';
import { codexPlugin } from '../../plugins/provider-codex/src/plugin.js';
import type { HostContext, ProviderDefinition } from '../../sdk/serve.js';

export const REAL = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..', 'shared', 'fixtures', 'real');

/** By the fixture folder each provider's transcripts are in. */
export const PROVIDERS: Record<string, { id: string; def: ProviderDefinition }> = {
  claude: { id: 'claude_code', def: claudeCodePlugin.providers!.claude_code! },
  codex: { id: 'codex', def: codexPlugin.providers!.codex! },
};

/** For provider methods, which call back into the host for nothing. */
export const noHost: HostContext = {
  token: CancellationToken.None,
  score: () => Promise.reject(new Error('not used')),
  propose: () => Promise.reject(new Error('not used')),
  readItems: () => Promise.reject(new Error('not used')),
  log: () => undefined,
  progress: () => undefined,
};

/**
 * Session transcripts only: subagent sidechains (kept in a session's `subagents/` folder, so named
 * `…__subagents__…` here) are not sessions a client resumes. A session whose name merely mentions a
 * subagent is a session.
 */
export const isSidechainFixture = (name: string): boolean => name.includes('__subagents__');

export function mainFixtures(): Array<{ dir: string; file: string }> {
  if (!existsSync(REAL)) return [];
  return Object.keys(PROVIDERS).flatMap((dir) =>
    existsSync(join(REAL, dir)) ? readdirSync(join(REAL, dir)).sort().filter((f) => f.endsWith('.jsonl') && !isSidechainFixture(f)).map((file) => ({ dir, file })) : [],
  );
}

/** The codes of a verify's error findings: a candidate may add none the source did not have. */
export const errorCodes = (findings: Array<{ severity: string; code: string }>): Set<string> => new Set(findings.filter((f) => f.severity === 'error').map((f) => f.code));
