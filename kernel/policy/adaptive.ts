/**
 * Adaptive trigger and floor. Pure and recomputed from the configured base every time, so running it
 * twice gives the same answer and a stale adjustment never compounds.
 */
import type { AdaptiveReason, Transcript } from '../../schemas/generated/types.js';
import { MAX_POLICY_TOKENS } from './bounds.js';
import { elidableTokens } from './context.js';

export const WINDOW_TRIGGER_FRACTION = 0.25;
export const FLOOR_TRIGGER_FRACTION = 0.5;
export const LOW_YIELD_RATIO = 0.1;
export const LOW_YIELD_BACKOFF = 1.5;
export const MAX_TRIGGER_BOOST = 2.0;
export const HIGH_ELIDABLE_RATIO = 0.5;
export const HIGH_ELIDABLE_TIGHTEN = 0.8;
export const MIN_TRIGGER = 10_000;
export const MIN_FLOOR = 1_000;
/** Only the newest few compactions say anything about how this session compacts now. */
export const RECENT_YIELD_LOOKBACK = 3;

/** One past applied compaction of the same session: its context before and what it reclaimed. */
export interface RecentYield {
  context_before: number;
  est_reclaimed: number;
}

export interface AdaptiveSample {
  model_context_window: number | null;
  context_tokens: number;
  /** null when unknown (no transcript was parsed); the tightening step is then skipped. */
  elidable_tokens: number | null;
  /** Newest first. */
  recent: RecentYield[];
}

/** What adaptive mode reads of a parsed session: its window, its context (already counted), its elidable share, its past yields. */
export function transcriptSample(transcript: Pick<Transcript, 'items' | 'usage'>, contextTokens: number, recent: readonly RecentYield[]): AdaptiveSample {
  return {
    model_context_window: transcript.usage.model_context_window ?? null,
    context_tokens: contextTokens,
    elidable_tokens: elidableTokens(transcript.items),
    recent: [...recent],
  };
}

export interface TriggerFloor {
  trigger_tokens: number;
  floor_tokens: number;
}

/**
 * Values tuning leaves as they are: a --trigger or --floor given for this run is the user's number
 * for it. The other of the pair still adapts, kept consistent with the pinned one.
 */
export interface PinnedValues {
  trigger_tokens?: boolean;
  floor_tokens?: boolean;
}

export interface AdaptiveResult extends TriggerFloor {
  reasons: AdaptiveReason[];
}

/** One step of the tuner that moved a number, for explanations (`tune`). */
export interface AdaptiveStep {
  /** null for the final consistency clamp, which moves numbers without a reason code. */
  reason: AdaptiveReason | null;
  trigger_before: number;
  trigger_after: number;
  floor_before: number;
  floor_after: number;
}

export function adapt(base: TriggerFloor, sample: AdaptiveSample, pinned: PinnedValues = {}): AdaptiveResult {
  const { trigger_tokens, floor_tokens, reasons } = adaptWithSteps(base, sample, pinned);
  return { trigger_tokens, floor_tokens, reasons };
}

export function adaptWithSteps(base: TriggerFloor, sample: AdaptiveSample, pinned: PinnedValues = {}): AdaptiveResult & { steps: AdaptiveStep[] } {
  const reasons: AdaptiveReason[] = [];
  const steps: AdaptiveStep[] = [];
  let trigger = base.trigger_tokens;
  let floor = base.floor_tokens;
  const step = (reason: AdaptiveReason | null, nextTrigger: number, nextFloor: number) => {
    if (reason) reasons.push(reason);
    if (reason || nextTrigger !== trigger || nextFloor !== floor) {
      steps.push({ reason, trigger_before: trigger, trigger_after: nextTrigger, floor_before: floor, floor_after: nextFloor });
    }
    trigger = nextTrigger;
    floor = nextFloor;
  };

  // The trigger steps are skipped for a pinned trigger, the floor cap for a pinned floor, so no
  // reason is given for a value that did not move.
  const triggerFree = !pinned.trigger_tokens;
  const window = sample.model_context_window ?? 0;
  if (triggerFree && window > 0) {
    const cap = Math.round(window * WINDOW_TRIGGER_FRACTION);
    if (trigger > cap) step('trigger_capped_to_window_fraction', Math.max(cap, MIN_TRIGGER), floor);
  }

  if (triggerFree && isLowYieldStreak(sample.recent)) {
    const raised = Math.round(trigger * LOW_YIELD_BACKOFF);
    const bound = Math.round(base.trigger_tokens * MAX_TRIGGER_BOOST);
    if (raised > trigger) step('trigger_raised_low_yield', Math.min(raised, bound), floor);
  }

  const elidable = sample.elidable_tokens;
  if (triggerFree && elidable !== null && sample.context_tokens > 0 && elidable > sample.context_tokens * HIGH_ELIDABLE_RATIO) {
    const tightened = Math.round(trigger * HIGH_ELIDABLE_TIGHTEN);
    if (tightened < trigger) step('trigger_lowered_high_elidable', tightened, floor);
  }

  const floorCap = Math.trunc(trigger * FLOOR_TRIGGER_FRACTION);
  if (!pinned.floor_tokens && floor > floorCap) step('floor_capped_to_trigger_half', trigger, Math.max(floorCap, MIN_FLOOR));
  // Twice a pinned floor may pass the token bound; the trigger then stops there, still above the floor.
  const consistentTrigger = pinned.trigger_tokens ? trigger : Math.min(Math.max(trigger, MIN_TRIGGER, 2 * floor), Math.max(trigger, MAX_POLICY_TOKENS));
  const consistentFloor = pinned.floor_tokens ? floor : Math.min(Math.max(floor, MIN_FLOOR), Math.floor(consistentTrigger / 2));
  step(null, consistentTrigger, consistentFloor);

  return { trigger_tokens: trigger, floor_tokens: floor, reasons, steps };
}

/** At least two of the newest three compactions each reclaimed under a tenth of their context. */
export function isLowYieldStreak(recent: readonly RecentYield[]): boolean {
  const window = recent.slice(0, RECENT_YIELD_LOOKBACK);
  return window.length >= 2 && window.every((r) => r.context_before > 0 && r.est_reclaimed < r.context_before * LOW_YIELD_RATIO);
}

/** Appended to a plan's rationale so the reader sees why the numbers moved. */
export function adaptiveRationaleSuffix(reasons: readonly AdaptiveReason[]): string {
  return reasons.length === 0 ? '' : ` | adaptive: ${reasons.join(', ')}`;
}
