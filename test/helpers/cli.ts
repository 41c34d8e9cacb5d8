import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
export const binPath = join(root, 'bin', 'run.js');

/**
 * For a suite that runs the built CLI (or imports from dist/): without the build it fails, saying
 * how to make one, instead of being skipped, which would pass it wherever nothing was built.
 */
export function requireBuilt(...paths: string[]): void {
  beforeAll(() => {
    for (const path of paths) if (!existsSync(join(root, path))) throw new Error(`${path} is missing: run node scripts/build.mjs first`);
  });
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  extraEnv?: Record<string, string>;
  /** Another user to run as (only root may ask): one whom file modes bind, as root is not. */
  user?: { uid: number; gid: number };
}

/** Runs the built CLI as a user would, with exactly the given environment (plus PATH). */
export function runCli(args: string[], env: Record<string, string>, options: RunOptions & { stdin?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath, ...args], {
      cwd: options.cwd ?? env.HOME,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, ...options.extraEnv },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.user ?? {}),
    });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs with --json and parses stdout (errors are one JSON object too). */
export async function runJson<T = any>(args: string[], env: Record<string, string>, options: RunOptions = {}): Promise<{ code: number | null; json: T; stderr: string }> {
  const r = await runCli([...args, '--json'], env, options);
  let json: T;
  try {
    json = JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}, signal ${r.signal}): ${r.stdout.slice(0, 400)} / ${r.stderr.slice(0, 400)}`);
  }
  return { code: r.code, json, stderr: r.stderr };
}
