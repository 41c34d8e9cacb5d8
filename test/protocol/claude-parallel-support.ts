/**
 * What the Claude provider's parallel-read tests share: the provider bundled with esbuild (workers
 * start from the bundle file, as they do from main.cjs), and the range splits they sweep.
 */
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** What a test bundle exports to steer its worker pool (scan-pool.ts). */
export interface PoolControls {
  enableParallelScan: (workerFile: string, options: { minBytes?: number; coldMinBytes?: number; threads?: number; mainShare?: number; batchRows?: number }) => void;
  parallelScanCounts: () => { parallel: number; fallbacks: number };
}

export interface ParallelConfig {
  threads: number;
  mainShare: number;
  batchRows?: number;
}

/** Bundles the provider's sources into `dir` with `exports` (lines of `export … from` the src folder) and the worker entry. */
export async function bundleProvider(dir: string, name: string, exports: string[]): Promise<string> {
  const file = join(dir, name);
  await build({
    absWorkingDir: repoRoot,
    stdin: {
      contents: ["import { isScanWorker, serveScanWorker } from './plugins/provider-claude-code/src/scan-worker.ts';", 'if (isScanWorker()) serveScanWorker();', ...exports].join('\n'),
      resolveDir: repoRoot,
      loader: 'ts',
    },
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'silent',
  });
  return file;
}

/** bundleProvider, then the bundle loaded: its file (the workers' entry) and what it exports. */
export async function loadBundledProvider<T>(dir: string, name: string, exports: string[]): Promise<{ file: string; bundle: T }> {
  const file = await bundleProvider(dir, name, exports);
  return { file, bundle: createRequire(import.meta.url)(file) as T };
}

/**
 * Two ranges split after every line in turn, then four ranges at a coarser step; workers hand
 * their rows over a few at a time, so joining batches is exercised too.
 */
export function sweep(text: string | Buffer, fourStep = 3): ParallelConfig[] {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const starts: number[] = [];
  for (let i = bytes.indexOf(0x0a); i >= 0 && i + 1 < bytes.length; i = bytes.indexOf(0x0a, i + 1)) starts.push(i + 1);
  const share = (offset: number) => offset / bytes.length;
  return [
    ...starts.map((s, i) => ({ threads: 2, mainShare: share(s), batchRows: 1 + (i % 7) })),
    ...starts.filter((_, i) => i % fourStep === 0).map((s, i) => ({ threads: 4, mainShare: share(s), batchRows: 2 + (i % 5) })),
  ];
}

let made = 0;

/** A session file holding `text` in `dir`, under a name no other call gives. */
export function sessionFile(dir: string, text: string | Buffer): string {
  const path = join(dir, `s${made++}.jsonl`);
  writeFileSync(path, text);
  return path;
}

/** An empty private staging file in `dir`, as the host creates one. */
export function stagingFile(dir: string): string {
  const path = join(dir, `stage-${made++}.jsonl`);
  closeSync(openSync(path, 'wx', 0o600));
  return path;
}
