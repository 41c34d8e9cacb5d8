/** How a plan or a no-plan decision reads for people. */
import type { Edit, PlanCommandNoPlan, PlanCommandPlan } from '../../../schemas/generated/types.js';
import { adaptiveReasonsOf, strategyRationaleOf } from '../../policy/no-plan.js';
import { controlWords } from '../../policy/provider-controls.js';
import { formatCount, printableText, shorten } from '../../text/human.js';

export function editLine(edit: Edit, provider: string | null = null): string {
  switch (edit.op) {
    case 'elide': {
      const n = edit.line_indexes.length;
      const shown = edit.line_indexes.slice(0, 12).map((i) => i + 1).join(', ');
      return `elide ${n} record${n === 1 ? '' : 's'} (lines ${shown}${n > 12 ? ', …' : ''})`;
    }
    case 'inject_digest': {
      const d = edit.digest;
      const count = (list: readonly unknown[] | null | undefined, one: string, many: string) => (list?.length ? `${list.length} ${list.length === 1 ? one : many}` : null);
      const parts = [
        d.goal ? 'goal' : null,
        count(d.files_touched, 'file', 'files'),
        count(d.decisions, 'decision', 'decisions'),
        count(d.errors, 'error', 'errors'),
        count(d.open_tasks, 'open task', 'open tasks'),
      ].filter(Boolean);
      return `append a state card covering ${d.covers_items} record${d.covers_items === 1 ? '' : 's'}${parts.length ? ` (${parts.join(', ')})` : ''}`;
    }
    case 'provider_compact':
      return `ask the provider to compact with its own control (${controlWords(provider, edit.control)})`;
    case 'cache_edit':
      return `cache edit: drop ${edit.tool_use_ids.length} tool result${edit.tool_use_ids.length === 1 ? '' : 's'} at the API layer`;
  }
}

/**
 * A provider's own compaction counts its whole context as the kept prefix (the reference's number,
 * kept in --json), which next to "→ 40,000 tokens" reads as a contradiction: people get what it means.
 */
function prefixWords(outcome: PlanCommandPlan): string {
  if (outcome.plan.edits.some((e) => e.op === 'provider_compact')) return 'cached prefix: whatever the client keeps when it compacts';
  return `cached prefix kept: ${formatCount(outcome.prefix_tokens)} tokens`;
}

/**
 * Before and after. A provider's own compaction keeps what the provider chooses: the floor is the
 * projection (--json keeps it, and the savings gate judges it), not a saving to print, and a floor
 * of 0 is no estimate at all, since a compaction keeps at least its summary. eval shows no after
 * or reduction for it either.
 */
function contextWords(outcome: PlanCommandPlan): string {
  const p = outcome.plan;
  if (p.edits.some((e) => e.op === 'provider_compact')) {
    const estimate = p.context_tokens_after > 0 ? `estimated at the floor: ~${formatCount(p.context_tokens_after)} tokens` : 'no estimate: the floor is 0';
    return `context ${formatCount(p.context_tokens_before)} tokens → what the provider keeps when it compacts (${estimate})`;
  }
  const pct = p.context_tokens_before > 0 ? Math.round((100 * (p.context_tokens_before - p.context_tokens_after)) / p.context_tokens_before) : 0;
  return `context ${formatCount(p.context_tokens_before)} → ${formatCount(p.context_tokens_after)} tokens (−${formatCount(outcome.est_savings_tokens)}, ${pct}%)`;
}

export function planLines(outcome: PlanCommandPlan, provider: string | null = null): string[] {
  const p = outcome.plan;
  return [
    `strategy ${p.strategy}: ${contextWords(outcome)}`,
    `${prefixWords(outcome)}; trigger ${formatCount(outcome.effective_trigger_tokens)}, floor ${formatCount(outcome.target_context_tokens)}`,
    // A plugin's words: one line, whatever it sent, so it cannot add lines that look like gobstopper's.
    `why: ${printableText(p.rationale)}`,
    ...p.edits.map((e) => `  - ${editLine(e, provider)}`),
    ...stillOverTrigger(outcome),
  ];
}

/**
 * A file rewrite that leaves the context over the trigger will be followed by another cycle soon
 * (and another cache break): worth a line, since the plan's own numbers only imply it.
 */
function stillOverTrigger(outcome: PlanCommandPlan): string[] {
  const p = outcome.plan;
  if (p.edits.some((e) => e.op === 'provider_compact')) return [];
  const note = stillOverTriggerNote(p.context_tokens_after, outcome.effective_trigger_tokens);
  return note === null ? [] : [note];
}

/** "note: this leaves ~N tokens, still over the trigger T; …", or null when the rewrite gets under it. */
export function stillOverTriggerNote(after: number, trigger: number): string | null {
  if (after <= trigger) return null;
  return `note: this leaves ~${formatCount(after)} tokens, still over the trigger ${formatCount(trigger)}; gobstopper eval shows how far each strategy gets`;
}

export function noPlanLine(outcome: PlanCommandNoPlan): string {
  const reasons = adaptiveReasonsOf(outcome);
  return reasons.length === 0 ? noPlanReason(outcome) : `${noPlanReason(outcome)} (adaptive: ${reasons.join(', ')})`;
}

function noPlanReason(outcome: PlanCommandNoPlan): string {
  const ctx = formatCount(outcome.context_tokens_before);
  switch (outcome.reason_code) {
    case 'below_trigger':
      return `nothing to do: context ~${ctx} tokens is under the trigger ${formatCount(outcome.effective_trigger_tokens)}`;
    case 'strategy_returned_no_plan': {
      const said = strategyRationaleOf(outcome);
      // A selector's reason lists every candidate's outcome: long, but each one is what the user asks about.
      return `context ~${ctx} tokens exceeds the trigger ${formatCount(outcome.effective_trigger_tokens)}, but the strategy found no applicable edits${said ? ` (it said: ${shorten(said.replace(/\s+/g, ' '), 1000)})` : ''}`;
    }
    case 'empty_external_edits':
      return `context ~${ctx} tokens exceeds the trigger ${formatCount(outcome.effective_trigger_tokens)}, but the configured command or plugin proposed no edits`;
    case 'minimum_savings_not_met':
      return `no plan: it would save ${formatCount(outcome.projected_savings_tokens)} tokens, under the minimum of ${formatCount(outcome.min_savings_tokens)}`;
    case 'external_nonreducing_plan':
      return `no plan: the external proposal would not reduce the context (projected ${formatCount(outcome.projected_context_tokens_after)} tokens)`;
  }
}
