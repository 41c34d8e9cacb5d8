/**
 * What one response item is, as metadata: kind, a label that never holds payload text, a short
 * summary, and how it links to other items. Used for top-level `response_item` records and for the
 * items inside a `compacted` record's replacement history alike.
 */
import type { ItemKind } from '../../../sdk/index.js';
import { ENCODED_OUTPUT_START, measureOutput, type OutputMeasure } from './payload.js';
import {
  STANDALONE_CALLS,
  NOT_SENT_TO_MODEL,
  callFamily,
  callIdOf,
  firstText,
  hasElidableOutputField,
  isObject,
  isPreambleText,
  outputFamily,
  toolNameOf,
  type JsonObject,
  type ToolFamily,
} from './records.js';
import { clipUtf8 } from '../../../sdk/utf8.js';
import { failureLine } from '../../../sdk/summary-lines.js';
import { SUMMARY_MAX_BYTES, firstLine, sanitizeLabel } from './text.js';

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

/** Argument objects larger than this are summarised by size alone, to keep the pass linear. */
const MAX_ARGUMENT_SHAPE_BYTES = 64 * 1024;

function argumentShape(args: unknown): string {
  let value: unknown = args;
  if (typeof args === 'string') {
    if (args.length > MAX_ARGUMENT_SHAPE_BYTES) return `${args.length} chars`;
    try {
      value = JSON.parse(args);
    } catch {
      return `${args.length} chars`;
    }
  }
  if (isObject(value)) {
    const keys = Object.keys(value).map((k) => sanitizeLabel(k, '?'));
    return keys.join(', ');
  }
  if (Array.isArray(value)) return `${value.length} items`;
  return value === null || value === undefined ? '' : typeof value;
}

function callSummary(name: string, payload: JsonObject, payloadType: string): string {
  if (payloadType === 'custom_tool_call') {
    const input = typeof payload.input === 'string' ? payload.input : '';
    return clipUtf8(`${name}(${input.length} chars)`, SUMMARY_MAX_BYTES);
  }
  if (payloadType === 'local_shell_call') return clipUtf8(`${name}(${argumentShape(payload.action)})`, SUMMARY_MAX_BYTES);
  return clipUtf8(`${name}(${argumentShape(payload.arguments)})`, SUMMARY_MAX_BYTES);
}

/** Where a newer build's plain-text output states how the command ended, in its first lines. */
const HEADER_EXIT = /^(?:Exit code:|Process exited with code)\s*(-?\d+)/m;
/** Where an older build's `{"output": …, "metadata": {exit_code, …}}` states it: after the output. */
const METADATA_EXIT = /"exit_code"\s*:\s*(-?\d+)/;
const HEADER_CHARS = 256;
const OUTPUT_MARK = '\nOutput:\n';
/** A failed command's line in a summary: room for a compiler message, far under the summary bound. */
const FAILURE_SUMMARY_BYTES = 160;

interface ExitStatus {
  code: number;
  /** The command's own text, without the header or the JSON around it; read only when it failed. */
  body: () => string;
}

function exitStatus(text: string): ExitStatus | null {
  if (text.startsWith(ENCODED_OUTPUT_START)) {
    const found = METADATA_EXIT.exec(text.slice(-HEADER_CHARS));
    if (found === null) return null;
    return { code: Number(found[1]), body: () => decodedOutput(text) };
  }
  const head = text.slice(0, HEADER_CHARS);
  const found = HEADER_EXIT.exec(head);
  if (found === null) return null;
  return {
    code: Number(found[1]),
    body: () => {
      const mark = head.indexOf(OUTPUT_MARK);
      return mark === -1 ? '' : text.slice(mark + OUTPUT_MARK.length);
    },
  };
}

function decodedOutput(text: string): string {
  try {
    const decoded: unknown = JSON.parse(text);
    return isObject(decoded) && typeof decoded.output === 'string' ? decoded.output : '';
  } catch {
    return '';
  }
}

/**
 * A failed command names the line that says what failed, and says "failed" so that a state card
 * files it under errors: after compaction that line is often all the next turn has of the output.
 */
function outputSummary(name: string, measure: OutputMeasure | null): string {
  if (measure === null) return `${name} output`;
  const status = measure.parts.length === 1 ? exitStatus(measure.parts[0]!) : null;
  const size = `${name} output, ${measure.bytes} bytes`;
  if (status === null) return size;
  if (status.code === 0) return `${size}, exit 0`;
  const line = failureLine(status.body(), FAILURE_SUMMARY_BYTES);
  return clipUtf8(`${size}, failed with exit ${status.code}${line === null ? '' : `: ${line}`}`, SUMMARY_MAX_BYTES);
}

/** Descriptions are built field by field: object spreads cost measurably at 100,000 records. */
function describe(kind: ItemKind, label: string, summary: string | null, userTurn = false): ItemDescription {
  return { kind, label, summary, sentToModel: true, link: null, userTurn, output: null };
}

/**
 * What one item is. `detail: false` leaves out summaries and output measures (null), which only
 * the transcript's items carry: verify needs kinds and links alone.
 */
export function describeResponseItem(payload: JsonObject, payloadType: string, toolNames: Map<string, string>, detail = true): ItemDescription {
  if (payloadType === 'message') {
    const role = typeof payload.role === 'string' ? payload.role : '';
    const text = firstText(payload.content);
    const summary = text === null || !detail ? null : firstLine(text) || null;
    if (role === 'user') {
      const preamble = text !== null && isPreambleText(text);
      return describe(preamble ? 'system' : 'user', preamble ? 'preamble' : 'user', summary, !preamble);
    }
    if (role === 'assistant') return describe('assistant', 'assistant', summary);
    if (role === 'developer' || role === 'system') return describe('system', role, summary);
    return describe('meta', sanitizeLabel(`message:${role}`, 'message'), summary);
  }
  if (payloadType === 'reasoning') {
    const summaryText = detail && Array.isArray(payload.summary) ? firstText(payload.summary) : null;
    return describe('reasoning', 'reasoning', summaryText === null ? null : firstLine(summaryText) || null);
  }
  const asCall = callFamily(payloadType);
  if (asCall !== undefined) {
    const name = sanitizeLabel(toolNameOf(payload, payloadType), 'tool');
    const id = callIdOf(payload);
    if (id !== null) toolNames.set(id, name);
    const d = describe('tool_call', name, detail ? callSummary(name, payload, payloadType) : null);
    d.link = { role: 'call', id, family: asCall };
    return d;
  }
  const asOutput = outputFamily(payloadType);
  if (asOutput !== undefined) {
    const id = callIdOf(payload);
    const name = (id !== null ? toolNames.get(id) : undefined) ?? 'tool_output';
    const output = detail && hasElidableOutputField(payloadType) ? measureOutput(payload.output) : null;
    const d = describe('tool_result', name, detail ? outputSummary(name, output) : null);
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
    return describe('user', 'agent_message', text === null ? null : firstLine(text) || null);
  }
  if (payloadType === 'compaction') return describe('system', 'compaction', null);
  const d = describe('meta', sanitizeLabel(payloadType, 'response_item'), null);
  d.sentToModel = !NOT_SENT_TO_MODEL.has(payloadType);
  return d;
}
