/**
 * `bench`: `eval` over every discovered session, in parallel over the machine's cores. Sessions are
 * found once, each is measured in a worker process (its own plugin host) against a frozen copy, and
 * a session that fails, vanishes or crashes its worker becomes a failure row while the rest go on.
 * Output files are checked before the first session is read and written only as new files.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { compiledKernelModule } from '../plugins/package-root.js';
import type * as T from '../../schemas/generated/types.js';
import { resolveForCommand } from '../config/resolve-for-command.js';
import { effectivePolicy } from '../policy/effective-policy.js';
import { assertBenchOutputsAreNew, collectBench, writeBenchOutputs, type BenchOutputFormat, type BenchSessionResult, type CollectedBench } from '../eval/bench-collect.js';
import { benchWindow, type BenchWindow } from '../eval/bench-window.js';
import { runJobsInParallel, type JobProgress } from '../eval/parallel-runner.js';
import type { CompactionPoint } from '../eval/report-html.js';
import { parseSince } from '../text/since.js';
import { isAppliedCompaction, readEvents } from '../publish/events.js';
import { discoverAll } from '../sessions/selector.js';
import type { ProviderHomes } from '../sessions/provider-port.js';
import type { BenchSessionJob } from './bench-job.js';
import { resolveEvalStrategies } from './eval.js';
import { pinnedStrategy } from './pinned-strategy.js';
import { requireStrategyParams } from './policy-params.js';
import { withRuntime } from './runtime.js';

export interface BenchOptions {
  /** Sessions of any age (default: the last 7 days, as `detect`). */
  all?: boolean;
  /** Only sessions updated since: a duration (24h, 7d) or an ISO time. */
  since?: string;
  providers?: string[];
  strategies?: string[];
  trigger?: number;
  floor?: number;
  preset?: string;
  configPath?: string;
  cwd?: string;
  output?: string;
  format?: BenchOutputFormat;
  html?: string;
  /** Worker processes (default: the machine's available parallelism). */
  jobs?: number;
  homes?: ProviderHomes;
  env?: NodeJS.ProcessEnv;
  onProgress?: (progress: JobProgress) => void;
  /** A session taking longer is recorded as timed out (default 30 minutes). */
  jobTimeoutMs?: number;
  now?: number;
}

const DEFAULT_JOB_TIMEOUT_MS = 30 * 60 * 1000;

/** The compiled job module in dist, or its source when running from TypeScript. */
export function benchJobModule(): string {
  return compiledKernelModule(import.meta.url, 'services/bench-job.js') ?? fileURLToPath(new URL('./bench-job.ts', import.meta.url));
}

export interface BenchPlan {
  jobs: BenchSessionJob[];
  strategies: string[];
  /** Where the sessions were looked for: a bench that finds none says so in its report. */
  window: BenchWindow;
}

/**
 * Everything decided before any session is measured: the strategies (each must exist), the policy
 * flags and config (a bad one fails once here, not once per session), and the sessions.
 */
export async function planBench(options: BenchOptions): Promise<BenchPlan> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now();
  const since = options.since === undefined ? null : parseSince(options.since, Math.floor(now / 1000));
  const cwd = options.cwd ?? process.cwd();
  const { resolved } = await resolveForCommand({
    configPath: options.configPath,
    preset: options.preset,
    flags: { trigger_tokens: options.trigger, floor_tokens: options.floor },
    cwd,
    env,
  });
  return withRuntime({ env, homes: options.homes, providers: options.providers }, async (rt) => {
    // The checks eval runs while it resolves a session's policy, in its order: strategy_params
    // against the strategy's schema, then the bounds. Missed here, a broken [policy] becomes one
    // failure row per session and an exit 0; a [provider.*] or [sessions.*] layer can still fail
    // its own sessions' rows.
    await requireStrategyParams(rt, resolved);
    effectivePolicy(resolved.values, null);
    // Requested ids are checked once, up front (the one a plugin pinned by the configuration serves
    // included); none requested, each session's eval lists every strategy, its pinned one too.
    const strategies = await resolveEvalStrategies(rt, options.strategies);
    const pinned = pinnedStrategy(resolved);
    const requested = options.strategies !== undefined && options.strategies.length > 0;
    if (requested) for (const id of strategies) if (id !== pinned) rt.host.registry.requireKnown('strategy', id);
    const window = benchWindow(since, options.all, Math.floor(now / 1000), resolved.discovery.max_age_secs);
    const maxAgeSecs = window.kind === 'since' ? Math.max(0, Math.ceil(now / 1000 - window.since)) : window.kind === 'recent' ? window.max_age_secs : null;
    const { sessions: found } = await discoverAll(await rt.providers(), rt.homes, { maxAgeSecs });
    const sessions = found
      .filter((f) => (f.session.kind ?? 'session') === 'session')
      .filter((f) => since === null || (f.session.mtime_ms ?? now) >= since * 1000)
      .sort((a, b) => (b.session.mtime_ms ?? 0) - (a.session.mtime_ms ?? 0) || a.session.session_id.localeCompare(b.session.session_id));
    const jobs = sessions.map(
      ({ session }): BenchSessionJob => ({
        provider: session.provider,
        session: session.session_id,
        path: session.path,
        strategies: requested ? strategies : [],
        ...(options.trigger === undefined ? {} : { trigger: options.trigger }),
        ...(options.floor === undefined ? {} : { floor: options.floor }),
        ...(options.preset === undefined ? {} : { preset: options.preset }),
        ...(options.configPath === undefined ? {} : { config_path: options.configPath }),
        cwd,
        homes: rt.homes,
      }),
    );
    return { jobs, strategies, window };
  });
}

/** Measures the planned sessions in parallel and gathers rows, aggregates and timelines. */
export async function measureBench(plan: BenchPlan, options: BenchOptions = {}): Promise<CollectedBench> {
  const outcomes = await runJobsInParallel<BenchSessionJob, BenchSessionResult>({
    jobs: plan.jobs,
    jobModule: benchJobModule(),
    concurrency: options.jobs ?? availableParallelism(),
    jobTimeoutMs: options.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS,
    onProgress: options.onProgress,
    env: options.env ?? process.env,
  });
  const collected = collectBench(outcomes);
  await markCompactions(collected, options.env ?? process.env);
  return collected;
}

/** The report's compaction points: this session's applied compactions from the events log. */
async function markCompactions(collected: CollectedBench, env: NodeJS.ProcessEnv): Promise<void> {
  if (collected.timelines.length === 0) return;
  const { events, unreadable } = await readEvents({ env });
  if (unreadable[0]) collected.events_unreadable = `${unreadable[0].file}: ${unreadable[0].reason}`;
  const bySession = new Map<string, CompactionPoint[]>();
  for (const e of events) {
    if (!isAppliedCompaction(e) || e.error_code) continue;
    const key = `${e.provider}\u0000${e.session_id}`;
    (bySession.get(key) ?? bySession.set(key, []).get(key)!).push({ t: e.ts * 1000, context_tokens_before: e.context_tokens_before, context_tokens_after: e.context_tokens_after, strategy: e.strategy });
  }
  for (const timeline of collected.timelines) timeline.compactions = bySession.get(`${timeline.provider}\u0000${timeline.session}`) ?? [];
}

/**
 * `bench`: checks the output paths, plans, measures, and writes the requested files; returns the
 * result and the window the sessions were looked for in, which a bench that found none names.
 */
export async function runBench(options: BenchOptions): Promise<{ result: T.BenchCommandResult; window: BenchWindow }> {
  const outputs = { output: options.output ?? null, format: options.format, html: options.html ?? null };
  assertBenchOutputsAreNew(outputs);
  const plan = await planBench(options);
  const collected = await measureBench(plan, options);
  return { result: writeBenchOutputs({ ...collected, window: plan.window }, outputs), window: plan.window };
}
