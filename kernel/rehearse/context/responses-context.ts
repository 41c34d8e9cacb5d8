/**
 * The context Codex rebuilt, read from a Responses API request body (`input` items).
 *
 * What the client adds on resume, observed with Codex 0.171.0 and set aside here:
 * - `input[0]` when it is a developer message: the base instructions (Codex sends them as input,
 *   not in `instructions`);
 * - the user message carrying the probe prompt, anything after it, and the context items the client
 *   injects just before it when its environment differs from the recorded one: developer messages
 *   (skills, permissions) and user messages that open with a context tag (`<environment_context>`…);
 * - a tool output whose text is exactly "aborted": what Codex sends for a call the transcript left
 *   unanswered;
 * - `internal_chat_message_metadata_passthrough` on messages: the client's bookkeeping (content item
 *   kinds, turn ids), not conversation; it is measured as the client's, not the transcript's.
 */
import type { ItemKind, RebuiltContext } from '../../../schemas/generated/types.js';
import { jsonBytes, KindTally, tokensOfBytes } from './tally.js';
import { ToolLedger } from './tool-ledger.js';

export const CODEX_SYNTHETIC_OUTPUT = 'aborted';
const CLIENT_ITEM_FIELDS = ['internal_chat_message_metadata_passthrough'];
const CONTEXT_TAGS = ['<environment_context>', '<skills_instructions>', '<permissions instructions>', '<user_instructions>', '# AGENTS.md instructions'];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function itemText(item: Json): string {
  if (typeof item.content === 'string') return item.content;
  if (!Array.isArray(item.content)) return '';
  return item.content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('');
}

function isMessage(item: Json, role: string): boolean {
  return (item.type === 'message' || item.type === undefined) && item.role === role;
}

function isInjectedContext(item: Json): boolean {
  if (isMessage(item, 'developer')) return true;
  if (!isMessage(item, 'user')) return false;
  const text = itemText(item).trimStart();
  return CONTEXT_TAGS.some((tag) => text.startsWith(tag));
}

function isCall(type: string): boolean {
  return type.endsWith('_call');
}

function isOutput(type: string): boolean {
  return type.endsWith('_call_output');
}

function itemKind(item: Json): ItemKind {
  const type = typeof item.type === 'string' ? item.type : 'message';
  if (type === 'message') {
    if (item.role === 'user') return 'user';
    if (item.role === 'assistant') return 'assistant';
    return 'system';
  }
  if (type === 'reasoning') return 'reasoning';
  if (isOutput(type)) return 'tool_result';
  if (isCall(type)) return 'tool_call';
  if (type === 'compaction') return 'system';
  return 'meta';
}

/** The item without the fields the client adds for itself. */
function conversationPart(item: Json): Json {
  if (!CLIENT_ITEM_FIELDS.some((f) => Object.hasOwn(item, f))) return item;
  const copy = { ...item };
  for (const f of CLIENT_ITEM_FIELDS) delete copy[f];
  return copy;
}

function isSyntheticOutput(item: Json): boolean {
  return typeof item.type === 'string' && isOutput(item.type) && item.output === CODEX_SYNTHETIC_OUTPUT;
}

export function analyzeResponsesRequest(body: Json, probe: string): RebuiltContext {
  const rawInput = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  const items = rawInput.map((v) => (isObject(v) ? v : {}));
  let probeAt = items.length;
  for (let i = items.length - 1; i >= 0; i -= 1) {
    if (isMessage(items[i]!, 'user') && itemText(items[i]!).includes(probe)) {
      probeAt = i;
      break;
    }
  }
  let end = probeAt;
  while (end > 0 && isInjectedContext(items[end - 1]!)) end -= 1;
  const start = items.length > 0 && isMessage(items[0]!, 'developer') ? 1 : 0;

  const kinds = new KindTally();
  const ledger = new ToolLedger();
  const kept: Json[] = [];
  const added: Json[] = [...items.slice(0, Math.min(start, end)), ...items.slice(Math.max(end, start))];
  let synthetic = 0;
  let attachedBytes = 0;
  for (let i = start; i < end; i += 1) {
    const item = items[i]!;
    if (isSyntheticOutput(item)) {
      synthetic += 1;
      added.push(item);
      continue;
    }
    const conversation = conversationPart(item);
    if (conversation !== item) attachedBytes += jsonBytes(item) - jsonBytes(conversation);
    kept.push(conversation);
    kinds.add(itemKind(item), jsonBytes(conversation));
    const type = typeof item.type === 'string' ? item.type : '';
    if (typeof item.call_id === 'string') {
      if (isOutput(type)) ledger.result(item.call_id);
      else if (isCall(type)) ledger.call(item.call_id);
    }
  }
  const bytes = kept.length > 0 ? jsonBytes(kept) : 0;
  // What the client attached to transcript items counts as its addition too.
  const addedBytes = (added.length > 0 ? jsonBytes(added) : 0) + attachedBytes;
  const totalBytes = jsonBytes(rawInput);
  const leading = start === 1 ? jsonBytes(items[0]) : 0;
  return {
    api: 'openai_responses',
    messages: kept.length,
    units: kept.length,
    by_kind: kinds.toJSON(),
    ...ledger.summary(),
    bytes,
    est_tokens: tokensOfBytes(bytes),
    client_added: {
      messages: added.length,
      units: added.length,
      bytes: addedBytes,
      est_tokens: tokensOfBytes(addedBytes),
      synthetic_tool_results: synthetic,
    },
    total_messages: rawInput.length,
    total_bytes: totalBytes,
    total_est_tokens: tokensOfBytes(totalBytes),
    instructions_bytes: jsonBytes(typeof body.instructions === 'string' && body.instructions.length > 0 ? body.instructions : undefined) + leading,
    tools_offered: Array.isArray(body.tools) ? body.tools.length : 0,
  };
}
