import type {
  ContextComparison,
  RebuiltContext,
  RehearsalCheck,
  RehearsalCheckOutcome,
  RehearsalPrediction,
} from '../../../schemas/generated/types.js';
import { formatInt } from '../../text/numbers.js';

/** How far the rebuilt tokens may stray from the prediction, either way, and still be "equal". */
export const TOKEN_TOLERANCE = 0.1;
/**
 * ...but never less than this many tokens: estimates are ceil(bytes/4) per stored record, and the
 * framing of one appended record (a state card's envelope) is worth about this much, which is more
 * than 10% of a context of a few hundred tokens. Counts, not tokens, catch a missing record there.
 */
export const TOKEN_SLACK = 128;

function countOutcome(predicted: number, rebuilt: number): RehearsalCheckOutcome {
  if (rebuilt === predicted) return 'equal';
  return rebuilt < predicted ? 'shorter' : 'longer';
}

/**
 * Compares the context the client rebuilt with the one predicted. Tool calls and results must match
 * exactly and stay paired; messages and units must match exactly when the prediction states them;
 * tokens must be within 10% (or TOKEN_SLACK for a small context). A rebuilt context smaller than predicted is reported as `shorter`, the failure that
 * matters most: it is how a client's silent repair of a broken transcript shows.
 */
export function compareContext(rebuilt: RebuiltContext, predicted: RehearsalPrediction): ContextComparison {
  const openCalls = Math.max(0, predicted.tool_calls - predicted.tool_results);
  const ratio = predicted.est_tokens === 0 ? (rebuilt.est_tokens === 0 ? 1 : Number.POSITIVE_INFINITY) : rebuilt.est_tokens / predicted.est_tokens;
  const allowed = Math.max(TOKEN_TOLERANCE * predicted.est_tokens, TOKEN_SLACK);
  const drift = rebuilt.est_tokens - predicted.est_tokens;
  const tokenOutcome: RehearsalCheckOutcome = drift < -allowed ? 'shorter' : drift > allowed ? 'longer' : 'equal';
  const checks: RehearsalCheck[] = [
    { name: 'tool_calls', outcome: countOutcome(predicted.tool_calls, rebuilt.tool_calls), predicted: predicted.tool_calls, rebuilt: rebuilt.tool_calls, rule: 'same number of distinct tool call ids' },
    { name: 'tool_results', outcome: countOutcome(predicted.tool_results, rebuilt.tool_results), predicted: predicted.tool_results, rebuilt: rebuilt.tool_results, rule: 'same number of answered tool call ids; results the client made up are not counted' },
    {
      name: 'tool_pairing',
      outcome: rebuilt.orphan_tool_results === 0 && rebuilt.unanswered_tool_calls === openCalls ? 'equal' : 'broken',
      predicted: openCalls,
      rebuilt: rebuilt.unanswered_tool_calls + rebuilt.orphan_tool_results,
      rule: 'no result without its call; no call left unanswered beyond those the transcript leaves open',
    },
    predicted.messages === null
      ? { name: 'messages', outcome: 'skipped', predicted: null, rebuilt: rebuilt.messages, rule: 'not predicted: the normalized transcript does not say how the client groups records' }
      : { name: 'messages', outcome: countOutcome(predicted.messages, rebuilt.messages), predicted: predicted.messages, rebuilt: rebuilt.messages, rule: 'same number of messages or input items from the transcript' },
    predicted.units === null
      ? { name: 'units', outcome: 'skipped', predicted: null, rebuilt: rebuilt.units, rule: 'not predicted: records and content blocks do not map one to one' }
      : { name: 'units', outcome: countOutcome(predicted.units, rebuilt.units), predicted: predicted.units, rebuilt: rebuilt.units, rule: 'same number of content blocks or input items from the transcript' },
    { name: 'tokens', outcome: tokenOutcome, predicted: predicted.est_tokens, rebuilt: rebuilt.est_tokens, rule: `estimated tokens within ${Math.round(TOKEN_TOLERANCE * 100)}% of the prediction (at least ${TOKEN_SLACK} tokens)` },
  ];
  const failing = checks.filter((c) => c.outcome !== 'equal' && c.outcome !== 'skipped');
  const verdict = failing.length === 0 ? 'equal' : failing.some((c) => c.outcome === 'shorter') ? 'shorter' : failing.some((c) => c.outcome === 'broken') ? 'broken' : 'longer';
  return { equal: failing.length === 0, verdict, checks, token_ratio: Number.isFinite(ratio) ? Math.round(ratio * 10000) / 10000 : null };
}

/** One line naming what differs, for the rehearsal's reason. */
export function describeMismatch(comparison: ContextComparison): string {
  const parts = comparison.checks
    .filter((c) => c.outcome !== 'equal' && c.outcome !== 'skipped')
    .map((c) => `${c.name.replace('_', ' ')} ${c.outcome} (rebuilt ${formatInt(c.rebuilt)}, predicted ${c.predicted === null ? 'n/a' : formatInt(c.predicted)})`);
  return parts.join('; ');
}
