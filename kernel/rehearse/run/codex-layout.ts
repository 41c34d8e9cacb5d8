import { chmodSync, closeSync, copyFileSync, constants, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { stringify } from 'smol-toml';
import { readHead } from '../../../sdk/jsonl.js';
import { STUB_MODEL } from '../stub-server/reply.js';
import { baseClientEnv, DUMMY_API_KEY } from './client-env.js';
import type { LayoutInput, PreparedClient } from './client-launch.js';

const STUB_PROVIDER = 'gobstopper_stub';
const STUB_KEY_VAR = 'GOBSTOPPER_STUB_API_KEY';
/** session_meta opens a rollout but carries the base instructions, so it can be tens of KiB long. */
const HEAD_BYTES = 1024 * 1024;

/**
 * The model provider a rollout was recorded with (`session_meta.payload.model_provider`). Codex
 * refuses to resume a thread under a different provider id, so the stub must take that id's place.
 */
export function recordedModelProvider(path: string): string | null {
  for (const line of readHead(path, HEAD_BYTES).lines.slice(0, 16)) {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof record !== 'object' || record === null) continue;
    const { type, payload } = record as { type?: unknown; payload?: { model_provider?: unknown } };
    if (type !== 'session_meta') continue;
    const provider = payload?.model_provider;
    return typeof provider === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(provider) ? provider : null;
  }
  return null;
}

/** What the resuming client keeps of long tool outputs when the rollout records no policy. */
export const DEFAULT_OUTPUT_TOKEN_LIMIT = 10_000;
const POLICY_KEY = Buffer.from('"truncation_policy"');
const SCAN_CHUNK = 1024 * 1024;

/** The token budget of a recorded `truncation_policy` (`{"mode":"tokens"|"bytes","limit":n}`), else null. */
function policyTokenLimit(policy: unknown): number | null {
  if (typeof policy !== 'object' || policy === null) return null;
  const { mode, limit } = policy as { mode?: unknown; limit?: unknown };
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit <= 0) return null;
  if (mode === 'tokens') return limit;
  if (mode === 'bytes') return Math.max(1, Math.floor(limit / 4));
  return null;
}

/**
 * The tool-output budget the user's client applies when it resumes this rollout: the newest
 * `turn_context.truncation_policy`, else the limit of the models such rollouts name. Codex cuts
 * every long output in the history it sends to that budget (the provider's items count it the same
 * way), while offline against the stub it would fall back to a far smaller one; the rehearsal sets
 * it explicitly so the client rebuilds the context the user's own resume would send.
 */
export function recordedOutputTokenLimit(path: string): number {
  let limit: number | null = null;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return DEFAULT_OUTPUT_TOKEN_LIMIT;
  }
  try {
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    let carry = Buffer.alloc(0);
    for (;;) {
      const got = readSync(fd, chunk, 0, SCAN_CHUNK, null);
      const data = got > 0 ? Buffer.concat([carry, chunk.subarray(0, got)]) : carry;
      const end = got > 0 ? data.lastIndexOf(0x0a) + 1 : data.length;
      let at = 0;
      // Only the lines that name a policy are parsed.
      for (let hit = data.indexOf(POLICY_KEY, at); hit >= 0 && hit < end; hit = data.indexOf(POLICY_KEY, at)) {
        const start = data.lastIndexOf(0x0a, hit) + 1;
        const stop = data.indexOf(0x0a, hit);
        const line = data.subarray(start, stop < 0 ? data.length : stop);
        at = stop < 0 ? data.length : stop + 1;
        try {
          const record = JSON.parse(line.toString('utf8')) as { type?: unknown; payload?: { truncation_policy?: unknown } };
          if (record.type === 'turn_context') limit = policyTokenLimit(record.payload?.truncation_policy) ?? limit;
        } catch {
          // A line the client cannot read sets nothing.
        }
      }
      if (got === 0) break;
      carry = Buffer.from(data.subarray(end));
    }
  } finally {
    closeSync(fd);
  }
  return limit ?? DEFAULT_OUTPUT_TOKEN_LIMIT;
}

/**
 * config.toml for an offline run against the stub: every network feature off (update checks,
 * analytics, feedback, plugin sync, remote plugins, apps), no approvals, a read-only sandbox. A
 * provider other than the built-in `openai` is declared here; its address is set per run.
 */
export function offlineCodexConfig(providerId: string, outputTokenLimit?: number): string {
  const config: Record<string, unknown> = {
    model: STUB_MODEL,
    model_provider: providerId,
    ...(outputTokenLimit === undefined ? {} : { tool_output_token_limit: outputTokenLimit }),
    approval_policy: 'never',
    sandbox_mode: 'read-only',
    check_for_update_on_startup: false,
    analytics: { enabled: false },
    feedback: { enabled: false },
    features: { plugins: false, remote_plugin: false, apps: false, in_app_updates: false, enable_request_compression: false },
  };
  if (providerId !== 'openai') {
    config.model_providers = {
      [providerId]: {
        name: providerId,
        base_url: 'http://127.0.0.1:9/v1',
        wire_api: 'responses',
        env_key: STUB_KEY_VAR,
        request_max_retries: 0,
        stream_max_retries: 0,
        stream_idle_timeout_ms: 20000,
      },
    };
  }
  return stringify(config) + '\n';
}

/** `-c` overrides that point the provider at the stub listening at `baseUrl`. */
export function codexProviderArgs(providerId: string, baseUrl: string): string[] {
  const endpoint = `${baseUrl}/v1`;
  return providerId === 'openai'
    ? ['-c', 'model_provider="openai"', '-c', `openai_base_url="${endpoint}"`]
    : ['-c', `model_providers.${providerId}.base_url="${endpoint}"`];
}

export function codexEnv(home: string, codexHome: string): Record<string, string> {
  return { ...baseClientEnv(home), CODEX_HOME: codexHome, [STUB_KEY_VAR]: DUMMY_API_KEY, OPENAI_API_KEY: DUMMY_API_KEY, RUST_LOG: 'error' };
}

export const CODEX_STUB_PROVIDER = STUB_PROVIDER;

/** `rollout-YYYY-MM-DDThh-mm-ss` of the source name when it has one, else now (UTC). */
function rolloutStamp(sourcePath: string, now: Date): { stamp: string; y: string; m: string; d: string } {
  const match = /rollout-(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})/.exec(basename(sourcePath));
  const parts = match
    ? match.slice(1)
    : [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()].map((n, i) =>
        String(n).padStart(i === 0 ? 4 : 2, '0'),
      );
  const [y, m, d, hh, mm, ss] = parts as [string, string, string, string, string, string];
  return { stamp: `${y}-${m}-${d}T${hh}-${mm}-${ss}`, y, m, d };
}

/**
 * A throwaway CODEX_HOME holding only a config.toml and one copy of the rollout, named
 * `rollout-<stamp>-<id>.jsonl` (Codex finds a thread by the id in the file name and then requires
 * the same id inside). The config turns off every network feature: update checks, analytics,
 * feedback, plugin sync, remote plugins, apps.
 */
export function prepareCodex(input: LayoutInput, now = new Date()): PreparedClient {
  const home = join(input.workDir, 'home');
  const codexHome = join(home, '.codex');
  const project = join(input.workDir, 'project');
  mkdirSync(project, { recursive: true, mode: 0o700 });
  const { stamp, y, m, d } = rolloutStamp(input.sourcePath, now);
  const sessionsDir = join(codexHome, 'sessions', y, m, d);
  mkdirSync(sessionsDir, { recursive: true, mode: 0o700 });
  const copyPath = join(sessionsDir, `rollout-${stamp}-${input.sessionId}.jsonl`);
  copyFileSync(input.sourcePath, copyPath, constants.COPYFILE_EXCL);
  chmodSync(copyPath, 0o600);

  const recorded = recordedModelProvider(input.sourcePath);
  // Rollouts recorded with the built-in `openai` provider keep it, pointed at the stub; any other
  // recorded id is declared as a custom provider of that name; a rollout without one uses ours.
  const providerId = recorded ?? STUB_PROVIDER;
  writeFileSync(join(codexHome, 'config.toml'), offlineCodexConfig(providerId, recordedOutputTokenLimit(input.sourcePath)), { mode: 0o600 });
  const env = codexEnv(home, codexHome);
  return {
    copyPath,
    launch: (baseUrl) => {
      const providerArgs = codexProviderArgs(providerId, baseUrl);
      return {
        command: input.clientBin,
        args: ['exec', ...providerArgs, '--skip-git-repo-check', '--json', 'resume', input.sessionId, input.probe],
        env,
        cwd: project,
      };
    },
  };
}
