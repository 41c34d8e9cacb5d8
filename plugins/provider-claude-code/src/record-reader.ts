/**
 * Reading one parsed record into its row of the RecordTable: tree links, tool ids, response
 * number, usage, and a bounded label and summary. Later records borrow from earlier ones through
 * the LineContext (a tool result takes its label from its call).
 */
import { createHash, hash as oneShotHash } from 'node:crypto';
import {
  content,
  CONVERSATION_TYPES,
  isObject,
  isValidId,
  LAST_PROMPT,
  UI_ONLY_SYSTEM_SUBTYPES,
  type RawRecord,
} from './records.js';
import { resultPayloads, type PayloadPart } from './payload.js';
import { readUsage } from './usage-reading.js';
import { clipUtf8 } from '../../../sdk/utf8.js';
import { failureLine, firstLine } from '../../../sdk/summary-lines.js';
import { ARGUMENT_SUMMARY_BYTES, safeLabel, SUMMARY_MAX_BYTES, TEXT_SUMMARY_BYTES } from './text.js';
import { SYNTHETIC_MODEL } from './models.js';
import { sentBytes } from './sent-bytes.js';
import { idHash } from './uuid-index.js';
import { FLAG_COMPACT_BOUNDARY, FLAG_COUNTED, FLAG_RESULT_ONLY, FLAG_SIDECHAIN, NO_PARENT, RecordTable } from './record-table.js';

/** Argument keys that say what a tool call touched, in the order a reader would look for them. */
const SHAPE_KEYS = ['file_path', 'notebook_path', 'command', 'pattern', 'path', 'url', 'query', 'description', 'prompt', 'skill'];

/** "Read file_path=/src/a.ts": the tool name and the argument that says what it acted on. */
function toolCallShape(label: string, input: unknown): string {
  if (!isObject(input)) return label;
  for (const key of SHAPE_KEYS) {
    const v = input[key];
    if (typeof v === 'string' && v.length > 0) {
      const value = firstLine(v, ARGUMENT_SUMMARY_BYTES);
      if (value) return `${label} ${key}=${value}`;
    }
  }
  const keys = Object.keys(input).slice(0, 4).map((k) => safeLabel(k) ?? '_');
  return keys.length > 0 ? `${label} (${keys.join(', ')})` : label;
}

function firstText(r: RawRecord): string | null {
  const c = content(r);
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    for (const b of c) if (isObject(b) && b.type === 'text' && typeof b.text === 'string') return b.text;
  }
  return null;
}

function resultText(block: Record<string, unknown>): string | null {
  const c = block.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) for (const b of c) if (isObject(b) && b.type === 'text' && typeof b.text === 'string') return b.text;
  return null;
}

/**
 * sha256 of the payload text: the parts' texts joined by NUL. A single text (the usual case) is
 * hashed in one call, without building a joined copy.
 */
function payloadSha256(parts: readonly PayloadPart[]): string {
  if (parts.length === 1 && parts[0]!.texts.length === 1) return oneShotHash('sha256', parts[0]!.texts[0]!, 'hex');
  const h = createHash('sha256');
  let first = true;
  for (const p of parts) {
    for (const t of p.texts) {
      if (!first) h.update('\u0000');
      h.update(t, 'utf8');
      first = false;
    }
  }
  return h.digest('hex');
}

/** Per-read state shared by every line: what later records borrow from earlier ones. */
export interface LineContext {
  table: RecordTable;
  /**
   * uuid -> line of the record holding it (a later duplicate replaces an earlier one, as in the
   * client), when notesAsRead.
   */
  uuidLine: Map<string, number>;
  /** Later records reusing an earlier record's uuid. */
  duplicateUuids: Array<{ line: number; firstLine: number }>;
  /** tool_use id -> line of the record that made the call (its label and summary). */
  tools: Map<string, number>;
  /** message.id -> response number: records of one API response share it. */
  responses: Map<string, number>;
  lastMessageId: string | null;
  lastResponse: number;
  /** One copy of each label, subtype and model string for the whole read. */
  strings: Map<string, string>;
  /**
   * false: rows' uuids and parents are not noted in uuidLine as they are read, only hashed; a
   * whole-file scan indexes them once every row is read (uuid-index.ts), on the thread that joins
   * the rows, from hashes made on the threads that parsed them.
   */
  notesAsRead: boolean;
  /**
   * Set when this read covers one range of a file whose other ranges are read elsewhere (a
   * parallel scan, range-scan.ts): tool results whose call was not met here are listed, to be
   * finished when the ranges are joined in file order.
   */
  range: { unresolvedResults: UnresolvedResult[] } | null;
}

/** A tool_result row labelled without its call: its first tool id and its outcome text. */
export interface UnresolvedResult {
  row: number;
  toolUseId: string;
  outcome: string;
}

export function lineContext(capacity?: number): LineContext {
  return {
    table: new RecordTable(capacity),
    uuidLine: new Map(),
    duplicateUuids: [],
    tools: new Map(),
    responses: new Map(),
    lastMessageId: null,
    lastResponse: -1,
    strings: new Map(),
    notesAsRead: true,
    range: null,
  };
}

/** The line of the latest record holding `uuid` (only asked when a duplicate shows up). */
function earlierLine(t: RecordTable, uuid: string, before: number): number {
  for (let i = before - 1; i >= 0; i -= 1) if (t.uuid[i] === uuid) return i;
  return -1;
}

/** Records that row `i` holds `uuid`; rows must be noted in line order. */
function noteUuid(ctx: LineContext, uuid: string, i: number): void {
  // One map operation per record: a set that does not grow the map met a duplicate.
  const size = ctx.uuidLine.size;
  ctx.uuidLine.set(uuid, i);
  if (ctx.uuidLine.size === size) ctx.duplicateUuids.push({ line: i, firstLine: earlierLine(ctx.table, uuid, i) });
}

/**
 * Finds row `i`'s parent among the rows noted so far. The parent's own uuid string is then shared:
 * 100,000 copies of it are not needed.
 */
function noteParent(ctx: LineContext, i: number): void {
  const t = ctx.table;
  const p = ctx.uuidLine.get(t.parentUuid[i]!);
  if (p === undefined) return;
  t.parentLine[i] = p;
  t.parentUuid[i] = t.uuid[p]!;
}

/** The summary of a tool_result row: what the call did, then what came back. */
function resultSummary(shape: string, outcome: string): string {
  return clipUtf8(`${shape} -> ${outcome}`, SUMMARY_MAX_BYTES);
}

/**
 * Gives a tool_result row read without its call (UnresolvedResult) the label and summary it would
 * have had, now that `call` (the row of the call, or undefined when there is none) is known.
 */
export function resolveResult(t: RecordTable, row: number, call: number | undefined, outcome: string): void {
  if (call === undefined) return;
  const label = t.label[call]!;
  t.label[row] = label;
  t.summary[row] = resultSummary(t.summary[call] ?? label, outcome);
}

/** The record types nearly every line has, as shared literals without a lookup. */
function knownType(t: string): string | null {
  switch (t) {
    case 'user':
      return 'user';
    case 'assistant':
      return 'assistant';
    case 'progress':
      return 'progress';
    case 'system':
      return 'system';
    case 'attachment':
      return 'attachment';
    default:
      return null;
  }
}

function intern(ctx: LineContext, s: string): string {
  const known = ctx.strings.get(s);
  if (known !== undefined) return known;
  ctx.strings.set(s, s);
  return s;
}

function internLabel(ctx: LineContext, name: unknown): string | null {
  const label = safeLabel(name);
  return label === null ? null : intern(ctx, label);
}

/**
 * Reads one parsed record (its structure already checked) from its line into a new row; returns
 * the row. `detail: false` fills only what the live branch and pairing need (type, links, flags,
 * kind, response, tool ids) and skips what only the transcript's items need (labels, summaries,
 * usage, payload measures, the bytes sent to the model): render reads skeletons for the tree alone.
 */
export function readRecord(r: RawRecord, line: Buffer, ctx: LineContext, detail = true): number {
  const t = ctx.table;
  const i = t.add(line.length, 'ok');
  const type = typeof r.type === 'string' ? knownType(r.type) ?? intern(ctx, r.type) : null;
  t.type[i] = type;
  let flags = r.isSidechain === true ? FLAG_SIDECHAIN : 0;
  if (typeof r.uuid === 'string') {
    t.uuid[i] = r.uuid;
    if (ctx.notesAsRead) noteUuid(ctx, r.uuid, i);
    else t.uuidHash[i] = idHash(r.uuid);
  }
  if (typeof r.parentUuid === 'string') {
    t.parentUuid[i] = r.parentUuid;
    if (ctx.notesAsRead) noteParent(ctx, i);
    else t.parentHash[i] = idHash(r.parentUuid);
  } else t.parentLine[i] = NO_PARENT;

  if (type === 'assistant') {
    flags |= FLAG_COUNTED;
    readAssistant(r, i, ctx, detail);
  } else if (type === 'user') {
    flags |= FLAG_COUNTED;
    flags |= readUser(r, i, ctx, detail);
  } else if (type === 'system') {
    const subtype = typeof r.subtype === 'string' ? r.subtype : null;
    if (subtype === 'compact_boundary') flags |= FLAG_COMPACT_BOUNDARY;
    const counted = subtype === null || !UI_ONLY_SYSTEM_SUBTYPES.has(subtype);
    if (counted) flags |= FLAG_COUNTED;
    t.setKind(i, counted ? 'system' : 'meta');
    if (detail) {
      t.label[i] = counted ? 'system' : 'meta';
      t.summary[i] = internLabel(ctx, subtype);
    }
  } else if (type === 'attachment') {
    // Attachments are sent to the model as mid-conversation system messages (realclients.md §1.1).
    flags |= FLAG_COUNTED;
    t.setKind(i, 'system');
    if (detail) {
      t.label[i] = 'system';
      t.summary[i] = isObject(r.attachment) ? internLabel(ctx, r.attachment.type) : null;
    }
  } else if (type === LAST_PROMPT) {
    // '' marks a last-prompt whose leafUuid is absent or not a string: present but unusable.
    t.leafUuid.set(i, typeof r.leafUuid === 'string' ? r.leafUuid : '');
  }
  if (type !== null && !CONVERSATION_TYPES.has(type)) flags &= ~FLAG_COUNTED;
  t.flags[i] = flags;
  if (detail && (flags & FLAG_COUNTED) !== 0) t.sentBytes[i] = sentBytes(r, line);
  return i;
}

function readAssistant(r: RawRecord, i: number, ctx: LineContext, detail: boolean): void {
  const t = ctx.table;
  const m = r.message as RawRecord;
  if (typeof m.id === 'string') {
    // The records of one response follow each other: most lookups are the previous record's id.
    if (m.id === ctx.lastMessageId) t.response[i] = ctx.lastResponse;
    else {
      let n = ctx.responses.get(m.id);
      if (n === undefined) {
        n = ctx.responses.size;
        ctx.responses.set(m.id, n);
      }
      t.response[i] = n;
      ctx.lastMessageId = m.id;
      ctx.lastResponse = n;
    }
  }
  if (!detail) {
    readAssistantTree(m, i, ctx);
    return;
  }
  const model = typeof m.model === 'string' ? intern(ctx, m.model) : null;
  t.model[i] = model;
  const usage = model === SYNTHETIC_MODEL ? null : readUsage(m.usage);
  if (usage !== null) {
    if (usage.reason === null) {
      t.usageContext[i] = usage.context;
      t.usageInput[i] = usage.input;
      t.usageCached[i] = usage.cached;
    } else {
      t.usageContext[i] = 0;
      t.usageProblems.set(i, { reason: usage.reason, components: usage.components });
    }
  }
  let text: string | null = null;
  let thinking = false;
  let called = false;
  const c = m.content;
  if (typeof c === 'string') text = c;
  else {
    for (const b of c as unknown[]) {
      if (!isObject(b)) continue;
      const bt = b.type;
      if (bt === 'tool_use' && isValidId(b.id)) {
        ctx.tools.set(b.id, i);
        const ids = t.toolUseIds[i];
        if (ids) ids.push(b.id);
        else t.toolUseIds[i] = [b.id];
        if (!called) {
          called = true;
          const label = internLabel(ctx, b.name) ?? 'tool_call';
          t.setKind(i, 'tool_call');
          t.label[i] = label;
          t.summary[i] = clipUtf8(toolCallShape(label, b.input), SUMMARY_MAX_BYTES);
        }
      } else if (bt === 'text' && typeof b.text === 'string' && text === null) text = b.text;
      else if (bt === 'thinking' || bt === 'redacted_thinking') thinking = true;
    }
  }
  if (called) return;
  const kind = text !== null || !thinking ? 'assistant' : 'reasoning';
  t.setKind(i, kind);
  t.label[i] = kind;
  t.summary[i] = text === null ? null : firstLine(text, TEXT_SUMMARY_BYTES);
}

/** An assistant record's tool ids and kind, nothing else. */
function readAssistantTree(m: RawRecord, i: number, ctx: LineContext): void {
  const t = ctx.table;
  const c = m.content;
  let text = typeof c === 'string';
  let thinking = false;
  if (Array.isArray(c)) {
    for (const b of c) {
      if (!isObject(b)) continue;
      if (b.type === 'tool_use' && isValidId(b.id)) {
        const ids = t.toolUseIds[i];
        if (ids) ids.push(b.id);
        else t.toolUseIds[i] = [b.id];
      } else if (b.type === 'text') text = true;
      else if (b.type === 'thinking' || b.type === 'redacted_thinking') thinking = true;
    }
  }
  t.setKind(i, t.toolUseIds[i] ? 'tool_call' : text || !thinking ? 'assistant' : 'reasoning');
}

/** Returns the FLAG_RESULT_ONLY flag when the record is made only of tool results. */
function readUser(r: RawRecord, i: number, ctx: LineContext, detail: boolean): number {
  const t = ctx.table;
  const c = (r.message as RawRecord).content;
  let results = 0;
  let errorText: string | null = null;
  let sawError = false;
  if (Array.isArray(c)) {
    for (const b of c) {
      if (!isObject(b) || b.type !== 'tool_result') continue;
      results += 1;
      if (isValidId(b.tool_use_id)) {
        const ids = t.toolResultIds[i];
        if (ids) ids.push(b.tool_use_id);
        else t.toolResultIds[i] = [b.tool_use_id];
      }
      if (b.is_error === true && !sawError) {
        sawError = true;
        errorText = resultText(b);
      }
    }
  }
  if (!detail) {
    t.setKind(i, results === 0 ? 'user' : 'tool_result');
    return results > 0 && results === (c as unknown[]).length ? FLAG_RESULT_ONLY : 0;
  }
  if (results === 0) {
    t.setKind(i, 'user');
    t.label[i] = 'user';
    // A compaction summary or an injected meta prompt is not what the user asked for: giving it
    // no summary keeps it out of the state card's goal.
    const injected = r.isCompactSummary === true || r.isMeta === true;
    const text = injected ? null : firstText(r);
    t.summary[i] = text === null ? null : firstLine(text, TEXT_SUMMARY_BYTES);
    return 0;
  }
  t.setKind(i, 'tool_result');
  const firstId = t.toolResultIds[i]?.[0];
  const call = firstId === undefined ? undefined : ctx.tools.get(firstId);
  const label = call === undefined ? 'tool_result' : t.label[call]!;
  t.label[i] = label;
  const payloads = resultPayloads(r);
  if (payloads.parts.length > 0) {
    let total = 0;
    for (const p of payloads.parts) total += p.bytes;
    t.elidableBytes[i] = total;
    t.elidableParts[i] = payloads.parts.length;
    const only = payloads.parts.length === 1 ? payloads.parts[0]! : null;
    if (only !== null && only.shape === 'string') t.stringPayloadBlock[i] = only.blockIndex + 1;
    t.payloadSha256[i] = payloadSha256(payloads.parts);
  }
  const shape = call === undefined ? label : t.summary[call] ?? label;
  const outcome = sawError ? `error${errorText ? `: ${failureLine(errorText, ARGUMENT_SUMMARY_BYTES) ?? ''}` : ''}` : `${payloads.textBytes} bytes`;
  t.summary[i] = resultSummary(shape, outcome);
  if (call === undefined && firstId !== undefined && ctx.range) ctx.range.unresolvedResults.push({ row: i, toolUseId: firstId, outcome });
  return results === (c as unknown[]).length ? FLAG_RESULT_ONLY : 0;
}
