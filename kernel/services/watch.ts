/**
 * `watch`: every pass lists the sessions (tail reads only), sets aside those that are live, settled,
 * rate limited, gobstopper's own unresumed forks or plainly under their trigger, and runs `apply`
 * on the rest, smallest first, each with the policy its own session, provider and preset tables
 * give. A live session is never touched: it is compacted once its client has left it idle.
 * The config is read again every pass, so an edit takes effect without a restart.
 */
import type * as T from '../../schemas/generated/types.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import { discoveryMaxAge, resolveConfig, unappliedSessionWarning, type ResolvedConfig } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import { isFilesystemCode, systemErrorCode } from '../filesystem-codes.js';
import { errorMessage } from '../filesystem-message.js';
import { noteCompletedForStop, noteForStop } from '../exit-cleanup.js';
import { discoveryWindow } from '../policy/defaults.js';
import { toResolvedPolicy } from '../policy/effective-policy.js';
import { LIVE_SESSION_CONTROLS, type BuiltinProvider } from '../policy/provider-controls.js';
import { completedNote } from '../publish/published-note.js';
import { publications, untouchedPublication } from '../publish/publications.js';
import { sha256OfJson } from '../publish/receipt.js';
import { aheadSummary, detectSessions, isActive } from '../sessions/detect.js';
import { lastAppliedBySession, lastAppliedKey } from '../watch/last-applied.js';
import { unreadableSummary } from '../sessions/selector.js';
import { missingStoresNote } from '../sessions/missing-stores.js';
import { describeWindow } from '../text/human.js';
import type { ProviderHomes } from '../sessions/provider-port.js';
import { looseTableWarnings } from '../watch/loose-tables.js';
import { neverFires, neverFiresWarnings, type NeverFires } from '../watch/never-fires.js';
import { policyVerdicts } from '../watch/policy-verdicts.js';
import { saveOrWarn } from '../watch/state-save.js';
import { triage } from '../watch/triage.js';
import type { WatchLocks } from '../watch/watch-locks.js';
import { fingerprintOf, forgetLapsed, loadWatchState, watchScope, watchStatePath, type WatchEntry, type WatchState } from '../watch/watch-state.js';
import { applySession, applyVerdict, type ApplyOptions } from './apply.js';
import type { ClientBins } from './candidate-rehearsal.js';
import { planForSelector } from './plan.js';
import { requirePolicyIds } from './policy-ids.js';
import { requireResolvedPolicy } from './policy-params.js';
import { withRuntime, type Runtime } from './runtime.js';
import { isRehearsable, resolveClientBin } from '../rehearse/run/client-bin.js';

export interface WatchOptions {
  env: NodeJS.ProcessEnv;
  homes?: ProviderHomes;
  providers?: string[];
  strategy?: string;
  preset?: string;
  configPath?: string;
  cwd?: string;
  /** Sessions updated this recently; null: every one; undefined: [discovery] max_age_secs. */
  maxAgeSecs?: number | null;
  /** Decide and report, but write nothing: no fork, no vault, no event, no watch state. */
  dryRun: boolean;
  /**
   * The providers' locks this watch holds (WatchLocks.take): a pass decides only on the sessions of
   * providers it holds. Absent for a dry run, which writes nothing and so locks nothing.
   */
  locks?: WatchLocks;
  /** Told as each session is taken up, for a status line. */
  onSession?: (row: T.DetectRow, index: number, of: number) => void;
  /**
   * Publish a fork only once the real client has resumed it offline (apply --rehearse), with these
   * executables (default: their environment variables, then PATH).
   */
  rehearse?: ClientBins;
}

/**
 * Errors that say "not now" rather than "not this file": the session is tried again next pass even
 * if it did not change.
 */
const TRANSIENT_CODES = new Set(['session_live', 'client_missing', 'source_changed', 'operation_running', 'undo_running', 'lock_busy', 'interrupted']);

/**
 * Failures of the vault rather than of the session (a file where a vault directory belongs, a
 * damaged chunk, an index at its cap, a pending operation to repair): once the person has mended
 * the vault, nothing about the session's file has changed, and a settled failure would leave it
 * uncompacted for good.
 */
const VAULT_CODES = new Set(['vault_insecure', 'vault_damaged', 'vault_full', 'vault_busy', 'repair_required']);

/**
 * The config file failing to load for apply although it loaded for the pass: it was edited (or
 * removed) while the pass ran. Settled, the failure would stand under the policy the pass had read,
 * so once the edit was finished the unchanged session would be passed over as decided; the next
 * pass either reads the finished file or fails as a whole, said once.
 */
const CONFIG_CODES = new Set(['invalid_config', 'config_not_found']);

/**
 * A failure the next pass tries again although the session's file did not change; a failure the
 * file system raised (errorOf names it by its errno, lowercased) is the machine's state too.
 */
const triedAgain = (code: string) => TRANSIENT_CODES.has(code) || VAULT_CODES.has(code) || CONFIG_CODES.has(code) || isFilesystemCode(code);

/**
 * What would stop the first pass before it reads a session, found before the watch takes its lock:
 * a provider nothing provides (the lock's and the state's file names are made from the providers
 * named), a config that does not load, a strategy or preset on the command line nothing serves. A
 * mistyped command then leaves no file or directory behind. A config table's own mistakes are
 * left to the pass, which fails only the sessions that table governs. Answers the providers the
 * watch covers, whose locks it is to take.
 */
export async function checkWatchSetup(options: WatchOptions): Promise<string[]> {
  return withRuntime({ env: options.env, homes: options.homes, providers: options.providers }, async (rt) => {
    const ids = rt.providerIds();
    const loaded = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
    const refusals: GobstopperError[] = [];
    for (const provider of ids) {
      try {
        requirePolicyIds(rt.host.registry, resolveConfig(loaded, { provider, preset: options.preset, flags: { strategy: options.strategy } }));
      } catch (error) {
        if (!(error instanceof GobstopperError) || error.exit === 2) throw error;
        refusals.push(error);
      }
    }
    // Bounds no watched provider's policy keeps ([policy] floor over its trigger, say) would fail
    // every session the watch could find: refused now, as plan refuses them, rather than every pass.
    const bounds = refusals.filter((e) => e.code === 'invalid_policy');
    if (ids.length > 0 && bounds.length === ids.length) throw bounds[0]!;
    if (options.rehearse) requireRehearsalClients(ids, options.rehearse, options.env);
    return ids;
  });
}

/**
 * With --rehearse, the client of every watched provider that has one must be there from the start:
 * a missing one would otherwise fail each of its sessions, and settle them as failed until they
 * change, for want of an install the person can make now.
 */
function requireRehearsalClients(providers: readonly string[], bins: ClientBins, env: NodeJS.ProcessEnv): void {
  for (const provider of providers) {
    if (!isRehearsable(provider)) continue;
    try {
      resolveClientBin(provider, bins[provider], env);
    } catch (error) {
      if (!(error instanceof GobstopperError)) throw error;
      const others = providers.filter((p) => p !== provider);
      const instead = others.length > 0 ? `, or watch only ${others.join(', ')} (--provider)` : '';
      throw new GobstopperError(error.code, `watch --rehearse resumes ${provider} forks with their client: ${error.message}${instead}`, { details: { provider } });
    }
  }
}

export async function openWatchState(env: NodeJS.ProcessEnv, providers: readonly string[] | undefined): Promise<WatchState> {
  return loadWatchState(watchStatePath(env, watchScope(providers)), Math.floor(Date.now() / 1000));
}

/** One pass over every discovered session; the state is updated in memory and, unless dry, on disk. */
export async function watchPass(options: WatchOptions, state: WatchState, pass: number): Promise<T.WatchPass> {
  const startedAt = Date.now();
  const skipped: T.WatchSkipCounts = { live: 0, settled: 0, published: 0, rate_limited: 0, gone: 0 };
  const decisions: T.WatchDecision[] = [];
  const discarded = state.discarded;
  state.discarded = null;
  const listed = await withRuntime({ env: options.env, homes: options.homes, providers: options.providers }, async (rt) => {
    const loaded = await loadConfig({ configPath: options.configPath, cwd: options.cwd, env: options.env });
    const maxAgeSecs = options.maxAgeSecs !== undefined ? options.maxAgeSecs : discoveryWindow(discoveryMaxAge(loaded));
    const covered = options.locks ? await options.locks.cover(rt.providerIds()) : { watched: rt.providerIds(), warnings: [] };
    const providers = await Promise.all(covered.watched.map((id) => rt.provider(id)));
    const { rows, unlisted, searched, unreadable, unreadableCapped, ahead } = await detectSessions(providers, rt.homes, { maxAgeSecs });
    // A transcript or folder it cannot read is a session it never watches: said once, while it lasts, as detect says it.
    const unreadText = unreadable.length > 0 ? `${unreadableSummary({ unreadable, unreadableCapped })}; not watched` : null;
    const unreadableWarning = newlySaid(unreadText, state.unreadableSaid);
    state.unreadableSaid = unreadText;
    // A session stamped later than the clock reads as live until then, and a watch would wait on it
    // in silence: said once while the same sessions are ahead (the hours ahead change every pass).
    const aheadKey = ahead.length > 0 ? ahead.map((a) => a.path).join('\n') : null;
    const aheadWarning = aheadKey !== null && aheadKey !== state.aheadSaid ? [`${aheadSummary(ahead)}: live until then, so not compacted`] : [];
    state.aheadSaid = aheadKey;
    const { found: published, unfinished, receiptsWarning: receipts } = await publications(options.env);
    const lastApplied = await lastAppliedBySession(options.env);
    // A damaged receipt leaves its fork looking like a session that needs compacting: said once, while it lasts.
    const receiptsWarning = newlySaid(receipts, state.receiptsSaid);
    state.receiptsSaid = receipts;
    // Loaded only when asked for: it is the one part that runs real clients.
    const rehearsal: RehearsalHooks = options.rehearse ? (await import('./rehearse-candidate.js')).rehearsalHooks(rt, options.rehearse) : {};
    // Small sessions first: one large session does not hold up every other decision.
    const queue = [...rows].sort((a, b) => a.bytes - b.bytes || a.path.localeCompare(b.path));
    const looseTables = new Map<string, string[]>();
    const untriggerable: NeverFires[] = [];
    const refusalOf = policyVerdicts((resolved) => refusedPolicy(rt, resolved));
    const plugins = installedPlugins(rt);
    for (const [index, row] of queue.entries()) {
      options.onSession?.(row, index, queue.length);
      // What an interrupt would add about the session before (its fork) is no longer news.
      noteForStop(null);
      const fingerprint = await fingerprintOf(row.path);
      const key = watchKey(row);
      const entry = state.entries.get(key);
      const nowSecs = Math.floor(Date.now() / 1000);
      const triageOf = (policy: string, effectiveTrigger: number, adaptive: boolean, minIntervalSecs: number, seen: T.DetectRow = row) =>
        triage({
          row: seen,
          fingerprint,
          entry,
          policy,
          // A fork a stopped watch published before its record was written is passed over too: the
          // apply of its source, in this pass, finishes the record rather than compacting the fork.
          unresumedPublication: untouchedPublication(published, row.path, fingerprint?.bytes) !== null || untouchedPublication(unfinished, row.path, fingerprint?.bytes) !== null,
          effectiveTrigger,
          adaptive,
          minIntervalSecs,
          lastAppliedSecs: lastApplied.get(lastAppliedKey(row.provider, row.session_id)),
          nowSecs,
        });
      const base = { provider: row.provider, session_id: row.session_id, path: row.path, context_tokens: row.context_tokens };
      const resolution = resolvedOrRefused(loaded, row, options);
      let decision: T.WatchDecision;
      let policyDigest: string;
      if ('refused' in resolution) {
        // This session's own tables break a bound (its [sessions] or [provider] table): that fails
        // this session alone, settled like any failure until the file or the refusal changes. With
        // no trigger to go by, the transcript's size rules nothing out.
        policyDigest = sha256OfJson({ refused: resolution.refused }).slice(0, 16);
        const verdict = triageOf(policyDigest, Number.POSITIVE_INFINITY, true, 0);
        if (verdict.kind === 'skip') {
          skipped[verdict.reason] += 1;
          continue;
        }
        decision = { ...base, outcome: 'failed', error: resolution.refused };
      } else {
        const resolved = resolution.resolved;
        for (const table of resolved.unapplied_session_tables) looseTables.set(table, [...(looseTables.get(table) ?? []), row.session_id]);
        const policy = toResolvedPolicy(resolved.values);
        const never = neverFires(row.provider, row.session_id, row.model_context_window, policy.effective_trigger_tokens, policy.adaptive);
        if (never) untriggerable.push(never);
        policyDigest = policyDigestOf({ ...resolved.values, ...(options.rehearse ? { rehearse: true } : {}) }, options.env, plugins);
        const verdict = triageOf(policyDigest, policy.effective_trigger_tokens, policy.adaptive, policy.min_interval_secs);
        if (verdict.kind === 'skip') {
          skipped[verdict.reason] += 1;
          continue;
        }
        const withTrigger = { ...base, effective_trigger_tokens: policy.effective_trigger_tokens };
        const refused = await refusalOf(resolved);
        decision =
          refused !== null
            ? { ...withTrigger, outcome: 'failed', error: refused }
            : verdict.kind === 'decided'
              ? { ...withTrigger, outcome: verdict.outcome, ...(verdict.outcome === 'live_over_trigger' ? { control: liveControl(row.provider) } : {}) }
              : await evaluate(rt, row, withTrigger, options, rehearsal, unappliedSessionWarning(resolved));
        // Removed while it was decided on: gone, as one the pass finds removed is, not an errno to puzzle over.
        if (decision.outcome === 'failed' && (await fingerprintOf(row.path)) === null) {
          skipped.gone += 1;
          continue;
        }
        // Its client wrote to it after it was listed: live now, it is passed over (or named once) as
        // any live session is, not failed with apply's advice to force it.
        if (decision.outcome === 'failed' && (decision.error!.code === 'session_live' || (decision.error!.code === 'source_changed' && (await liveNow(row.path))))) {
          const live = triageOf(policyDigest, policy.effective_trigger_tokens, policy.adaptive, policy.min_interval_secs, { ...row, active: true });
          if (live.kind === 'skip') {
            skipped[live.reason] += 1;
            continue;
          }
          decision = { ...withTrigger, outcome: 'live_over_trigger', control: liveControl(row.provider) };
        }
      }
      decisions.push(decision);
      if (decision.outcome === 'compacted' && !decision.reused) {
        // Told by an interrupt later in the pass too, which would otherwise end without a word
        // of this fork: the pass that names it is printed only once every session is decided.
        noteForStop(null);
        noteCompletedForStop(completedNote(decision.fork!.path, decision.fork!.resume_command));
      }
      if (decision.outcome === 'failed' && triedAgain(decision.error!.code)) continue;
      // The file as it was before the decision: had a client written to it meanwhile, what it wrote
      // was not decided on, and the next pass sees a file that changed.
      const next: WatchEntry = { provider: row.provider, session_id: row.session_id, fingerprint: fingerprint!, policy: policyDigest, outcome: decision.outcome, decided_at: Math.floor(Date.now() / 1000) };
      const appliedAt = decision.outcome === 'compacted' && !decision.reused ? next.decided_at : entry?.applied_at;
      state.entries.set(key, appliedAt === undefined ? next : { ...next, applied_at: appliedAt });
    }
    forgetLapsed(state, new Set(rows.map(watchKey)), Math.floor(Date.now() / 1000));
    // A home that is not there, or a discovery window nothing was updated in, watches nothing pass
    // after pass: said once, while it lasts, with what would list more.
    const nothing = rows.length === 0 && unlisted.length === 0 ? (missingStoresNote(searched) ?? windowNote(maxAgeSecs)) : null;
    const nothingWarning = newlySaid(nothing, state.nothingToWatchSaid).map((m) => `no sessions to watch: ${m}`);
    state.nothingToWatchSaid = nothing;
    return {
      count: rows.length,
      warnings: [...covered.warnings, ...receiptsWarning, ...unreadableWarning, ...aheadWarning, ...nothingWarning, ...neverFiresWarnings(state.neverFiresSaid, untriggerable), ...looseTableWarnings(state.looseTablesSaid, looseTables)],
    };
  });
  const unsaved = options.dryRun ? null : await saveOrWarn(state);
  const warnings = unsaved === null ? listed.warnings : [...listed.warnings, unsaved];
  return {
    pass,
    started_at: startedAt,
    duration_ms: Date.now() - startedAt,
    dry_run: options.dryRun,
    sessions: listed.count,
    decisions,
    skipped,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(discarded ? { state_discarded: discarded } : {}),
  };
}

/**
 * The policy of one session, or why its tables cannot give one (a bound they break); a mistake on
 * the command line (exit 2) still stops the watch, as checkWatchSetup would have.
 */
function resolvedOrRefused(loaded: LoadedConfig, row: T.DetectRow, options: WatchOptions): { resolved: ResolvedConfig } | { refused: { code: string; message: string } } {
  try {
    return { resolved: resolveConfig(loaded, { provider: row.provider, session_id: row.session_id, preset: options.preset, flags: { strategy: options.strategy } }) };
  } catch (error) {
    if (!(error instanceof GobstopperError) || error.exit === 2) throw error;
    return { refused: errorOf(error) };
  }
}

/** Why a window with no session in it lists none; null when every session is listed. */
function windowNote(maxAgeSecs: number | null): string | null {
  return maxAgeSecs === null ? null : `none was updated in the last ${describeWindow(maxAgeSecs)} (--all or --max-age, or [discovery] max_age_secs in the config, follows older ones)`;
}

/** Written to within the live window by now: a change met mid-apply was its client's. */
async function liveNow(path: string): Promise<boolean> {
  const now = await fingerprintOf(path);
  return now !== null && isActive(now.mtime_ms);
}

/** A state entry's key: one transcript as one provider lists it. */
const watchKey = (row: Pick<T.DetectRow, 'provider' | 'path'>) => `${row.provider}\u0000${row.path}`;

/**
 * The policy values, every GOBSTOPPER_* variable (limits a parse obeys) and the plugin bundles
 * installed: a decision made under other ones is made again. A strategy nothing served, or one
 * whose plugin crashed, fails its sessions until the person installs or mends the bundle, and that
 * is when they expect the watch to try again, not once the file changes or a day has gone.
 */
function policyDigestOf(values: unknown, env: NodeJS.ProcessEnv, plugins: readonly string[]): string {
  const knobs = Object.entries(env)
    .filter(([k]) => k.startsWith('GOBSTOPPER_'))
    .sort(([a], [b]) => a.localeCompare(b));
  // With none installed, the digest is the one watches saved before bundles counted.
  return sha256OfJson(plugins.length > 0 ? { values, knobs, plugins } : { values, knobs }).slice(0, 16);
}

/** Each installed bundle as its pin names it: another version, or the same one added anew, is another. */
function installedPlugins(rt: Runtime): string[] {
  return rt.host.registry
    .installed()
    .map((ref) => `${ref.id}@${ref.version}:${ref.pinnedSha256}`)
    .sort();
}

/** apply's rehearsal hooks with --rehearse, else none. */
type RehearsalHooks = Pick<ApplyOptions, 'rehearse' | 'rehearsalReady'>;

type DecisionBase = Pick<T.WatchDecision, 'provider' | 'session_id' | 'path' | 'context_tokens' | 'effective_trigger_tokens'>;

/**
 * Plans (dry run) or applies one session; a failure is this session's decision, not the pass's.
 * `tableWarning` is what plan warns of a loose [sessions] table of this session: the pass says that
 * once per table (loose-tables.ts), so the decision leaves it out.
 */
async function evaluate(rt: Runtime, row: T.DetectRow, base: DecisionBase, options: WatchOptions, rehearsal: RehearsalHooks, tableWarning: string | null): Promise<T.WatchDecision> {
  const warningsOf = (warnings: readonly string[]) => flatWarnings(warnings.filter((w) => w !== tableWarning));
  const planOptions = { strategy: options.strategy, preset: options.preset, configPath: options.configPath, cwd: options.cwd };
  try {
    if (options.dryRun) {
      const planned = await planForSelector(rt, row.path, planOptions);
      const outcome = planned.outcome;
      const warned = warningsOf(planned.warnings);
      if (outcome.status === 'no_plan') return { ...base, outcome: 'no_plan', context_tokens: outcome.context_tokens_before, reason_code: outcome.reason_code, ...warned };
      // Taken up by its client since it was listed: apply would refuse it, and the pass leaves it as live.
      if (planned.active) return { ...base, outcome: 'failed', error: { code: 'session_live', message: 'updated within the last 180 s' } };
      const control = outcome.plan.edits.find((e) => e.op === 'provider_compact');
      // What the real pass would meet before it writes: a torn last line, or this very plan applied already.
      const verdict = control ? null : await applyVerdict(rt, { ...planned, outcome });
      if (verdict && 'refused' in verdict) return { ...base, outcome: 'failed', error: errorOf(verdict.refused) };
      if (verdict && 'reused' in verdict) {
        return { ...base, outcome: 'compacted', reused: true, context_tokens: outcome.plan.context_tokens_before, strategy: outcome.plan.strategy, context_tokens_after: outcome.plan.context_tokens_after, fork: forkOf(verdict.reused), ...warned };
      }
      return {
        ...base,
        outcome: control ? 'provider_control' : 'would_compact',
        context_tokens: outcome.plan.context_tokens_before,
        strategy: outcome.plan.strategy,
        context_tokens_after: outcome.plan.context_tokens_after,
        ...warned,
      };
    }
    const result = await applySession(rt, row.path, { ...planOptions, ...rehearsal });
    const warned = warningsOf(result.warnings);
    if (result.status === 'no_plan') return { ...base, outcome: 'no_plan', context_tokens: result.outcome.context_tokens_before, reason_code: result.outcome.reason_code, ...warned };
    const plan = result.plan.plan;
    const planned = { context_tokens: plan.context_tokens_before, strategy: plan.strategy, context_tokens_after: plan.context_tokens_after };
    if (result.status === 'provider_control') return { ...base, ...planned, outcome: 'provider_control', control: result.message, ...warned };
    const r = result.receipt;
    return {
      ...base,
      ...planned,
      outcome: 'compacted',
      // A fork an earlier run stopped before publishing was published by this pass: it is news, and
      // min_interval_secs counts from now.
      reused: result.reused && !result.interrupted,
      ...(result.rehearsal ? { rehearsal: result.rehearsal.reason } : {}),
      fork: forkOf(r),
      ...warned,
    };
  } catch (error) {
    return { ...base, outcome: 'failed', error: errorOf(error) };
  }
}

/** A warning said once while it lasts: `now` when there is one and it is not what the watch said last. */
function newlySaid(now: string | null, said: string | null): string[] {
  return now !== null && now !== said ? [now] : [];
}

/** A decision's fork, as its receipt records it. */
function forkOf(r: T.OperationReceipt): NonNullable<T.WatchDecision['fork']> {
  return {
    session_id: r.output_session_id,
    path: r.path,
    resume_command: r.resume_command,
    ...(r.resume_note ? { resume_note: r.resume_note } : {}),
    snapshot_manifest_sha256: r.snapshot_manifest_sha256,
  };
}

/**
 * What plan or apply warned about, kept with the decision: a fork that keeps the source's own verify
 * errors may not resume either, and a watch that dropped the warning would report it as any other.
 */
function flatWarnings(warnings: readonly string[]): { warnings?: string[] } {
  const flat = warnings.map((w) => w.replace(/\s*\n\s*/g, ' ').trim()).filter((w) => w.length > 0);
  return flat.length > 0 ? { warnings: flat } : {};
}

/**
 * What plan would refuse of a session's policy (a strategy or scorer nothing serves, strategy_params
 * its schema refuses), asked before the trigger shortcut so a session under its trigger is not
 * reported as fine under a policy that can never plan. Named on the command line it stops the watch
 * (a usage error, as plan's); set by a config table it is a failure of the sessions that table governs.
 */
async function refusedPolicy(rt: Runtime, resolved: Parameters<typeof requireResolvedPolicy>[1]): Promise<{ code: string; message: string } | null> {
  try {
    await requireResolvedPolicy(rt, resolved);
    return null;
  } catch (error) {
    if (error instanceof GobstopperError && error.exit === 2) throw error;
    return errorOf(error);
  }
}

/**
 * A failure as a decision reports it, on one line as --json reports an error: a decision is one
 * entry of a pass, not a stack. One the file system raised (a full disk, a vault made
 * unwritable, a directory in the way) is named as the commands name it, and marked: it says nothing
 * of the session, and once the person has fixed the disk the next pass tries again without waiting
 * for the file to change (isFilesystemCode).
 */
function errorOf(error: unknown): { code: string; message: string } {
  const flat = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();
  if (error instanceof GobstopperError) return { code: error.code, message: flat(error.message) };
  const errno = systemErrorCode(error);
  if (errno !== null) return { code: errno.toLowerCase(), message: flat(errorMessage(error)) };
  return { code: 'internal', message: flat(error instanceof Error ? error.message : String(error)) };
}

function liveControl(provider: string): string | null {
  return (LIVE_SESSION_CONTROLS as Record<string, string | undefined>)[provider as BuiltinProvider] ?? null;
}
