/**
 * Every way a plan can be refused, with a stable code and the exact message. A refused plan is a
 * command error (exit 1), never a "no plan": something proposed edits the host will not render.
 */
import { GobstopperError } from '../errors.js';

export const PlanRejections = {
  plan_exceeds_item_limits: 'plan exceeds item limits',
  ambiguous_transcript_indexes: 'ambiguous transcript indexes',
  invalid_edit_shape: 'invalid edit shape',
  invalid_edit_composition: 'invalid edit composition',
  invalid_elision_bounds: 'invalid elision bounds or stub template',
  unknown_edit_index: 'unknown edit index',
  protected_or_non_elidable: 'edit targets protected or non-elidable content',
  overlapping_elision_edits: 'overlapping elision edits',
  invalid_digest_bounds: 'invalid digest bounds',
  invalid_provider_control: 'invalid provider control',
  invalid_cache_edit: 'invalid cache edit',
  invalid_cache_edit_tool_use_id: 'invalid cache edit tool_use_id',
  plan_grows_context: 'plan does not reduce context',
  external_control_edit: 'userspace proposals may not emit provider_compact or cache_edit',
} as const;

export type PlanRejectionCode = keyof typeof PlanRejections;

/** Where in the plan the rule broke; numbers only, never transcript text. */
export interface RejectionSite {
  edit_index?: number;
  line_index?: number;
  [key: string]: unknown;
}

/**
 * The message is the exact text of the rule (scripts match its start), then, after a colon, `why`:
 * which part of the rule this plan broke, with the numbers and the limit, so the one line a person
 * sees says what to change. `why` is in the details too.
 */
export function planRejected(code: PlanRejectionCode, why: string, site: RejectionSite = {}): GobstopperError {
  return new GobstopperError(code, `${PlanRejections[code]}: ${why}`, { details: { rule: code, why, ...site } });
}

/** Numbers in reasons read as people write them: 32,768. */
export const count = (n: number): string => n.toLocaleString('en-US');
