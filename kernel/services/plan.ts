/**
 * `plan`: resolve a session, parse it through its provider, layer the policy and run the plan
 * pipeline with the strategy plugins. apply, eval and tune reuse it.
 */
import { statSync } from 'node:fs';
import type * as T from '../../schemas/generated/types.js';
import { StrategyPropose } from '../../sdk/protocol.js';
import { validScore } from '../../sdk/strategy/score-table.js';
import { resolveForCommand } from '../config/resolve-for-command.js';
import { unappliedSessionWarning, type ResolvedConfig, type PolicyFlags } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import type { ProviderClient } from '../plugins/host/clients.js';
import type { HostCallbacks } from '../plugins/protocol/host-callbacks.js';
import { PluginFailure } from '../plugins/protocol/plugin-failure.js';
import type { RecentYield } from '../policy/adaptive.js';
import { requireReadableContext, requireResumableSession } from '../policy/context.js';
import { CandidateTally } from '../policy/gated-candidates.js';
import { viewOfPublication, type StaleReport } from '../publish/publications.js';
import { planSession, type PlanOutcome, type StrategyRunner, type StrategyRunResult } from '../policy/plan-pipeline.js';
import { checkEditsFitKind } from '../policy/strategy-kind.js';
import { isAppliedCompaction, readEvents } from '../publish/events.js';
import { isActive } from '../sessions/detect.js';
import { resolveSession } from '../sessions/selector.js';
import { checkStrategyParams } from '../plugins/host/strategy-params.js';
import { startPinnedStrategy } from './pinned-strategy.js';
import { requirePolicyScorer } from './policy-ids.js';
import { strategyRationaleOf } from '../policy/no-plan.js';
import { requireResolvedPolicy } from './policy-params.js';
import type { Runtime } from './runtime.js';
import { readSourceRecords } from './source-records.js';

export interface PlanOptions {
  strategy?: string;
  preset?: string;
  trigger?: number;
  floor?: number;
  configPath?: string;
  cwd?: string;
}

export interface ParsedSession {
  session: T.SessionHandle;
  provider: ProviderClient;
  transcript: T.Transcript;
  active: boolean;
  /** Set when the transcript's usage is not the file's own report (see publications.ts). */
  staleReport?: StaleReport | null;
}

export interface PlannedSession extends ParsedSession {
  config: ResolvedConfig;
  outcome: PlanOutcome;
  /** What the answer alone does not say: a config table that never applied, candidates a selector chose without, a scorer out of range. */
  warnings: string[];
}

/** Resolves and parses a session once; every later step is bound to the hash parse saw. */
export async function parseSession(runtime: Runtime, selector: string, onResolved?: (session: T.SessionHandle) => void): Promise<ParsedSession> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  onResolved?.(session);
  const provider = await runtime.provider(session.provider);
  const transcript = await provider.parse({ path: session.path }).catch((error: unknown) => {
    throw whileWritten(error, session.path);
  });
  const mtime = transcript.session.mtime_ms ?? session.mtime_ms ?? 0;
  const view = await viewOfPublication(runtime.env, isActive(mtime), { path: transcript.session.path, bytes: transcript.bytes, sha256: transcript.source_sha256, usage: transcript.usage });
  // The items array stays the parse's own object: it is what the plugin channel names by reference.
  const seen = view.usage === transcript.usage ? transcript : { ...transcript, usage: view.usage };
  return { session: transcript.session, provider, transcript: seen, active: view.active, staleReport: view.staleReport };
}

/**
 * A file that changed while it was read and was written to within the live window is a session
 * its client is writing now: the answer says so (`details.live`), and apply refuses it as live
 * rather than asking for a retry that would meet the same writes.
 */
function whileWritten(error: unknown, path: string): unknown {
  if (!(error instanceof GobstopperError) || error.code !== 'source_changed') return error;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return error;
  }
  if (!isActive(mtimeMs)) return error;
  const ago = Math.max(0, Math.round((Date.now() - mtimeMs) / 1000));
  return new GobstopperError('source_changed', `${path} changed while it was read and was written ${ago} s ago: its client is writing to it; try again once it is idle`, {
    details: { ...error.details, live: true },
    cause: error,
  });
}

export function policyFlags(options: PlanOptions): PolicyFlags {
  return { strategy: options.strategy, trigger_tokens: options.trigger, floor_tokens: options.floor };
}

export async function resolveSessionConfig(runtime: Runtime, session: T.SessionHandle, options: PlanOptions): Promise<ResolvedConfig> {
  const { resolved } = await resolveForCommand({
    configPath: options.configPath,
    provider: session.provider,
    session_id: session.session_id,
    preset: options.preset,
    flags: policyFlags(options),
    cwd: options.cwd,
    env: runtime.env,
  });
  return resolved;
}

/**
 * Past applied compactions of this session, newest first, for adaptive back-off. A log that cannot
 * be read counts as none; `onUnreadable` hears why, for a readout that would otherwise explain the
 * yields as if it had seen them.
 */
export async function recentYields(runtime: Runtime, session: T.SessionHandle, onUnreadable?: (message: string) => void): Promise<RecentYield[]> {
  const { events, unreadable } = await readEvents({ env: runtime.env });
  for (const bad of unreadable) onUnreadable?.(`the compactions in the events log are not counted: cannot read ${bad.file}: ${bad.reason}`);
  return events
    .filter((e) => e.session_id === session.session_id && e.provider === session.provider && isAppliedCompaction(e))
    .reverse()
    .map((e) => ({ context_before: e.context_tokens_before, est_reclaimed: e.est_reclaimed_tokens }));
}

/** The scorer a policy names; the heuristic one unless configured. */
const scorerOf = (policy: { scorer?: string | null }) => policy.scorer ?? 'heuristic';

/** Runs strategies through the plugin host, answering their host/* requests for this transcript. */
export function strategyRunner(runtime: Runtime, parsed: ParsedSession, config: ResolvedConfig, recent: RecentYield[], depth = 0, warnings?: string[]): StrategyRunner {
  return async (strategyId, params, options) => {
    let offered = false;
    let refusedNested = false;
    const candidates = new CandidateTally();
    /** Strategies whose plans this call got through host/propose: the only ones it may credit. */
    const planned = new Set<string>();
    /**
     * A result names another strategy only as a selector returning that strategy's plan; any other
     * name would put the plan, its events and its vault label under a strategy that never made it.
     */
    const credited = <R extends { strategy?: string | null }>(result: R, pluginId: string): R => {
      if (result.strategy == null || result.strategy === strategyId || planned.has(result.strategy)) return result;
      // Which strategies it could have named, so a selector that got the plan from one and names
      // another sees the mix-up; without any, the answer is its own id (or none).
      const could = planned.size > 0 ? `credit one this call got a plan from (${[...planned].join(', ')}), or leave strategy out` : `it asked host/propose for no plan, so leave strategy out or name ${strategyId} itself`;
      throw new GobstopperError(
        'invalid_strategy_credit',
        `strategy ${strategyId} (plugin ${pluginId}) credited its plan to ${JSON.stringify(result.strategy)}, which did not give it a plan through host/propose in this call; ${could}`,
        { details: { strategy: strategyId, credited: result.strategy, plugin_id: pluginId } },
      );
    };
    /**
     * A selector asking for its first plan will ask for more (and, through them, for scores) over
     * these items: the other file-strategy bundles and the scorer get them now, and read them while
     * the selector works. Not before: a selector that asks for nothing (agentic without an editor)
     * would leave those processes busy reading for no one.
     */
    const offerToCandidates = () => {
      if (offered || depth > 0) return;
      offered = true;
      // Best effort: whatever stops an offer (two bundles claiming one id, a bundle that will not
      // start) is met again, and reported, by the call that needs that bundle.
      runtime.host.offerItemsToFileStrategies(params.items).catch(() => undefined);
      runtime.host.offerItemsToScorer(scorerOf(params.policy), params.items).catch(() => undefined);
    };
    const ofKind = <R extends { edits: T.Edit[]; plugin_id: string }>(result: R, kind: T.StrategyInfo['kind']): R => {
      checkEditsFitKind(strategyId, result.plugin_id, kind, result.edits);
      return result;
    };
    // A scorer that fails reaches the strategy as an error answer, and the strategy's own failure
    // would then name the strategy: the scorer's failure is the one reported (blamed).
    let scorerFailure: unknown = null;
    const blamed = (error: unknown): unknown => (scorerFailure !== null && error instanceof PluginFailure && error.code === 'plugin_error' ? scorerFailure : error);
    const callbacks: HostCallbacks = {
      score: async (p) => {
        const scorerId = scorerOf(params.policy);
        try {
          const scorer = await runtime.host.scorer(scorerId).catch((error: unknown) => {
            if (error instanceof GobstopperError && error.code === 'plugin_not_found') requirePolicyScorer(runtime.host.registry, config, scorerId);
            throw error;
          });
          const result = await scorer.score({ session: params.session, items: params.items, candidates: p.candidates, policy: params.policy });
          // Out-of-range values are unknown by the protocol and quietly rank last: a scorer answering
          // in percent would otherwise look like one that has no effect.
          const outOfRange = result.scores.filter((s) => s.keep_probability !== null && !validScore(s.keep_probability));
          if (outOfRange.length > 0) {
            warnings?.push(
              `scorer ${scorerId} gave ${outOfRange.length} keep_probability value(s) outside 0..1 (such as ${outOfRange[0]!.keep_probability} for line_index ${outOfRange[0]!.line_index}); they count as unknown, and those outputs are kept or ranked last`,
            );
          }
          return { scorer_id: scorerId, scores: result.scores, summary: result.summary ?? null };
        } catch (error) {
          scorerFailure ??= error;
          throw error;
        }
      },
      propose: async (p) => {
        offerToCandidates();
        if (depth >= 1 || p.strategy_id === strategyId) {
          const message = `strategy ${strategyId} may not ask for ${p.strategy_id} from inside host/propose`;
          // A selector asked for by another selector (agentic's editor set to auto) is refused every
          // plan it asks for; without this the outer one would only say its editor deferred.
          if (!refusedNested && depth >= 1) {
            refusedNested = true;
            warnings?.push(`strategy ${strategyId} was asked for through host/propose and may not ask for other strategies in turn (it asked for ${p.strategy_id}); its answer is what it could do without them`);
          }
          return { status: 'error', plan: null, prefix_tokens: null, reason_code: null, message };
        }
        try {
          // The configured parameters are the selector's own; a strategy it asks for runs with none.
          const nested: ResolvedConfig = { ...config, values: { ...config.values, strategy: p.strategy_id, strategy_params: {} }, external: null };
          const outcome = await planSession({
            transcript: parsed.transcript,
            config: nested,
            active: parsed.active,
            recentYields: recent,
            runStrategy: strategyRunner(runtime, parsed, nested, recent, depth + 1, warnings),
            provider: parsed.provider.info,
          });
          candidates.note(outcome);
          if (outcome.status === 'plan') planned.add(p.strategy_id);
          if (outcome.status === 'plan') return { status: 'plan', plan: outcome.plan, prefix_tokens: outcome.prefix_tokens, reason_code: null, message: null };
          // The candidate's own words for why: a selector that found nothing says them, not only the code.
          return { status: 'no_plan', plan: null, prefix_tokens: null, reason_code: outcome.reason_code, message: strategyRationaleOf(outcome) };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          // The selector goes on without it; the person reading its plan is told what it did without.
          warnings?.push(`strategy ${p.strategy_id} failed, so ${strategyId} chose without it: ${message}`);
          return { status: 'error', plan: null, prefix_tokens: null, reason_code: null, message };
        }
      },
      readItems: (p) => readSourceRecords(parsed.transcript.session.path, parsed.transcript.source_sha256, p),
    };
    if (options?.plugin) {
      const { running, info } = await startPinnedStrategy(runtime, options.plugin, strategyId);
      await checkStrategyParams(strategyId, info.params_schema, params.policy.strategy_params);
      const elsewhere = notForProvider(strategyId, info, parsed.session.provider, running.bundle.manifest.id);
      if (elsewhere) return elsewhere;
      return running.channel.request(StrategyPropose, { ...params, strategy_id: strategyId }, callbacks).then(
        (result) => candidates.attach(ofKind(credited({ ...result, plugin_id: running.bundle.manifest.id }, running.bundle.manifest.id), info.kind)),
        (error: unknown) => {
          throw blamed(error);
        },
      );
    }
    const strategy = await runtime.host.strategy(strategyId, callbacks);
    await checkStrategyParams(strategyId, strategy.info.params_schema, params.policy.strategy_params);
    const elsewhere = notForProvider(strategyId, strategy.info, parsed.session.provider, strategy.running.bundle.manifest.id);
    if (elsewhere) return elsewhere;
    return strategy.propose(params).then(
      (result) => candidates.attach(ofKind(credited({ ...result, plugin_id: strategy.running.bundle.manifest.id }, strategy.running.bundle.manifest.id), strategy.info.kind)),
      (error: unknown) => {
        throw blamed(error);
      },
    );
  };
}

/**
 * A strategy that names the providers it applies to is not asked about another's session: its
 * answer there would be a guess at a format it never meant to read. That is no plan, with why.
 */
function notForProvider(strategyId: string, info: T.StrategyInfo, provider: string, pluginId: string): StrategyRunResult | null {
  if (info.provider_ids === undefined || info.provider_ids.includes(provider)) return null;
  return { edits: [], rationale: `strategy ${strategyId} applies to ${info.provider_ids.join(', ') || 'no provider'} sessions, not ${provider}`, plugin_id: pluginId };
}

export async function planParsed(runtime: Runtime, parsed: ParsedSession, options: PlanOptions, early?: EarlyConfig): Promise<PlannedSession> {
  const sameSession = early && early.session.provider === parsed.session.provider && early.session.session_id === parsed.session.session_id;
  const config = await (sameSession ? early.config : resolveSessionConfig(runtime, parsed.session, options));
  await requireResolvedPolicy(runtime, config);
  requireResumableSession(parsed.session);
  requireReadableContext(parsed.transcript);
  const recent = await recentYields(runtime, parsed.session);
  const unapplied = unappliedSessionWarning(config);
  const warnings: string[] = unapplied === null ? [] : [unapplied];
  const outcome = await planSession({
    transcript: parsed.transcript,
    config,
    active: parsed.active,
    recentYields: recent,
    runStrategy: strategyRunner(runtime, parsed, config, recent, 0, warnings),
    provider: parsed.provider.info,
  });
  return { ...parsed, config, outcome, warnings };
}

/** A policy resolved for the session a selector named, before its provider had parsed it. */
interface EarlyConfig {
  session: T.SessionHandle;
  config: Promise<ResolvedConfig>;
}

export async function planForSelector(runtime: Runtime, selector: string, options: PlanOptions): Promise<PlannedSession> {
  let early: EarlyConfig | undefined;
  const parsed = await parseSession(runtime, selector, (session) => {
    early = { session, config: resolveSessionConfig(runtime, session, options) };
    warmStrategy(runtime, early.config);
  });
  const planned = await planParsed(runtime, parsed, options, early);
  await runtime.host.requireNoIdleBreach();
  return planned;
}

/**
 * Starts the process of the strategy the early policy names while the provider parses (the two run
 * side by side), and the policy's scorer too when the strategy says it asks for scores; both then
 * get the transcript's items as they arrive (PluginHost passes them on). Best effort: an error here
 * is met again, and reported, when the plan awaits that policy or calls the strategy.
 */
function warmStrategy(runtime: Runtime, config: Promise<ResolvedConfig>): void {
  void (async () => {
    const c = await config;
    if (c.external) return;
    const strategy = await runtime.host.strategy(c.values.strategy);
    if (strategy.info.uses_scorer) await runtime.host.scorer(scorerOf(c.values));
  })().catch(() => undefined);
}
