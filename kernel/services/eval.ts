/**
 * `eval`: every strategy measured side by side on one frozen snapshot of a session. The source is
 * read and hashed once and copied into a private temporary directory; every strategy plans through
 * the plan pipeline against that copy with the same policy, and each rewrite is rendered by the
 * provider into a private staging file, verified, scored and discarded. The source, the vault and
 * the provider's store are only read.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type * as T from '../../schemas/generated/types.js';
import { maxTranscriptBytes } from '../../sdk/limits.js';
import { unappliedSessionWarning, type ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import { errorMessage } from '../filesystem-message.js';
import { candidateSlots, eventRecord, retentionBaseline, type RetentionBaseline } from '../eval/applied-retention.js';
import { errorCode, evaluateSession, type EvalBaseline, type RenderedCandidate, type StrategyOutcome } from '../eval/index.js';
import { contextSeriesFromSource } from '../eval/context-series.js';
import { rewritesFile } from '../eval/plan-metrics.js';
import type { JobProgress } from '../eval/parallel-runner.js';
import { Slots } from '../eval/slots.js';
import type { SessionTimeline } from '../eval/report-html.js';
import { scoreRetention } from '../eval/study-score.js';
import { transcriptSample } from '../policy/adaptive.js';
import { contextTokens, reportedContext, requireReadableContext, requireResumableSession } from '../policy/context.js';
import { effectivePolicy, pinnedByFlags } from '../policy/effective-policy.js';
import { strategyRationaleOf } from '../policy/no-plan.js';
import { planSession } from '../policy/plan-pipeline.js';
import { discardStaging } from '../publish/staging.js';
import { viewOfPublication } from '../publish/publications.js';
import { CandidateRehearsal, type ClientBins } from './candidate-rehearsal.js';
import { sourceFindings } from './findings.js';
import { freezeSource } from './frozen-source.js';
import { isActive } from '../sessions/detect.js';
import { resolveSession } from '../sessions/selector.js';
import { recentYields, resolveSessionConfig, strategyRunner, type ParsedSession, type PlanOptions } from './plan.js';
import { pinnedStrategy } from './pinned-strategy.js';
import { requireStrategyParams } from './policy-params.js';
import { withWorkspace } from './private-workspace.js';
import { belowTriggerWarning } from '../eval/below-trigger.js';
import type { Runtime } from './runtime.js';

/**
 * The session's policy could not be resolved (a bad config layer for it, bounds broken after
 * layering). Same code and message as the cause, so `eval` reports it unchanged; the bench files it
 * under its own failure kind.
 */
export class PolicyResolutionError extends GobstopperError {
  constructor(cause: unknown) {
    const known = cause instanceof GobstopperError ? cause : null;
    super(known?.code ?? 'policy_resolution_failed', known?.message ?? (cause as Error)?.message ?? String(cause), { exit: known?.exit ?? 1, details: known?.details, cause });
  }
}

// ---------------------------------------------------------------- strategies

/** The strategies to measure: the requested ones (checked by evaluateFile), else every one a bundle provides. */
export async function resolveEvalStrategies(runtime: Runtime, requested?: readonly string[]): Promise<string[]> {
  // A requested id may be the one a plugin pinned in the session's configuration serves: those
  // are checked once that configuration is known (evaluateFile).
  if (requested && requested.length > 0) return [...new Set(requested)];
  // From the manifests: one bundle that cannot start costs its own rows, not the whole eval.
  return runtime.host.strategyIds();
}

/** How long the rows wait for strategies to say their kind once the source is ready. */
const KIND_WAIT_MS = 1000;

/**
 * The strategies among `ids` that say they select among other strategies' plans. Asked while the
 * provider parses (which starts their processes then); `known()` gives those that answered within
 * KIND_WAIT_MS of being asked for the answer, so a bundle that is slow to start delays no row. A
 * bundle that cannot start is left to fail its own row.
 */
export function selectorsAmong(runtime: Runtime, ids: readonly string[]): { known: () => Promise<Set<string>> } {
  const selectors = new Set<string>();
  const answers = ids.map((id) =>
    runtime.host.strategy(id).then(
      (s) => {
        if (s.info.kind === 'selector') selectors.add(id);
      },
      () => undefined,
    ),
  );
  return {
    known: async () => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, KIND_WAIT_MS)));
      await Promise.race([Promise.all(answers), deadline]);
      clearTimeout(timer);
      return new Set(selectors);
    },
  };
}

/**
 * The configuration one strategy runs with: the same policy for every row, the strategy swapped in.
 * Parameters belong to the configured strategy only. A configured legacy command is not a strategy
 * the eval compares; a pinned plugin's strategy runs as configured.
 */
function configFor(config: ResolvedConfig, strategy: string): ResolvedConfig {
  if (strategy === pinnedStrategy(config)) return config;
  const params = strategy === config.values.strategy ? config.values.strategy_params : {};
  return { ...config, values: { ...config.values, strategy, strategy_params: params }, external: null };
}

/**
 * The rows to build: the requested strategies, each one the host knows or the pinned plugin's; by
 * default every strategy the host lists, and the pinned plugin's beside them.
 */
function rowStrategies(runtime: Runtime, config: ResolvedConfig, strategies: readonly string[], requested: boolean): string[] {
  const pinned = pinnedStrategy(config);
  if (requested) {
    for (const id of strategies) if (id !== pinned) runtime.host.registry.requireKnown('strategy', id);
    return [...strategies];
  }
  return pinned === null || strategies.includes(pinned) ? [...strategies] : [...strategies, pinned];
}

export interface EvalOptions extends Omit<PlanOptions, 'strategy'> {
  /** Strategy ids to measure (default: every one the plugin host lists). */
  strategies?: readonly string[];
  rehearse?: boolean;
  /** The client executables a rehearsal runs (default: their environment variables, then PATH). */
  clientBins?: ClientBins;
  /** Timeline for the bench report. */
  timeline?: boolean;
  /** Told as each strategy's row is done: rows done, error rows among them, and how many in all. */
  onProgress?: (progress: JobProgress) => void;
}

export interface EvalTarget {
  provider: string;
  path: string;
}

export interface EvalReport {
  result: T.EvalCommandResult;
  timeline: SessionTimeline | null;
  /** The warnings of `result` that come from the configuration, not from this session's numbers. */
  config_warnings: string[];
}

interface CandidateMeasure {
  candidate: RenderedCandidate;
  retention: T.RetentionScore | null;
  rehearsal: T.EvalRehearsal | null;
}

/** Candidates are cached by their edits: several strategies often propose the same rewrite. */
const CACHE_SOURCE_LIMIT = 64 * 1024 * 1024;
/**
 * Strategies in flight at once: one proposing, two with the provider, one being scored. Candidates
 * stay in the cache above until the eval ends; a source over the cache limit is measured one row
 * at a time, so one candidate of it is held at a time.
 */
const EVAL_ROWS_IN_FLIGHT = 4;

/** Measures every strategy on the session file at `target.path` (its provider already known). */
export async function evaluateFile(runtime: Runtime, target: EvalTarget, options: EvalOptions = {}): Promise<EvalReport> {
  const requested = options.strategies !== undefined && options.strategies.length > 0;
  const listed = await resolveEvalStrategies(runtime, options.strategies);
  const provider = await runtime.provider(target.provider);
  const frozen = await freezeSource(target.path, maxTranscriptBytes(runtime.env));
  return withWorkspace('gobstopper-eval-', async (ws) => {
    const copy = await ws.writeCopy(basename(target.path), frozen.bytes, frozen.mtimeMs, target.path);
    // Asked while the provider parses; the strategy processes start then instead of at their rows.
    const selectors = selectorsAmong(runtime, listed);
    const read = await provider.parse({ path: copy, expected_sha256: frozen.sha256 });
    requireResumableSession({ ...read.session, path: target.path });
    requireReadableContext({ ...read, session: { ...read.session, path: target.path } });
    const view = await viewOfPublication(runtime.env, isActive(frozen.mtimeMs), { path: target.path, bytes: read.bytes, sha256: read.source_sha256, usage: read.usage });
    const transcript = view.usage === read.usage ? read : { ...read, usage: view.usage };
    const parsed: ParsedSession = { session: transcript.session, provider, transcript, active: view.active, staleReport: view.staleReport };
    // When the parse's findings are not complete, the provider verifies in its own process while
    // this one resolves the policy.
    const sourceVerify = sourceFindings(provider, transcript, copy);
    sourceVerify.catch(() => undefined);
    const recent = await recentYields(runtime, transcript.session);
    const before = contextTokens(transcript);
    let config: ResolvedConfig;
    let policy: T.ResolvedPolicy;
    try {
      config = await resolveSessionConfig(runtime, transcript.session, { ...options, strategy: undefined });
      await requireStrategyParams(runtime, config);
      policy = effectivePolicy(config.values, transcriptSample(transcript, before, recent), pinnedByFlags(config.sources));
    } catch (error) {
      throw new PolicyResolutionError(error);
    }
    const strategies = rowStrategies(runtime, config, listed, requested);
    // Sampled on first need: by then the strategies are proposing and the provider is rendering.
    let retention: RetentionBaseline | null | undefined;
    const retentionChecks = () => (retention === undefined ? (retention = retentionBaseline(frozen.bytes, transcript.items)) : retention);
    const baselineFindings = await sourceVerify;
    const rehearsal = options.rehearse
      ? await CandidateRehearsal.prepare(runtime, target.provider, { path: copy, sessionId: transcript.session.session_id, cwd: transcript.session.cwd ?? null, items: transcript.items }, options.clientBins)
      : { rehearsal: null, note: null };
    const now = new Date().toISOString();
    const cache = new Map<string, Promise<CandidateMeasure>>();
    // Strategies run side by side, so the host scores one candidate while the provider renders the
    // next. Proposals take turns, so each is timed on its own. Provider calls are queued two deep:
    // the channel sends one at a time (PluginChannel.takeTurn) and the next goes out the moment the
    // provider answers, before the host turns to scoring; a render or verify may so be timed with
    // the wait for one call of another row.
    const proposing = new Slots(1);
    const providerCalls = new Slots(2);
    const clients = new Slots(1);
    let failedRows = 0;
    const extras = new Map<string, { event: T.EvalEventRecord | null; rehearsal: T.EvalRehearsal | null }>();

    /** Runs `work` and adds the time it took to `clock`: a row's time is its own steps, not its waits. */
    const timed = async <R>(clock: { ms: number }, work: () => Promise<R> | R): Promise<R> => {
      const start = performance.now();
      try {
        return await work();
      } finally {
        clock.ms += performance.now() - start;
      }
    };

    /** The measured candidate; a row that shares one another row rendered adds no time to `clock`. */
    const measure = async (plan: T.CompactionPlan, clock: { ms: number }): Promise<CandidateMeasure> => {
      // Projections stay each plan's own; only what the rendered bytes show is shared.
      // Only file edits reach the file; provider and API-layer controls cannot be rendered.
      const edits = plan.edits.filter((e) => e.op === 'elide' || e.op === 'inject_digest');
      const render = async (): Promise<CandidateMeasure> => {
        const staging = await ws.stagingFile(basename(target.path), `the rewritten copy of ${target.path}`);
        try {
          await providerCalls.run(() => timed(clock, () => provider.render({ path: copy, source_sha256: frozen.sha256, edits, staging_path: staging, new_session_id: null, now })));
          // The provider verifies the candidate in its process while this one scores it.
          const verifying = providerCalls.run(() => timed(clock, () => provider.verify({ path: staging })));
          verifying.catch(() => undefined);
          const bytes = await readFile(staging);
          const checks = retentionChecks();
          const score = checks ? await timed(clock, () => scoreRetention(checks.checks, candidateSlots(checks, frozen.bytes, bytes))) : null;
          const findings = (await verifying).findings;
          let rehearsed: T.EvalRehearsal | null = null;
          if (rehearsal.rehearsal) {
            const rehearsing = rehearsal.rehearsal;
            const items = (await providerCalls.run(() => timed(clock, () => provider.parse({ path: staging })))).items;
            // One real client at a time: each runs a whole session resume.
            rehearsed = await clients.run(() => timed(clock, () => rehearsing.candidate(staging, items)));
          }
          return { candidate: { bytes, findings }, retention: score, rehearsal: rehearsed };
        } finally {
          await discardStaging(staging);
        }
      };
      if (frozen.bytes.length > CACHE_SOURCE_LIMIT) return render();
      const key = createHash('sha256').update(JSON.stringify(edits)).digest('hex');
      let pending = cache.get(key);
      if (!pending) {
        pending = render();
        cache.set(key, pending);
      }
      return pending;
    };

    const runStrategy = async (strategy: string, _baseline: EvalBaseline): Promise<StrategyOutcome> => {
      const nested = configFor(config, strategy);
      const clock = { ms: 0 };
      let outcome: Awaited<ReturnType<typeof planSession>>;
      try {
        outcome = await proposing.run(() =>
          timed(clock, () =>
            planSession({
              transcript,
              config: nested,
              active: parsed.active,
              recentYields: recent,
              runStrategy: strategyRunner(runtime, parsed, nested, recent),
              provider: provider.info,
            }),
          ),
        );
      } catch (caught) {
        // A strategy is given the private copy as the session: what it says of it is said of the file
        // the copy stands for. Its own time, not the turns it waited for while another proposed.
        const error = ws.aboutOriginals(caught);
        return { status: 'error', message: errorMessage(error), code: errorCode(error), duration_ms: clock.ms };
      }
      if (outcome.status === 'no_plan') return { status: 'no_plan', reason_code: outcome.reason_code, rationale: strategyRationaleOf(outcome), duration_ms: clock.ms };
      const plan = outcome.plan;
      if (!rewritesFile(plan)) return { status: 'plan', plan, candidate: null, duration_ms: clock.ms };
      try {
        const measured = await measure(plan, clock);
        extras.set(strategy, { event: eventRecord(plan, measured.retention), rehearsal: measured.rehearsal });
        return { status: 'plan', plan, candidate: measured.candidate, duration_ms: clock.ms };
      } catch (caught) {
        // The candidate's private copy is gone once the command ends: the message names what it was.
        const error = ws.aboutOriginals(caught);
        return { status: 'error', message: errorMessage(error), code: errorCode(error), plan, duration_ms: clock.ms };
      }
    };

    const result = await evaluateSession(
      {
        provider: transcript.session.provider,
        session_id: transcript.session.session_id,
        source: frozen.bytes,
        source_sha256: frozen.sha256,
        transcript,
        context_tokens: before,
        token_basis: view.staleReport === 'projected' ? 'projected' : reportedContext(transcript.usage) === null ? 'estimated' : 'reported',
        effective_trigger_tokens: policy.effective_trigger_tokens,
        floor_tokens: policy.floor_tokens,
        keep_recent_tool_outputs: policy.keep_recent_tool_outputs,
        source_findings: baselineFindings,
        strategies,
      },
      runStrategy,
      {
        // A candidate of a large source is held one at a time, as the cache is skipped for it.
        concurrency: frozen.bytes.length > CACHE_SOURCE_LIMIT ? 1 : EVAL_ROWS_IN_FLIGHT,
        startLast: await selectors.known(),
        onRow: options.onProgress
          ? (row, built, total) => {
              if (row.status === 'error') failedRows += 1;
              options.onProgress!({ done: built, failed: failedRows, running: 0, total });
            }
          : undefined,
      },
    );
    for (const row of result.rows) {
      const extra = row.execution_state === 'rendered' ? extras.get(row.strategy) : undefined;
      row.event_record = extra?.event ?? null;
      row.rehearsal = extra?.rehearsal ?? null;
    }
    result.rehearsal_note = rehearsal.rehearsal?.note ?? rehearsal.note;
    const unapplied = unappliedSessionWarning(config);
    const untriggered = belowTriggerWarning(result.rows, result.context_tokens, policy.effective_trigger_tokens, policy.floor_tokens);
    // Without this the rows read as if the configured proposer had been among them.
    const legacy = config.external?.kind === 'legacy_command' ? `the legacy command that ${config.external.table} configures is not measured: eval compares strategies, and only plan, apply and watch run a command` : null;
    const present = (w: string | null): w is string => w !== null;
    result.warnings.unshift(...[legacy, untriggered, unapplied].filter(present));
    // A bench hears these once for all its sessions; the others are about one session's numbers.
    const configWarnings = [legacy, unapplied].filter(present);
    const timeline: SessionTimeline | null = options.timeline
      ? {
          provider: transcript.session.provider,
          session: transcript.session.session_id,
          points: contextSeriesFromSource(frozen.bytes, transcript.items),
          compactions: [],
          trigger_tokens: policy.effective_trigger_tokens,
          context_tokens: result.context_tokens,
          token_basis: result.token_basis,
        }
      : null;
    return { result, timeline, config_warnings: configWarnings };
  });
}

/** `eval <session>`: resolves the selector (path, id or prefix), then measures the file. */
export async function evaluateSelector(runtime: Runtime, selector: string, options: EvalOptions = {}): Promise<EvalReport> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  return evaluateFile(runtime, { provider: session.provider, path: session.path }, options);
}
