/**
 * The occupancy math, in numbers and in plain words: when a session compacts, where it lands, what
 * counts as its context, and what a cycle costs compared with waiting for the provider's own
 * auto-compaction near the end of the window.
 */
import type { ContextBasis, ExplainCommandResult, ExplainCycle, ExplainedSession, ExplainWarning, ExternalProposer, PlanCommandNoPlan, ResolvedPolicy } from '../../schemas/generated/types.js';
import { formatCount } from '../text/human.js';
import { QUOTA_PRESSURE_FACTOR, pressureHoldNote } from './quota.js';
import { BUILTIN_PROVIDERS, PROVIDER_CONTROLS, type BuiltinProvider } from './provider-controls.js';

/** Native auto-compaction fires near the end of the window and lands around this many tokens. */
export const NATIVE_TRIGGER_FRACTION = 0.9;
/** Where a client with this window compacts by itself. */
export const nativeTriggerTokens = (window: number): number => Math.round(window * NATIVE_TRIGGER_FRACTION);
/** A trigger at or above that point is never reached: the client compacts first. */
export const triggerNeverReached = (trigger: number, window: number): boolean => trigger >= window * NATIVE_TRIGGER_FRACTION;
/**
 * What to say when a session sat under a trigger it can never reach (null when it can): plan
 * prints it under its answer, apply among its warnings.
 */
export function neverFiresNote(outcome: PlanCommandNoPlan, window: number | null | undefined, sessionId: string): string | null {
  if (outcome.reason_code !== 'below_trigger' || !window || !triggerNeverReached(outcome.effective_trigger_tokens, window)) return null;
  return (
    `the trigger is at or above where the client compacts by itself (~${formatCount(nativeTriggerTokens(window))} of a ${formatCount(window)}-token window), ` +
    `so it never fires for this session; lower trigger_tokens (or --trigger), and see gobstopper explain ${sessionId}`
  );
}
export const NATIVE_FLOOR_TOKENS = 60_000;
export const DEFAULT_EXPLAIN_WINDOW_TOKENS = 1_000_000;

const CONTEXT_COUNTS: Record<BuiltinProvider, string> = {
  claude_code:
    'the newest assistant turn on the live branch: input + cache_read + cache_creation + output tokens as Claude Code recorded them; abandoned branches never count',
  codex: "the newest token_count report: the last turn's input (cached input is already inside it) + output tokens; a compacted record or a rollback (thread_rolled_back) resets it until the next report",
  devin: "the newest live assistant node's input + output tokens",
};

export interface ExplainInput {
  provider: BuiltinProvider | null;
  policy: ResolvedPolicy;
  context_tokens: number | null;
  window_tokens?: number;
  /** The session whose context is assessed, when one was named. */
  session?: ExplainedSession | null;
  /** A command or pinned plugin a config table runs in the strategy bundle's place. */
  proposer?: ExternalProposer | null;
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');

export function explain(input: ExplainInput): ExplainCommandResult {
  const { policy } = input;
  const trigger = policy.effective_trigger_tokens;
  const floor = policy.floor_tokens;
  const window = input.window_tokens ?? DEFAULT_EXPLAIN_WINDOW_TOKENS;
  const nativeTrigger = nativeTriggerTokens(window);
  const nativeFloor = Math.min(NATIVE_FLOOR_TOKENS, Math.floor(nativeTrigger / 2));
  // The native compaction fires near 90% of the window: a trigger past it is never reached. (Quota
  // pressure never brings it to the floor: see pressureHold.)
  const neverFires = trigger >= nativeTrigger;
  const average = Math.round((trigger + floor) / 2);
  const nativeAverage = Math.round((nativeTrigger + nativeFloor) / 2);
  const ratio = Math.round((nativeAverage / Math.max(1, average)) * 100) / 100;
  // A script reads the numbers without the warnings in lines: a cycle that never happens has none.
  const cycle: ExplainCycle = {
    reclaimed_per_cycle_tokens: neverFires ? null : trigger - floor,
    average_context_tokens: neverFires ? null : average,
    compaction_input_tokens: neverFires ? null : trigger,
    window_tokens: window,
    native_trigger_tokens: nativeTrigger,
    native_floor_tokens: nativeFloor,
    native_average_context_tokens: nativeAverage,
    fewer_tokens_ratio: neverFires ? null : ratio,
  };
  const providers = input.provider ? [input.provider] : [...BUILTIN_PROVIDERS];
  const contextBasis: ContextBasis[] = providers.map((p) => ({ provider: p, counts: CONTEXT_COUNTS[p], native_control: PROVIDER_CONTROLS[p] }));

  const assessment =
    input.context_tokens === null
      ? null
      : {
          context_tokens: input.context_tokens,
          over_trigger: input.context_tokens >= trigger,
          tokens_until_trigger: Math.max(0, trigger - input.context_tokens),
          reclaimable_to_floor_tokens: Math.max(0, input.context_tokens - floor),
          worth_a_cycle: input.context_tokens >= trigger && input.context_tokens - floor >= policy.min_savings_tokens,
        };

  const lines: string[] = [];
  const session = input.session ?? null;
  if (session) {
    const recorded = session.model_context_window;
    const windowNote =
      (recorded === null ? 'its model window is not recorded' : `its model window is ${n(recorded)} tokens`) +
      (input.window_tokens !== undefined && input.window_tokens !== recorded ? ` (the figures below use a ${n(window)}-token window)` : '');
    lines.push(`Session ${session.provider} ${session.session_id}: ${windowNote}; the policy below is the one plan uses for it.`);
  }
  const factor = QUOTA_PRESSURE_FACTOR[policy.quota_pressure].toFixed(2).replace(/0$/, '');
  const held = pressureHoldNote(policy);
  const scaling = held === null ? ` (trigger ${n(policy.trigger_tokens)} ×${factor} for ${policy.quota_pressure} quota pressure)` : '';
  lines.push(
    `Policy: strategy ${policy.strategy}${proposerNote(input.proposer ?? null, policy.strategy)}; compact when the context reaches ${n(trigger)} tokens${scaling} and aim for ${n(floor)} afterwards (the floor)` +
      (held === null ? '.' : `; ${held}.`),
  );
  lines.push(`A plan must reclaim at least ${n(policy.min_savings_tokens)} tokens, after paying for the stubs it leaves, to be worth a cycle.`);
  const warnings: ExplainWarning[] = [];
  if (neverFires) {
    const remedy = policy.adaptive
      ? 'adaptive, which is on, caps it per session at a quarter of the model window when plan runs, before any low-yield back-off (see gobstopper tune)'
      : 'or turn adaptive on (it caps the trigger at a quarter of the window, before any low-yield back-off)';
    warnings.push({
      code: 'trigger_never_reached',
      message:
        `the trigger (${n(trigger)}) is at or above where the client compacts by itself (about ${n(nativeTrigger)}, 90% of a ${n(window)}-token window), ` +
        `so as configured it never fires; set trigger_tokens below ${n(nativeTrigger)}${policy.adaptive ? `; ${remedy}` : `, ${remedy}`}.`,
    });
  }
  for (const warning of warnings) lines.push(`Warning: ${warning.message}`);
  if (policy.adaptive && !neverFires) {
    lines.push(
      'Adaptive is on: per session the trigger is capped at a quarter of the model window, backed off after low-yield compactions and tightened when over half the context is elidable tool output (see gobstopper tune).',
    );
  }
  lines.push('What counts as context:');
  for (const basis of contextBasis) lines.push(`  ${basis.provider}: ${basis.counts}.`);
  lines.push('  Without reported usage, gobstopper estimates 4 bytes a token over the records still in context.');
  // A cycle that never happens has no cost or saving worth putting in words.
  if (!neverFires) {
    lines.push(
      `Each cycle lets the context grow from about ${n(floor)} to ${n(trigger)} tokens and reclaims about ${n(trigger - floor)}; ` +
        `an average turn carries about ${n(average)} tokens.`,
    );
    lines.push(
      `Waiting for native auto-compaction near 90% of a ${n(window)}-token window (about ${n(nativeTrigger)} → ${n(nativeFloor)}) ` +
        `averages about ${n(nativeAverage)} tokens a turn: ${ratio}× what this policy carries.`,
    );
  }
  // With no session and no --window the window is a stand-in: most models' windows are far smaller,
  // and there a trigger this size may never be reached at all.
  if (input.window_tokens === undefined && session === null) {
    lines.push(
      `That window is an assumption: no session was named and no --window given. Claude Code and Codex models commonly have 200,000- to 272,000-token windows, where they compact by themselves near 90%; ` +
        'gobstopper explain <session> uses its model\'s window, and --window <tokens> sets one.',
    );
  }
  lines.push(
    `What a cycle costs: the provider's own compaction (${[...new Set(contextBasis.map((b) => b.native_control))].join(', ')}) is one extra model call that reads the whole context ` +
      `${neverFires ? '' : `(about ${n(trigger)} input tokens) `}and writes a summary. A transcript compaction calls no model, but the next turn re-reads everything from the first changed record without the prompt cache; ` +
      'strategies that keep a long unchanged prefix keep more of it cached.',
  );
  if (assessment) {
    const ctx = n(assessment.context_tokens);
    if (!assessment.over_trigger) {
      lines.push(`At ${ctx} tokens the session is ${n(assessment.tokens_until_trigger)} token${assessment.tokens_until_trigger === 1 ? '' : 's'} below the trigger: nothing to do yet.`);
    } else {
      const live = input.provider ? `the provider's own compaction (${PROVIDER_CONTROLS[input.provider]})` : "the provider's own compaction";
      lines.push(
        `At ${ctx} tokens the session is over the trigger: a live session calls for ${live}; an idle one for a transcript compaction toward ${n(floor)}, ` +
          `reclaiming up to about ${n(assessment.reclaimable_to_floor_tokens)} tokens${assessment.worth_a_cycle ? '' : ', which is under the minimum savings, so no plan'}.`,
      );
    }
  }
  return {
    provider: input.provider,
    session,
    policy: {
      strategy: policy.strategy,
      trigger_tokens: policy.trigger_tokens,
      floor_tokens: floor,
      min_savings_tokens: policy.min_savings_tokens,
      quota_pressure: policy.quota_pressure,
      effective_trigger_tokens: trigger,
      adaptive: policy.adaptive,
    },
    assessment,
    context_basis: contextBasis,
    cycle,
    ...(input.proposer ? { proposer: input.proposer } : {}),
    warnings,
    lines,
  };
}

/** Who proposes instead of the strategy's bundle: "the command of [presets.c]". */
export const proposerName = (proposer: ExternalProposer): string => `${proposer.kind === 'legacy_command' ? 'the command' : 'the pinned plugin'} of ${proposer.table}`;

function proposerNote(proposer: ExternalProposer | null, strategy: string): string {
  return proposer === null ? '' : ` (proposed by ${proposerName(proposer)}; plans are named preset:${strategy})`;
}
