/**
 * One assistant record's `message.usage`, read strictly (dialects.md §1.5): the context it reports
 * is input + cache_read + cache_creation + output. Missing cache counters count as zero (old files
 * omit them); missing, null or malformed input/output counters make the reading unusable, with the
 * reason the UsageSample schema names.
 */
import type { ContextComponents, ContextReason } from '../../../schemas/generated/types.js';
import { isObject } from './records.js';

/** The schema's TokenCount bound. */
const MAX_TOKENS = 10_000_000_000_000;

export interface UsageReading {
  /** input + cache_read + cache_creation + output; 0 for a synthetic (all-zero) usage. */
  context: number;
  /** input + cache_read + cache_creation: what the request cost in input tokens. */
  input: number;
  /** cache_read alone. */
  cached: number;
  /** Why the reading cannot be trusted; null when it can. */
  reason: ContextReason | null;
  /** The components that could be read, kept only for an untrusted reading. */
  components: ContextComponents | null;
}

const MISSING = -1;
const NULL = -2;
const MALFORMED = -3;

/** A counter's value, or a negative code for missing / null / malformed. */
function counter(u: Record<string, unknown>, key: string): number {
  const v = u[key];
  if (v === undefined) return MISSING;
  if (v === null) return NULL;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return MALFORMED;
  return v;
}

function reasonOf(code: number): ContextReason {
  return code === MISSING ? 'missing_component' : code === NULL ? 'null_component' : 'malformed_component';
}

/** Reads `message.usage`; null when the record carries no usage object at all. */
export function readUsage(usage: unknown): UsageReading | null {
  if (usage === undefined) return null;
  if (!isObject(usage)) return { context: 0, input: 0, cached: 0, reason: 'malformed_component', components: {} };
  const input = counter(usage, 'input_tokens');
  let cacheRead = counter(usage, 'cache_read_input_tokens');
  let cacheCreation = counter(usage, 'cache_creation_input_tokens');
  const output = counter(usage, 'output_tokens');
  // Old files omit the cache counters: absent means none.
  if (cacheRead === MISSING) cacheRead = 0;
  if (cacheCreation === MISSING) cacheCreation = 0;
  const worst = Math.min(input, cacheRead, cacheCreation, output);
  if (worst < 0) {
    const firstBad = [input, cacheRead, cacheCreation, output].find((v) => v < 0)!;
    const value = (v: number) => (v < 0 ? null : v);
    return {
      context: 0,
      input: 0,
      cached: 0,
      reason: reasonOf(firstBad),
      components: { input_tokens: value(input), cache_read_tokens: value(cacheRead), cache_creation_tokens: value(cacheCreation), output_tokens: value(output) },
    };
  }
  const inTokens = input + cacheRead + cacheCreation;
  const context = inTokens + output;
  if (context > MAX_TOKENS) return { context: 0, input: 0, cached: 0, reason: 'overflow', components: null };
  return { context, input: inTokens, cached: cacheRead, reason: null, components: null };
}
