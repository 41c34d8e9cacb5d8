/**
 * What adaptive mode would make of one session, and why, in plain sentences. The numbers come from the
 * caller (the session's usage, its elidable share, past yields); this module reads nothing.
 */
import type { TuneCommandResult } from '../../schemas/generated/types.js';
import { adaptWithSteps, RECENT_YIELD_LOOKBACK, type AdaptiveStep, type PinnedValues, type RecentYield, type TriggerFloor } from './adaptive.js';
import { tableName } from '../config/schema-messages.js';
import { assertPolicyBounds } from './bounds.js';
import type { PolicyValues } from './defaults.js';
import { heldEffectiveTrigger } from './quota.js';

export interface TuneInput {
  provider: string;
  session_id: string;
  context_tokens: number;
  elidable_tokens: number | null;
  model_context_window: number | null;
  /** Newest first. */
  recent: readonly RecentYield[];
  policy: PolicyValues;
  /** A trigger or floor given as a flag, which adaptive leaves as it is, as plan does (pinnedByFlags). */
  pinned?: PinnedValues;
  /** adaptive = false comes from the session's own table (a pasted snippet): turning it on is done there. */
  adaptive_off_by_session?: boolean;
  /** The config files that already hold a `[sessions."<id>"]` table for this session. */
  session_table_paths?: readonly string[];
}

const n = (value: number) => value.toLocaleString('en-US');

export function tune(input: TuneInput): TuneCommandResult {
  assertPolicyBounds(input.policy);
  const configured = { trigger_tokens: input.policy.trigger_tokens, floor_tokens: input.policy.floor_tokens };
  const sample = {
    model_context_window: input.model_context_window,
    context_tokens: input.context_tokens,
    elidable_tokens: input.elidable_tokens,
    recent: [...input.recent],
  };
  const pinned = input.pinned ?? {};
  const result = adaptWithSteps(configured, sample, pinned);
  const adjusted = { trigger_tokens: result.trigger_tokens, floor_tokens: result.floor_tokens };
  const explanation = [...pinnedNote(configured, pinned), ...result.steps.map((s) => explainStep(s, input))];
  const nothing = result.steps.length === 0 ? nothingToAdjust(input, pinned) : null;
  if (nothing !== null) explanation.push(nothing);
  if (!input.policy.adaptive) explanation.push('adaptive is off for this session, so plans use the configured trigger and floor');
  const changed = adjusted.trigger_tokens !== configured.trigger_tokens || adjusted.floor_tokens !== configured.floor_tokens;
  return {
    provider: input.provider,
    session_id: input.session_id,
    adaptive_enabled: input.policy.adaptive,
    model_context_window: input.model_context_window,
    context_tokens: input.context_tokens,
    elidable_tokens: input.elidable_tokens,
    recent_applied: Math.min(input.recent.length, RECENT_YIELD_LOOKBACK),
    configured,
    adjusted,
    effective_trigger_tokens: heldEffectiveTrigger({ ...input.policy, ...adjusted }),
    reasons: result.reasons,
    explanation,
    suggested_toml: changed ? suggestedToml(input, adjusted.trigger_tokens, adjusted.floor_tokens) : null,
  };
}

function explainStep(step: AdaptiveStep, input: TuneInput): string {
  const trigger = `trigger ${n(step.trigger_before)} → ${n(step.trigger_after)}`;
  const floor = `floor ${n(step.floor_before)} → ${n(step.floor_after)}`;
  switch (step.reason) {
    case 'trigger_capped_to_window_fraction':
      return `the model's window is ${n(input.model_context_window ?? 0)} tokens; the trigger is capped at a quarter of it (never below 10,000): ${trigger}`;
    case 'trigger_raised_low_yield':
      return `recent compactions each reclaimed under 10% of their context, so compacting this often is not worth a cycle; the trigger backs off ×1.5, at most twice the configured ${n(input.policy.trigger_tokens)}: ${trigger}`;
    case 'trigger_lowered_high_elidable':
      return `${n(input.elidable_tokens ?? 0)} of ${n(input.context_tokens)} context tokens are elidable tool output (over half), so compacting earlier is cheap; the trigger tightens ×0.8: ${trigger}`;
    case 'floor_capped_to_trigger_half':
      return `the floor may be at most half the trigger (and at least 1,000): ${floor}`;
    case null: {
      // Only what moved: "floor 60,000 → 60,000" beside a raised trigger reads as a change.
      const moved = [step.trigger_after !== step.trigger_before ? trigger : null, step.floor_after !== step.floor_before ? floor : null].filter((m) => m !== null);
      return `trigger and floor are kept consistent (trigger at least 10,000 and twice the floor, floor at least 1,000): ${moved.join(', ')}`;
    }
  }
}

function pinnedNote(configured: TriggerFloor, pinned: PinnedValues): string[] {
  const given = [
    ...(pinned.trigger_tokens ? [{ what: `trigger ${n(configured.trigger_tokens)}`, flag: '--trigger' }] : []),
    ...(pinned.floor_tokens ? [{ what: `floor ${n(configured.floor_tokens)}`, flag: '--floor' }] : []),
  ];
  if (given.length === 0) return [];
  const what = given.map((g) => g.what).join(' and ');
  const flags = given.map((g) => g.flag).join(' and ');
  return [`${what} ${given.length === 1 ? 'is' : 'are'} given with ${flags} for this run, so adaptive leaves ${given.length === 1 ? 'it' : 'them'} as ${given.length === 1 ? 'it is' : 'they are'}`];
}

/** Why no step moved a number; null when both are pinned, which the pinned note already says. */
function nothingToAdjust(input: TuneInput, pinned: PinnedValues): string | null {
  if (pinned.trigger_tokens && pinned.floor_tokens) return null;
  if (pinned.trigger_tokens) return 'nothing else to adjust: the floor is within half the trigger';
  const window = input.model_context_window ? `the trigger is within a quarter of the ${n(input.model_context_window)}-token window` : 'the provider reports no context window';
  return `nothing to adjust: ${window}, ${yieldsJudged(input.recent.length)}, and elidable output is not over half the context`;
}

/** The back-off needs two compactions to judge by: with fewer, "not all low-yield" would claim a yield never seen. */
function yieldsJudged(logged: number): string {
  if (logged === 0) return 'no applied compaction of this session is logged to judge its yield by';
  if (logged === 1) return 'only one applied compaction of this session is logged (the yield back-off needs two)';
  return 'recent compactions were not all low-yield';
}

/**
 * A session table that makes plans use these numbers. With adaptive on it also turns adaptive off
 * there: tuning recomputes from the configured base, so pasted numbers alone would move again.
 */
function suggestedToml(input: TuneInput, trigger: number, floor: number): string {
  const table = tableName(['sessions', input.session_id]);
  // Appended as it is, a second table of the same name makes the whole file invalid TOML.
  const existing = input.session_table_paths ?? [];
  const merge = existing.length === 0 ? [] : [`# ${existing.join(' and ')} already ${existing.length === 1 ? 'has' : 'have'} a ${table} table: set these keys in it rather than adding a second one`];
  const lines = [...merge, table, `trigger_tokens = ${trigger}`, `floor_tokens = ${floor}`];
  if (input.policy.adaptive) lines.push('adaptive = false');
  else if (input.adaptive_off_by_session) lines.push('# or let gobstopper derive these per session again: adaptive = true here');
  else lines.push('# or let gobstopper derive these per session: adaptive = true under [policy]');
  return lines.join('\n');
}
