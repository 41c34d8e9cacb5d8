/**
 * Host admission of a strategy's edits against the transcript it was proposed for. The checks run in a
 * fixed order so the same bad plan always gets the same error.
 */
import type { Edit, ElideEdit, InjectDigestEdit, ProviderCompactEdit, CacheEditEdit, TranscriptItem } from '../../schemas/generated/types.js';
import { validateEdit } from '../../schemas/generated/validators.js';
import { isElidable } from '../../sdk/tokens.js';
import { digestTextBytes } from '../../sdk/state-card.js';
import {
  MAX_CACHE_EDIT_IDS,
  MAX_DIGEST_BYTES,
  MAX_EDITS,
  MAX_ELIDE_LINES,
  MAX_ITEMS,
  MAX_PER_ITEM_STUB_BYTES,
  MAX_PROVIDER_CONTROL_BYTES,
  MAX_STUB_TEMPLATE_BYTES,
  MAX_TOOL_USE_ID_BYTES,
} from './limits.js';
import { planRejected } from './plan-errors.js';

export interface AdmissionContext {
  items: readonly TranscriptItem[];
  keep_recent_tool_outputs: number;
  provider: string;
}

/** What projecting a plan needs after admission: which items it elides, and where it first changes. */
export interface AdmittedEdits {
  /** 1 for each item, by its position in `items`, whose line the plan elides. */
  elided: Uint8Array;
  /** The lowest line the plan elides; Infinity when it elides none. */
  firstElidedLine: number;
}

const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/;
const LINE_BREAK = /[\r\n]/;
const TOOL_USE_ID = /^[A-Za-z0-9_.-]+$/;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const isControl = (edit: Edit) => edit.op === 'provider_compact' || edit.op === 'cache_edit';

export function admitEdits(edits: readonly Edit[], ctx: AdmissionContext): AdmittedEdits {
  if (edits.length > MAX_EDITS || ctx.items.length > MAX_ITEMS) {
    throw planRejected('plan_exceeds_item_limits', { edits: edits.length, items: ctx.items.length });
  }
  edits.forEach((edit, editIndex) => {
    if (!validateEdit(edit)) {
      throw planRejected('invalid_edit_shape', { edit_index: editIndex, schema_error: schemaError(validateEdit.errors) });
    }
  });

  const positions = indexItems(ctx.items);
  const protectedLines = cachedProtectedTail(ctx.items, ctx.keep_recent_tool_outputs);
  const composition = new EditComposition();
  const admitted: AdmittedEdits = { elided: new Uint8Array(ctx.items.length), firstElidedLine: Infinity };
  let knownIds: Set<string> | null = null;

  edits.forEach((edit, editIndex) => {
    composition.admit(edit, editIndex);
    switch (edit.op) {
      case 'elide':
        checkElide(edit, editIndex, ctx.items, positions, protectedLines, admitted);
        break;
      case 'inject_digest':
        checkDigest(edit, editIndex, ctx.items.length);
        break;
      case 'provider_compact':
        checkProviderControl(edit, editIndex, edits.length);
        break;
      case 'cache_edit':
        knownIds ??= collectToolUseIds(ctx.items);
        checkCacheEdit(edit, editIndex, edits.length, ctx.provider, knownIds);
        break;
    }
  });
  return admitted;
}

/** The items `edits` elide, with no check: lines that are no item's are passed over. */
export function elidedItems(items: readonly TranscriptItem[], edits: readonly Edit[]): AdmittedEdits {
  const positions = indexItems(items);
  const out: AdmittedEdits = { elided: new Uint8Array(items.length), firstElidedLine: Infinity };
  for (const edit of edits) {
    if (edit.op !== 'elide') continue;
    for (const line of edit.line_indexes) {
      const at = positions.get(line);
      if (at === undefined) continue;
      out.elided[at] = 1;
      if (line < out.firstElidedLine) out.firstElidedLine = line;
    }
  }
  return out;
}

/**
 * One transcript is admitted against many plans (auto, eval): its line index and protected tail are
 * built once per items array. A parsed transcript is never modified, so the array is the key.
 */
const lineIndexes = new WeakMap<readonly TranscriptItem[], Map<number, number>>();
const protectedTails = new WeakMap<readonly TranscriptItem[], Map<number, Set<number>>>();

/**
 * Builds what admitting a plan over `items` needs from the items alone (the line index, the
 * protected tail), so a caller can do it while a strategy is still working on its proposal.
 * A transcript whose line indexes repeat is left for admission to refuse.
 */
export function prepareAdmission(items: readonly TranscriptItem[], keepRecentToolOutputs: number): void {
  try {
    indexItems(items);
  } catch {
    return;
  }
  cachedProtectedTail(items, keepRecentToolOutputs);
}

/** Each line's item, by its position in `items`. Line indexes are the identity of every edit, so they must be unique. */
function indexItems(items: readonly TranscriptItem[]): Map<number, number> {
  let positions = lineIndexes.get(items);
  if (positions === undefined) {
    positions = buildLineIndex(items);
    lineIndexes.set(items, positions);
  }
  return positions;
}

function buildLineIndex(items: readonly TranscriptItem[]): Map<number, number> {
  const positions = new Map<number, number>();
  items.forEach((item, at) => {
    if (positions.has(item.line_index)) throw planRejected('ambiguous_transcript_indexes', { line_index: item.line_index });
    positions.set(item.line_index, at);
  });
  return positions;
}

function cachedProtectedTail(items: readonly TranscriptItem[], keep: number): Set<number> {
  let byKeep = protectedTails.get(items);
  if (byKeep === undefined) protectedTails.set(items, (byKeep = new Map()));
  let lines = byKeep.get(keep);
  if (lines === undefined) byKeep.set(keep, (lines = protectedTail(items, keep)));
  return lines;
}

/** The newest `keep` elidable records by line order: the tail the agent is working from. */
export function protectedTail(items: readonly TranscriptItem[], keep: number): Set<number> {
  const lines = items.filter(isElidable).map((item) => item.line_index).sort((a, b) => a - b);
  return new Set(keep > 0 ? lines.slice(Math.max(0, lines.length - keep)) : []);
}

/** One digest per plan; a control edit stands alone. */
class EditComposition {
  private count = 0;
  private digestSeen = false;
  private controlSeen = false;

  admit(edit: Edit, editIndex: number): void {
    const fail = () => planRejected('invalid_edit_composition', { edit_index: editIndex });
    if (this.count + 1 > MAX_EDITS) throw fail();
    if (this.controlSeen) throw fail();
    if (edit.op === 'inject_digest' && this.digestSeen) throw fail();
    if (isControl(edit) && this.count > 0) throw fail();
    this.count += 1;
    if (edit.op === 'inject_digest') this.digestSeen = true;
    if (isControl(edit)) this.controlSeen = true;
  }
}

function checkElide(
  edit: ElideEdit,
  editIndex: number,
  items: readonly TranscriptItem[],
  positions: Map<number, number>,
  protectedLines: Set<number>,
  admitted: AdmittedEdits,
): void {
  const bounds = (why: string) => planRejected('invalid_elision_bounds', { edit_index: editIndex, why });
  if (edit.line_indexes.length > MAX_ELIDE_LINES) throw bounds('too many line indexes');
  const template = edit.stub_template;
  if (bytes(template) > MAX_STUB_TEMPLATE_BYTES) throw bounds('stub template too long');
  if (template.includes('{kind}')) throw bounds('stub template uses {kind}');
  if (LINE_BREAK.test(template)) throw bounds('stub template spans lines');
  const stubs = Object.entries(edit.per_item_stubs ?? {});
  if (stubs.length > edit.line_indexes.length) throw bounds('more per-item stubs than lines');
  if (stubs.length > 0) {
    const lines = new Set(edit.line_indexes.map(String));
    for (const [key, stub] of stubs) {
      if (!lines.has(key)) throw bounds('per-item stub for a line not in this edit');
      if (stub.length === 0 || bytes(stub) > MAX_PER_ITEM_STUB_BYTES || CONTROL_CHAR.test(stub)) throw bounds('per-item stub empty, too long or not one line');
    }
  }
  const { elided } = admitted;
  for (const line of edit.line_indexes) {
    const at = positions.get(line);
    if (at === undefined) throw planRejected('unknown_edit_index', { edit_index: editIndex, line_index: line });
    if (!isElidable(items[at]!) || protectedLines.has(line)) throw planRejected('protected_or_non_elidable', { edit_index: editIndex, line_index: line });
    if (elided[at] === 1) throw planRejected('overlapping_elision_edits', { edit_index: editIndex, line_index: line });
    elided[at] = 1;
    if (line < admitted.firstElidedLine) admitted.firstElidedLine = line;
  }
}

function checkDigest(edit: InjectDigestEdit, editIndex: number, itemCount: number): void {
  const digest = edit.digest;
  const textBytes = digestTextBytes(digest);
  if (textBytes > MAX_DIGEST_BYTES) throw planRejected('invalid_digest_bounds', { edit_index: editIndex, digest_bytes: textBytes });
  if (digest.covers_items === 0 || digest.covers_items > itemCount) {
    throw planRejected('invalid_digest_bounds', { edit_index: editIndex, covers_items: digest.covers_items });
  }
}

function checkProviderControl(edit: ProviderCompactEdit, editIndex: number, editCount: number): void {
  const control = edit.control;
  if (editCount !== 1 || control.length === 0 || bytes(control) > MAX_PROVIDER_CONTROL_BYTES || CONTROL_CHAR.test(control)) {
    throw planRejected('invalid_provider_control', { edit_index: editIndex });
  }
}

function checkCacheEdit(edit: CacheEditEdit, editIndex: number, editCount: number, provider: string, knownIds: Set<string>): void {
  const ids = edit.tool_use_ids;
  if (editCount !== 1 || provider !== 'claude_code' || ids.length === 0 || ids.length > MAX_CACHE_EDIT_IDS) {
    throw planRejected('invalid_cache_edit', { edit_index: editIndex });
  }
  const seen = new Set<string>();
  ids.forEach((id, position) => {
    const bad = id.length === 0 || bytes(id) > MAX_TOOL_USE_ID_BYTES || !TOOL_USE_ID.test(id) || !knownIds.has(id) || seen.has(id);
    if (bad) throw planRejected('invalid_cache_edit_tool_use_id', { edit_index: editIndex, id_position: position });
    seen.add(id);
  });
}

function collectToolUseIds(items: readonly TranscriptItem[]): Set<string> {
  const ids = new Set<string>();
  for (const item of items) for (const id of item.tool_use_ids ?? []) ids.add(id);
  return ids;
}

function schemaError(errors: typeof validateEdit.errors): string {
  const first = errors?.[0];
  return first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : 'is invalid';
}
