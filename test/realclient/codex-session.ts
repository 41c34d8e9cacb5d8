/**
 * Makes a fresh paginated rollout (Codex 0.171 writes `ordinal` on every record) by running the real
 * `codex exec` against the stub, with the same isolation a rehearsal has. None of the saved real
 * rollouts is paginated, and the ordinal rules only bite on paginated files.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStubServer } from '../../kernel/rehearse/index.js';
import { runClientGroup } from '../../kernel/rehearse/run/client-process.js';
import { CODEX_STUB_PROVIDER, codexEnv, codexProviderArgs, offlineCodexConfig } from '../../kernel/rehearse/run/codex-layout.js';
import { bridgedLaunch, PORT_PLACEHOLDER } from '../../kernel/rehearse/run/netns-bridge.js';
import { detectLoopbackNamespace } from '../../kernel/rehearse/run/network.js';
import type { ClientLaunch } from '../../kernel/rehearse/run/client-launch.js';

function findRollout(dir: string): string | null {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      const hit = findRollout(full);
      if (hit) return hit;
    } else if (entry.name.startsWith('rollout-') && entry.name.endsWith('.jsonl')) {
      return full;
    }
  }
  return null;
}

/** Runs one `codex exec` turn per prompt (the first starts the thread) and copies the rollout into `outDir`. */
export async function createCodexSession(codexBin: string, outDir: string, prompts: string[]): Promise<{ path: string; sessionId: string }> {
  const work = mkdtempSync(join(tmpdir(), 'gob-codex-session-'));
  try {
    const home = join(work, 'home');
    const codexHome = join(home, '.codex');
    const project = join(work, 'project');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), offlineCodexConfig(CODEX_STUB_PROVIDER));
    const support = await detectLoopbackNamespace();
    const socketPath = join(work, 'stub.sock');
    const stub = await startStubServer(support.available ? { socketPath } : {});
    let threadId: string | null = null;
    try {
      for (const prompt of prompts) {
        const baseUrl = support.available ? `http://127.0.0.1:${PORT_PLACEHOLDER}` : stub.baseUrl;
        const tail = threadId === null ? [prompt] : ['resume', threadId, prompt];
        let launch: ClientLaunch = {
          command: codexBin,
          args: ['exec', ...codexProviderArgs(CODEX_STUB_PROVIDER, baseUrl), '--skip-git-repo-check', '--json', ...tail],
          env: codexEnv(home, codexHome),
          cwd: project,
        };
        if (support.available) launch = bridgedLaunch(launch, support, work, socketPath, 0);
        const outcome = await runClientGroup(launch, 45_000);
        if (outcome.exitCode !== 0) throw new Error(`codex exec failed (${outcome.exitCode}): ${outcome.stderr.slice(-300)}`);
        const started = outcome.stdout.split('\n').find((l) => l.includes('"thread.started"'));
        threadId ??= started ? (JSON.parse(started) as { thread_id: string }).thread_id : null;
        if (threadId === null) throw new Error('codex exec did not report a thread id');
      }
    } finally {
      await stub.close();
    }
    const rollout = findRollout(join(codexHome, 'sessions'));
    if (!rollout || threadId === null) throw new Error('codex exec wrote no rollout');
    const path = join(outDir, rollout.slice(rollout.lastIndexOf('/') + 1));
    copyFileSync(rollout, path);
    return { path, sessionId: threadId };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
