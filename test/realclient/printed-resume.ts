/**
 * Runs the resume command a command printed, word for word, with the real client in the user's own
 * (temporary) home, offline against the stub, and returns the model request the client sent. Only
 * what a non-interactive run needs is added: `-p <probe>` for Claude, `exec … <probe>` for Codex,
 * the stub's address and a dummy key. Everything else (the `cd`, the variables set before the
 * program, the arguments) comes from the printed line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isModelRequest, startStubServer, type RecordedRequest } from '../../kernel/rehearse/index.js';
import { DUMMY_API_KEY } from '../../kernel/rehearse/run/client-env.js';
import { runClientGroup } from '../../kernel/rehearse/run/client-process.js';
import { CODEX_STUB_PROVIDER, codexProviderArgs, offlineCodexConfig, recordedModelProvider } from '../../kernel/rehearse/run/codex-layout.js';
import { bridgedLaunch, PORT_PLACEHOLDER } from '../../kernel/rehearse/run/netns-bridge.js';
import { detectLoopbackNamespace } from '../../kernel/rehearse/run/network.js';
import type { ClientLaunch } from '../../kernel/rehearse/run/client-launch.js';

export const PRINTED_PROBE = 'GOBSTOPPER-PRINTED-RESUME-PROBE';

/** Shell words of a printed command: plain words and '…' quoting, which is all the commands print for these paths. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|(\S+)/g;
  for (let m = pattern.exec(line); m; m = pattern.exec(line)) words.push(m[1] ?? m[2]!);
  return words;
}

export interface PrintedCommand {
  cwd: string | null;
  env: Record<string, string>;
  program: string;
  args: string[];
}

/** `[cd <dir> &&] [NAME=value …] <program> <args…>` */
export function parsePrinted(line: string): PrintedCommand {
  let words = shellWords(line);
  let cwd: string | null = null;
  if (words[0] === 'cd') {
    if (words[2] !== '&&') throw new Error(`unexpected resume command: ${line}`);
    cwd = words[1]!;
    words = words.slice(3);
  }
  const env: Record<string, string> = {};
  while (words[0] && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  const [program, ...args] = words;
  if (!program) throw new Error(`no program in resume command: ${line}`);
  return { cwd, env, program, args };
}

export interface PrintedResume {
  exitCode: number | null;
  stderr: string;
  /** The first model request carrying the probe, as JSON text (what the client rebuilt), or null. */
  body: string | null;
  headers: Record<string, string>;
}

/**
 * Runs `line` as the user would after `apply` or `undo`, with `homeEnv` as their environment.
 * A Codex home gets an offline config.toml for the rollout's recorded provider first.
 */
export async function runPrinted(line: string, homeEnv: Record<string, string>, bins: { claude: string; codex: string }, rolloutPath?: string): Promise<PrintedResume> {
  const printed = parsePrinted(line);
  const work = mkdtempSync(join(tmpdir(), 'gob-printed-resume-'));
  try {
    const support = await detectLoopbackNamespace();
    const socketPath = join(work, 'stub.sock');
    const stub = await startStubServer(support.available ? { socketPath } : {});
    const baseUrl = support.available ? `http://127.0.0.1:${PORT_PLACEHOLDER}` : stub.baseUrl;
    const shellDir = join(work, 'shell');
    mkdirSync(shellDir);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', ...homeEnv, ...printed.env };
    let launch: ClientLaunch;
    if (printed.program === 'claude') {
      launch = {
        command: bins.claude,
        args: [...printed.args, '-p', '--output-format', 'json', PRINTED_PROBE],
        env: { ...env, ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: DUMMY_API_KEY, DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1', DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1', CLAUDE_CODE_MAX_RETRIES: '0' },
        cwd: printed.cwd ?? shellDir,
      };
    } else if (printed.program === 'codex') {
      if (printed.args[0] !== 'resume') throw new Error(`unexpected codex command: ${line}`);
      const provider = (rolloutPath && recordedModelProvider(rolloutPath)) || CODEX_STUB_PROVIDER;
      const codexHome = env.CODEX_HOME ?? join(env.HOME!, '.codex');
      writeFileSync(join(codexHome, 'config.toml'), offlineCodexConfig(provider));
      launch = {
        command: bins.codex,
        args: ['exec', ...codexProviderArgs(provider, baseUrl), '--skip-git-repo-check', '--json', ...printed.args, PRINTED_PROBE],
        env: { ...env, GOBSTOPPER_STUB_API_KEY: DUMMY_API_KEY, OPENAI_API_KEY: DUMMY_API_KEY, RUST_LOG: 'error' },
        cwd: printed.cwd ?? shellDir,
      };
    } else {
      throw new Error(`unexpected program in resume command: ${line}`);
    }
    if (support.available) launch = bridgedLaunch(launch, support, work, socketPath, 0);
    let outcome;
    try {
      outcome = await runClientGroup(launch, 60_000);
    } finally {
      await stub.close();
    }
    const request = stub.requests.filter(isModelRequest).find((r: RecordedRequest) => JSON.stringify(r.body).includes(PRINTED_PROBE)) ?? null;
    return { exitCode: outcome.exitCode, stderr: outcome.stderr, body: request ? JSON.stringify(request.body) : null, headers: request?.headers ?? {} };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The session id the client resumed, as it told the model server. */
export function resumedId(result: PrintedResume): string | null {
  if (result.headers['x-claude-code-session-id']) return result.headers['x-claude-code-session-id'];
  return result.headers['session-id'] ?? result.headers['thread-id'] ?? null;
}
