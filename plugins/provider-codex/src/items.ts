/**
 * What one response item is, as metadata: kind, a label that never holds payload text, a short
 * summary, and how it links to other items. Used for top-level `response_item` records and for the
 * items inside a `compacted` record's replacement history alike.
 */
import type { ItemKind } from '../../../sdk/index.js';
import { callShape } from './call-shape.js';
import { outputOutcome } from './output-outcome.js';
import { measureOutput, type OutputMeasure } from './payload.js';
import {
  STANDALONE_CALLS,
  NOT_SENT_TO_MODEL,
  callFamily,
  callIdOf,
  firstText,
  hasElidableOutputField,
  isContextualUserText,
  isPreambleText,
  outputFamily,
  toolNameOf,
  type JsonObject,
  type ToolFamily,
} from './records.js';
import { clipUtf8 } from '../../../sdk/utf8.js';
import { firstLine } from '../../../sdk/summary-lines.js';
import { SUMMARY_MAX_BYTES, sanitizeLabel } from './text.js';

export interface ToolLink {
  role: 'call' | 'output';
  /** null when the record carries no usable call id. */
  id: string | null;
  family: ToolFamily;
}

export interface ItemDescription {
  kind: ItemKind;
  label: string;
  summary: string | null;
  /** false for items the client keeps but never sends (their tokens count 0). */
  sentToModel: boolean;
  link: ToolLink | null;
  /** A real user message: the start of a new turn. */
  userTurn: boolean;
  /** Output payload of a tool result, when it has a replaceable field. */
  output: OutputMeasure | null;
}

/** A tool call as the calls before its output saw it: its label and what it acted on. */
export interface CallSeen {
  name: string;
  /** null when items are read without detail (verify). */
  shape: string | null;
}

/** "exec_command cmd=npm test -> 812 bytes, exit 0": what the call did, then what came back. */
function outputSummary(call: CallSeen | undefined, name: string, measure: OutputMeasure | null): string {
  const shape = call?.shape ?? name;
  return clipUtf8(measure === null ? `${shape} -> output` : `${shape} -> ${outputOutcome(measure)}`, SUMMARY_MAX_BYTES);
}

/** Descriptions are built field by field: object spreads cost measurably at 100,000 records. */
function describe(kind: ItemKind, label: string, summary: string | null, userTurn = false): ItemDescription {
  return { kind, label, summary, sentToModel: true, link: null, userTurn, output: null };
}

/**
 * What one item is. `detail: false` leaves out summaries and output measures (null), which only
 * the transcript's items carry: verify needs kinds and links alone.
 */
export function describeResponseItem(payload: JsonObject, payloadType: string, calls: Map<string, CallSeen>, detail = true): ItemDescription {
  if (payloadType === 'message') {
    const role = typeof payload.role === 'string' ? payload.role : '';
    const text = firstText(payload.content);
    const summary = text === null || !detail ? null : firstLine(text, SUMMARY_MAX_BYTES);
    if (role === 'user') {
      const preamble = text !== null && isPreambleText(text);
      return describe(preamble ? 'system' : 'user', preamble ? 'preamble' : 'user', summary, !preamble && !(text !== null && isContextualUserText(text)));
    }
    if (role === 'assistant') return describe('assistant', 'assistant', summary);
    if (role === 'developer' || role === 'system') return describe('system', role, summary);
    return describe('meta', sanitizeLabel(`message:${role}`, 'message'), summary);
  }
  if (payloadType === 'reasoning') {
    const summaryText = detail && Array.isArray(payload.summary) ? firstText(payload.summary) : null;
    return describe('reasoning', 'reasoning', summaryText === null ? null : firstLine(summaryText, SUMMARY_MAX_BYTES));
  }
  const asCall = callFamily(payloadType);
  if (asCall !== undefined) {
    const name = sanitizeLabel(toolNameOf(payload, payloadType), 'tool');
    const id = callIdOf(payload);
    const shape = detail ? callShape(name, payload, payloadType) : null;
    if (id !== null) calls.set(id, { name, shape });
    const d = describe('tool_call', name, shape);
    d.link = { role: 'call', id, family: asCall };
    return d;
  }
  const asOutput = outputFamily(payloadType);
  if (asOutput !== undefined) {
    const id = callIdOf(payload);
    const call = id !== null ? calls.get(id) : undefined;
    const name = call?.name ?? 'tool_output';
    const output = detail && hasElidableOutputField(payloadType) ? measureOutput(payload.output) : null;
    const d = describe('tool_result', name, detail ? outputSummary(call, name, output) : null);
    d.link = { role: 'output', id, family: asOutput };
    d.output = output;
    return d;
  }
  if (STANDALONE_CALLS.has(payloadType)) {
    const name = sanitizeLabel(toolNameOf(payload, payloadType), 'tool');
    return describe('tool_call', name, name);
  }
  if (payloadType === 'agent_message') {
    // A message from another agent of a multi-agent run: it reaches the model as input.
    const text = detail ? firstText(payload.content) : null;
    return describe('user', 'agent_message', text === null ? null : firstLine(text, SUMMARY_MAX_BYTES));
  }
  if (payloadType === 'compaction') return describe('system', 'compaction', null);
  const d = describe('meta', sanitizeLabel(payloadType, 'response_item'), null);
  d.sentToModel = !NOT_SENT_TO_MODEL.has(payloadType);
  return d;
}
