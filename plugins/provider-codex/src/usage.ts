/**
 * Provider-reported usage. Codex reports after each model call in `event_msg/token_count` (older
 * builds: `token_usage_record`): `last_token_usage` is the last request, so its input + output is
 * the context; `total_token_usage` is the lifetime counter, replaced (not summed) on every report.
 * Rate-limit-only reports carry `info: null` and change nothing; a report missing its counters
 * leaves earlier values standing. A compaction or a rollback resets the context until the next
 * report.
 *
 * Each record yields facts, and the newest fact of each kind wins. The full parse applies facts
 * oldest first; a tail read can resolve them newest first and stop early, with the same result.
 */
import type { ContextReason, UsageSample } from '../../../sdk/index.js';
import { RecordType, isObject, isReadableCompaction, isSummaryCompaction, type Json } from './records.js';

const isCount = (v: Json | undefined): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const MAX_WINDOW = 100_000_000;

export interface ContextFact {
  state: 'reported' | 'unknown' | 'reset';
  tokens: number;
  reason: ContextReason | null;
}

/** What one record says about usage; an absent field says nothing. */
export interface UsageFacts {
  context?: ContextFact;
  lifetime?: { input: number; cached: number };
  window?: number;
  model?: string;
}

const RESET: ContextFact = { state: 'reset', tokens: 0, reason: null };

function windowFact(value: Json | undefined): number | undefined {
  return isCount(value) && value > 0 && value <= MAX_WINDOW ? value : undefined;
}

function reportFacts(last: Json | undefined, total: Json | undefined, window: Json | undefined): UsageFacts {
  const facts: UsageFacts = {};
  if (isObject(last)) {
    const input = last.input_tokens;
    const output = last.output_tokens;
    // Codex writes a report whose last usage is all zeros around a compaction, before any request
    // is sent: it measures nothing, so the compaction's reset (or the report before it) stands.
    if (isCount(input) && isCount(output)) {
      if (input + output > 0) facts.context = { state: 'reported', tokens: input + output, reason: null };
    } else if (input !== undefined && output !== undefined) {
      facts.context = { state: 'unknown', tokens: 0, reason: input === null || output === null ? 'null_component' : 'malformed_component' };
    }
  }
  if (isObject(total) && isCount(total.input_tokens)) {
    const cached = isCount(total.cached_input_tokens) ? total.cached_input_tokens : 0;
    facts.lifetime = { input: total.input_tokens, cached: Math.min(cached, total.input_tokens) };
  }
  const w = windowFact(window);
  if (w !== undefined) facts.window = w;
  return facts;
}

/** The usage facts of one parsed record, or null when it carries none. */
export function usageFacts(type: Json | undefined, payload: Json | undefined): UsageFacts | null {
  if (!isObject(payload)) return null;
  if (type === RecordType.eventMsg) {
    if (payload.type === 'token_count') return isObject(payload.info) ? reportFacts(payload.info.last_token_usage, payload.info.total_token_usage, payload.info.model_context_window) : null;
    // Turns taken back leave the context without a request, so the report before them counts them
    // still: like a compaction, a rollback resets the context until the next report.
    if (payload.type === 'thread_rolled_back') return Number.isSafeInteger(payload.num_turns) && (payload.num_turns as number) > 0 ? { context: RESET } : null;
    if (payload.type === 'task_started') {
      const w = windowFact(payload.model_context_window);
      return w === undefined ? null : { window: w };
    }
    return null;
  }
  if (type === RecordType.tokenUsageRecord) return reportFacts(payload.usage, payload.thread_token_usage, payload.model_context_window);
  if (type === RecordType.turnContext) {
    const model = payload.model;
    return typeof model === 'string' && model.length > 0 && model.length <= 128 ? { model } : null;
  }
  if (type === RecordType.compacted) return isReadableCompaction(payload) || isSummaryCompaction(payload) ? { context: RESET } : null;
  return null;
}

export class UsageTracker {
  private context: ContextFact | null = null;
  private lifetime: { input: number; cached: number } | null = null;
  private window: number | null = null;
  private model: string | null = null;

  /** Oldest first: every fact replaces the one before it. */
  apply(facts: UsageFacts | null): void {
    if (facts === null) return;
    if (facts.context) this.context = facts.context;
    if (facts.lifetime) this.lifetime = facts.lifetime;
    if (facts.window !== undefined) this.window = facts.window;
    if (facts.model !== undefined) this.model = facts.model;
  }

  /** Newest first: a fact counts only if no newer one was seen. Returns true once nothing is left to learn. */
  applyOlder(facts: UsageFacts | null): boolean {
    if (facts !== null) {
      if (facts.context && this.context === null) this.context = facts.context;
      if (facts.lifetime && this.lifetime === null) this.lifetime = facts.lifetime;
      if (facts.window !== undefined && this.window === null) this.window = facts.window;
      if (facts.model !== undefined && this.model === null) this.model = facts.model;
    }
    return this.context !== null && this.lifetime !== null && this.window !== null && this.model !== null;
  }

  /** Which facts are still unknown (for a newest-first read). */
  missing(): { context: boolean; lifetime: boolean; window: boolean; model: boolean } {
    return { context: this.context === null, lifetime: this.lifetime === null, window: this.window === null, model: this.model === null };
  }

  /** Duplicate call ids or outputs: the client's view of the context cannot be predicted. */
  markAmbiguous(): void {
    this.context = { state: 'unknown', tokens: 0, reason: 'invalid_record' };
  }

  get contextReported(): boolean {
    return this.context?.state === 'reported';
  }

  sample(): UsageSample {
    return {
      context_tokens: this.context?.tokens ?? 0,
      lifetime_input_tokens: this.lifetime?.input ?? 0,
      lifetime_cached_tokens: this.lifetime?.cached ?? 0,
      model_context_window: this.window,
      model: this.model,
      context_state: this.context?.state ?? 'absent',
      lifetime_scope: this.lifetime ? 'full' : 'absent',
      context_components: null,
      context_reason: this.context?.reason ?? null,
    };
  }
}
