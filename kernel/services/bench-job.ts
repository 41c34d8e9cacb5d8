/**
 * The bench's job module, run inside each worker process of the parallel runner: one session per
 * job, measured exactly as `eval` measures it. A worker keeps one Runtime (warm plugin processes)
 * for all the jobs it runs and closes it when the runner stops it.
 */
import type { BenchJob, BenchSessionResult } from '../eval/bench-collect.js';
import type { ProviderHomes } from '../sessions/provider-port.js';
import { evaluateFile, PolicyResolutionError } from './eval.js';
import { Runtime } from './runtime.js';

export interface BenchSessionJob extends BenchJob {
  /** The strategies asked for; empty: every one, as eval lists them for the session. */
  strategies: string[];
  trigger?: number;
  floor?: number;
  preset?: string;
  config_path?: string;
  /** Where the project config is searched from: the directory bench was started in. */
  cwd: string;
  homes: ProviderHomes;
}

let runtime: Runtime | null = null;

export async function runJob(job: BenchSessionJob): Promise<BenchSessionResult> {
  runtime ??= new Runtime({ homes: job.homes });
  try {
    const report = await evaluateFile(
      runtime,
      { provider: job.provider, path: job.path },
      { strategies: job.strategies, trigger: job.trigger, floor: job.floor, preset: job.preset, configPath: job.config_path, cwd: job.cwd, timeline: true },
    );
    return { eval: report.result, timeline: report.timeline, config_warnings: report.config_warnings };
  } catch (error) {
    // The row names the failure kind and keeps the code eval gives (invalid_policy, unknown_preset, ...).
    if (error instanceof PolicyResolutionError) throw Object.assign(new Error(error.message), { code: error.code, kind: 'policy_resolution_failed' });
    throw error;
  }
}

export async function dispose(): Promise<void> {
  const current = runtime;
  runtime = null;
  await current?.close();
}
