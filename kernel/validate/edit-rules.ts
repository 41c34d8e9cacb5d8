/**
 * Host admission of a strategy's edits against the transcript it was proposed for. The checks run in a
 * fixed order so the same bad plan always gets the same error.
 */
import type { Edit, ElideEdit, InjectDigestEdit, ProviderCompactEdit, CacheEditEdit, TranscriptItem } from '../../schemas/generated/types.js';
import { validateEdit } from '../../schemas/generated/validators.js';
import { isElidable } from '../../sdk/tokens.js';
import { digestTextBytes } from '../../sdk/state-card.js';
import { checkAgainst } from '../plugins/protocol/schema-check.js';
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
import { count, planRejected } from './plan-errors.js';

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
    const why = edits.length > MAX_EDITS ? `the plan has ${count(edits.length)} edits; the limit is ${MAX_EDITS}` : `the transcript has ${count(ctx.items.length)} records; the limit is ${count(MAX_ITEMS)}`;
    throw planRejected('plan_exceeds_item_limits', why, { edits: edits.length, items: ctx.items.length });
  }
  edits.forEach((edit, editIndex) => {
    if (!validateEdit(edit)) {
      // Checked again for the message: the variant its op names, and the allowed values of a closed vocabulary.
      const violation = checkAgainst(validateEdit, edit);
      const schemaError = `${violation?.pointer || '/'} ${violation?.message ?? 'does not match the schema'}`;
      throw planRejected('invalid_edit_shape', `edit ${editIndex} ${schemaError}`, { edit_index: editIndex, schema_error: schemaError });
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
        checkElide(edit, editIndex, ctx.items, positions, { lines: protectedLines, keep: ctx.keep_recent_tool_outputs }, admitted);
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
    if (positions.has(item.line_index)) {
      throw planRejected('ambiguous_transcript_indexes', `two records of the transcript have line index ${item.line_index}`, { line_index: item.line_index });
    }
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
  private edits = 0;
  private digestAt: number | null = null;
  private control: { op: string; at: number } | null = null;

  admit(edit: Edit, editIndex: number): void {
    const fail = (why: string) => planRejected('invalid_edit_composition', why, { edit_index: editIndex });
    if (this.edits + 1 > MAX_EDITS) throw fail(`a plan may hold at most ${MAX_EDITS} edits; edit ${editIndex} is one more`);
    if (this.control) throw fail(`a ${this.control.op} edit must be the plan's only edit; edit ${editIndex} follows the one at edit ${this.control.at}`);
    if (edit.op === 'inject_digest' && this.digestAt !== null) {
      throw fail(`a plan may hold one inject_digest (state card); edit ${editIndex} is a second`);
    }
    if (isControl(edit) && this.edits > 0) throw fail(`a ${edit.op} edit must be the plan's only edit; edit ${editIndex} comes after ${this.edits === 1 ? 'another edit' : `${this.edits} other edits`}`);
    this.edits += 1;
    if (edit.op === 'inject_digest') this.digestAt = editIndex;
    if (isControl(edit)) this.control = { op: edit.op, at: editIndex };
  }
}

function checkElide(
  edit: ElideEdit,
  editIndex: number,
  items: readonly TranscriptItem[],
  positions: Map<number, number>,
  tail: { lines: Set<number>; keep: number },
  admitted: AdmittedEdits,
): void {
  const { lines: protectedLines, keep } = tail;
  const bounds = (why: string, line?: string) => planRejected('invalid_elision_bounds', why, { edit_index: editIndex, ...(line === undefined ? {} : { line_index: Number(line) }) });
  if (edit.line_indexes.length > MAX_ELIDE_LINES) throw bounds(`the edit names ${count(edit.line_indexes.length)} lines; the limit is ${count(MAX_ELIDE_LINES)}`);
  const template = edit.stub_template;
  const templateBytes = bytes(template);
  if (templateBytes > MAX_STUB_TEMPLATE_BYTES) throw bounds(`stub template is ${count(templateBytes)} bytes; the limit is ${MAX_STUB_TEMPLATE_BYTES}`);
  if (template.includes('{kind}')) throw bounds('stub template uses {kind}; only {bytes} is filled in');
  if (LINE_BREAK.test(template)) throw bounds('stub template holds a line break; a stub is one line');
  const stubs = Object.entries(edit.per_item_stubs ?? {});
  if (stubs.length > edit.line_indexes.length) throw bounds(`the edit has ${count(stubs.length)} per-item stubs for ${count(edit.line_indexes.length)} ${edit.line_indexes.length === 1 ? 'line' : 'lines'}`);
  if (stubs.length > 0) {
    const lines = new Set(edit.line_indexes.map(String));
    for (const [key, stub] of stubs) {
      // The key is the plan's own text: quoted only when it is a line number, as it should be.
      if (!lines.has(key)) throw bounds(/^\d{1,15}$/.test(key) ? `per-item stub for line ${Number(key) + 1}, which the edit does not elide` : 'a per-item stub is keyed by something that is not one of the edit\'s lines');
      if (stub.length === 0) throw bounds(`per-item stub for line ${Number(key) + 1} is empty`, key);
      const stubBytes = bytes(stub);
      if (stubBytes > MAX_PER_ITEM_STUB_BYTES) throw bounds(`per-item stub for line ${Number(key) + 1} is ${count(stubBytes)} bytes; the limit is ${MAX_PER_ITEM_STUB_BYTES}`, key);
      if (CONTROL_CHAR.test(stub)) throw bounds(`per-item stub for line ${Number(key) + 1} holds a line break or another control character; a stub is one line`, key);
    }
  }
  const { elided } = admitted;
  // Messages count lines from 1, as the plan summary and verify do; details keep the plan's 0-based index.
  edit.line_indexes.forEach((line, position) => {
    const at = positions.get(line);
    const site = { edit_index: editIndex, line_index: line };
    if (at === undefined) throw planRejected('unknown_edit_index', `line ${line + 1} is not a record of this transcript, which has ${count(items.length)}`, site);
    const item = items[at]!;
    if (!isElidable(item)) {
      const what = `${/^[aeio]/.test(item.kind) ? 'an' : 'a'} ${item.kind} record${item.est_tokens === 0 ? ' that is not live context' : ''}`;
      throw planRejected('protected_or_non_elidable', `line ${line + 1} holds nothing elidable: it is ${what}`, { ...site, why_code: 'non_elidable' });
    }
    if (protectedLines.has(line)) {
      const kept = `keep_recent_tool_outputs = ${count(keep)} keeps the newest ${count(protectedLines.size)} tool outputs`;
      throw planRejected('protected_or_non_elidable', `line ${line + 1} is in the protected tail: ${kept}`, { ...site, why_code: 'protected_tail' });
    }
    if (elided[at] === 1) {
      const twice = edit.line_indexes.indexOf(line) < position ? 'twice in this edit' : 'by an earlier edit too';
      throw planRejected('overlapping_elision_edits', `line ${line + 1} is elided ${twice}`, site);
    }
    elided[at] = 1;
    if (line < admitted.firstElidedLine) admitted.firstElidedLine = line;
  });
}

function checkDigest(edit: InjectDigestEdit, editIndex: number, itemCount: number): void {
  const digest = edit.digest;
  const textBytes = digestTextBytes(digest);
  if (textBytes > MAX_DIGEST_BYTES) {
    throw planRejected('invalid_digest_bounds', `state card is ${count(textBytes)} bytes; the limit is ${count(MAX_DIGEST_BYTES)}`, { edit_index: editIndex, digest_bytes: textBytes });
  }
  if (digest.covers_items === 0 || digest.covers_items > itemCount) {
    const why = `state card covers ${count(digest.covers_items)} records; it must cover 1 to ${count(itemCount)}, the records of this transcript`;
    throw planRejected('invalid_digest_bounds', why, { edit_index: editIndex, covers_items: digest.covers_items });
  }
}

function checkProviderControl(edit: ProviderCompactEdit, editIndex: number, editCount: number): void {
  const control = edit.control;
  const fail = (why: string) => planRejected('invalid_provider_control', why, { edit_index: editIndex });
  if (editCount !== 1) throw fail(`a provider_compact edit must be the plan's only edit; this plan has ${editCount} edits`);
  if (control.length === 0) throw fail('the control is empty');
  const controlBytes = bytes(control);
  if (controlBytes > MAX_PROVIDER_CONTROL_BYTES) throw fail(`the control is ${count(controlBytes)} bytes; the limit is ${MAX_PROVIDER_CONTROL_BYTES}`);
  if (CONTROL_CHAR.test(control)) throw fail('the control holds a line break or another control character');
}

function checkCacheEdit(edit: CacheEditEdit, editIndex: number, editCount: number, provider: string, knownIds: Set<string>): void {
  const ids = edit.tool_use_ids;
  const fail = (why: string) => planRejected('invalid_cache_edit', why, { edit_index: editIndex });
  if (editCount !== 1) throw fail(`a cache_edit edit must be the plan's only edit; this plan has ${editCount} edits`);
  if (provider !== 'claude_code') throw fail(`cache_edit is for claude_code sessions only; this is a ${provider} session`);
  if (ids.length === 0) throw fail('the edit names no tool_use_ids');
  if (ids.length > MAX_CACHE_EDIT_IDS) throw fail(`the edit names ${count(ids.length)} tool_use_ids; the limit is ${count(MAX_CACHE_EDIT_IDS)}`);
  const seen = new Set<string>();
  ids.forEach((id, position) => {
    // Ids are named by their position: the text itself comes from the transcript.
    const bad = (why: string) => planRejected('invalid_cache_edit_tool_use_id', `tool_use_ids[${position}] ${why}`, { edit_index: editIndex, id_position: position });
    if (id.length === 0) throw bad('is empty');
    const idBytes = bytes(id);
    if (idBytes > MAX_TOOL_USE_ID_BYTES) throw bad(`is ${count(idBytes)} bytes; the limit is ${MAX_TOOL_USE_ID_BYTES}`);
    if (!TOOL_USE_ID.test(id)) throw bad("holds characters other than letters, digits, '_', '.' and '-'");
    if (!knownIds.has(id)) throw bad('is not a tool_use_id of this transcript');
    if (seen.has(id)) throw bad('repeats an earlier id');
    seen.add(id);
  });
}

function collectToolUseIds(items: readonly TranscriptItem[]): Set<string> {
  const ids = new Set<string>();
  for (const item of items) for (const id of item.tool_use_ids ?? []) ids.add(id);
  return ids;
}
