import { chmodSync, copyFileSync, constants, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { baseClientEnv, DUMMY_API_KEY } from './client-env.js';
import type { LayoutInput, PreparedClient } from './client-launch.js';

/** Claude Code's project folder name: the cwd with every character that is not a letter or digit as '-'. */
export function claudeProjectSlug(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

/**
 * A throwaway Claude home holding one copy of the transcript, in the project folder of a private
 * working directory. The client finds a session by file name in the folder of the directory it runs
 * from, so it runs from that private directory: never from the user's project, whose hooks, MCP
 * servers and CLAUDE.md would run or be read by a rehearsal that must have no side effects.
 */
export function prepareClaude(input: LayoutInput): PreparedClient {
  const home = join(input.workDir, 'home');
  const configDir = join(home, '.claude');
  const project = join(input.workDir, 'project');
  mkdirSync(project, { recursive: true, mode: 0o700 });
  const projectDir = join(configDir, 'projects', claudeProjectSlug(realpathSync(project)));
  mkdirSync(projectDir, { recursive: true, mode: 0o700 });
  const copyPath = join(projectDir, `${input.sessionId}.jsonl`);
  copyFileSync(input.sourcePath, copyPath, constants.COPYFILE_EXCL);
  // The copy inherits the source's mode; the client appends its new turn to it.
  chmodSync(copyPath, 0o600);
  const env = {
    ...baseClientEnv(home),
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_API_KEY: DUMMY_API_KEY,
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
    // A stub error must fail the run at once rather than be retried for minutes.
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  return {
    copyPath,
    launch: (baseUrl) => ({
      command: input.clientBin,
      args: ['-p', '--resume', input.sessionId, '--output-format', 'json', input.probe],
      env: { ...env, ANTHROPIC_BASE_URL: baseUrl },
      cwd: project,
    }),
  };
}
