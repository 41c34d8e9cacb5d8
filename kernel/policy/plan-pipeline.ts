/**
 * The plan pipeline: from a parsed transcript and the layered policy to a validated plan or a no-plan
 * decision. It owns no I/O of its own; the strategy runner (the plugin host) and, for legacy presets,
 * the command runner are passed in, so every caller (plan and apply, eval and eval-study) reaches the same decision.
 *
 *   bounds → adaptive (when enabled; flag values stay) → context before → below trigger? → propose → admit
 */
import type {
  Edit,
  PlanCommandNoPlan,
  PlanCommandPlan,
  PluginRef,
  ProviderInfo,
  ResolvedPolicy,
  StrategyProposeParams,
  StrategyProposeResult,
  Transcript,
} from '../../schemas/generated/types.js';
import type { ExternalProposer, ValueSource } from '../config/resolve-config.js';
import { GobstopperError } from '../errors.js';
import { prepareAdmission } from '../validate/edit-rules.js';
import { transcriptSample, type RecentYield } from './adaptive.js';
import { admitProposal, type Proposal } from './admit-proposal.js';
import { contextTokens } from './context.js';
import type { PolicyValues } from './defaults.js';
import { effectivePolicy, pinnedByFlags } from './effective-policy.js';
import { runLegacyCommand as defaultLegacyRunner, type LegacyCommandRunner } from './legacy-command.js';
import { gatedProjectionOf } from './gated-candidates.js';
import { noPlan } from './no-plan.js';

export interface StrategyRunOptions {
  /** A pinned bundle from the config's `plugin` key, to be loaded instead of the installed strategy. */
  plugin?: PluginRef;
}

/** A strategy's answer, with the id of the plugin bundle that served it (named when its plan is refused). */
export type StrategyRunResult = StrategyProposeResult & { plugin_id?: string };

export type StrategyRunner = (strategyId: string, params: StrategyProposeParams, options?: StrategyRunOptions) => Promise<StrategyRunResult>;

export interface PlanPipelineInput {
  transcript: Transcript;
  /**
   * The layered configuration: policy values, any configured userspace proposer, and where each
   * value came from (a trigger or floor given as a flag is not tuned by adaptive mode).
   */
  config: { values: PolicyValues; external: ExternalProposer | null; sources?: Record<string, ValueSource> };
  /** Updated within the last 180 s; strategies route live sessions to the provider's own compaction. */
  active: boolean;
  /** Past applied compactions of this session, newest first (read from the events log by the caller). */
  recentYields?: readonly RecentYield[];
  runStrategy: StrategyRunner;
  runLegacyCommand?: LegacyCommandRunner;
  provider?: ProviderInfo | null;
}

export type PlanOutcome = PlanCommandPlan | PlanCommandNoPlan;

export async function planSession(input: PlanPipelineInput): Promise<PlanOutcome> {
  const { transcript, config } = input;
  const before = contextTokens(transcript);
  const policy = effectivePolicy(config.values, transcriptSample(transcript, before, input.recentYields ?? []), pinnedByFlags(config.sources));
  if (before < policy.effective_trigger_tokens) return noPlan('below_trigger', policy, before);

  const proposing = propose(input, policy, before);
  // The host waits on the strategy now: index the items for admission meanwhile. An immediate runs
  // once the microtasks queued so far are done, which puts the request on its way first when the
  // strategy's process is already running (plan starts it while the provider parses); one still
  // starting gets the request once its handshake is done, whichever comes first.
  setImmediate(() => prepareAdmission(transcript.items, policy.keep_recent_tool_outputs));
  const proposal = await proposing;
  try {
    return admitProposal({ transcript, policy, context_tokens_before: before, proposal, active: input.active });
  } catch (error) {
    throw withProposer(error, proposerOf(proposal, config.external), proposal.plugin_id);
  }
}

/** Who made a proposal, as a user would find it in their config: `strategy elide`, `command of [presets.u]`. */
function proposerOf(proposal: Proposal, external: ExternalProposer | null): string {
  if (proposal.source === 'legacy_command' && external) return `command of ${external.table}`;
  if (proposal.source === 'plugin' && external) return `plugin of ${external.table}`;
  return `strategy ${proposal.strategy}`;
}

/**
 * A refused plan keeps its exact code and message; its details say whose proposal it was, and name
 * the plugin bundle by `plugin_id` as the plugin's own errors do.
 */
function withProposer(error: unknown, proposer: string, pluginId: string | undefined): unknown {
  if (!(error instanceof GobstopperError) || error.details?.rule === undefined) return error;
  const details = { ...error.details, proposer, ...(pluginId === undefined ? {} : { plugin_id: pluginId }) };
  return new GobstopperError(error.code, error.message, { exit: error.exit, details, cause: error });
}

async function propose(input: PlanPipelineInput, policy: ResolvedPolicy, before: number): Promise<Proposal> {
  const { transcript, config } = input;
  const external = config.external;
  if (external?.kind === 'legacy_command') {
    const run = input.runLegacyCommand ?? defaultLegacyRunner;
    const edits: Edit[] = await run({
      command: external.command,
      table: external.table,
      input: { session_id: transcript.session.session_id, provider: transcript.session.provider, items: transcript.items, usage: transcript.usage },
    });
    return { edits, rationale: '', strategy: policy.strategy, source: 'legacy_command' };
  }
  const params: StrategyProposeParams = {
    strategy_id: policy.strategy,
    session: transcript.session,
    items: transcript.items,
    usage: transcript.usage,
    policy,
    context_tokens: before,
    active: input.active,
    ...(input.provider === undefined ? {} : { provider: input.provider }),
  };
  if (external?.kind === 'plugin') {
    const result = await input.runStrategy(policy.strategy, params, { plugin: { manifest: external.manifest, trusted_sha256: external.trusted_sha256 } });
    return { edits: result.edits, rationale: result.rationale, strategy: policy.strategy, source: 'plugin', plugin_id: result.plugin_id };
  }
  const result = await input.runStrategy(policy.strategy, params);
  return { edits: result.edits, rationale: result.rationale, strategy: result.strategy ?? policy.strategy, source: 'strategy', gated_context_tokens_after: gatedProjectionOf(result), plugin_id: result.plugin_id };
}
