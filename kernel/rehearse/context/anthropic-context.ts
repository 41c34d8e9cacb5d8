/**
 * The context Claude Code rebuilt, read from a Messages API request body.
 *
 * What the client adds on resume, observed with Claude Code 2.1.197 and set aside here:
 * - the user message that carries the probe prompt (with the reminders that ride on a new prompt)
 *   and every message after it (a mid-conversation `system` message of agent/skill listings);
 * - an assistant message that is only "No response requested.", which closes a transcript that
 *   ended on a user turn, and the user text "Continue from where you left off." it pairs with;
 * - the `<system-reminder>` blocks that open the first user message (the client's own context).
 * `system` and `tools` are never part of `messages`, so they are reported only as sizes.
 */
import type { ItemKind, RebuiltContext } from '../../../schemas/generated/types.js';
import { jsonBytes, KindTally, tokensOfBytes } from './tally.js';
import { ToolLedger } from './tool-ledger.js';

export const CLAUDE_SYNTHETIC_CONTINUE = 'Continue from where you left off.';
export const CLAUDE_SYNTHETIC_NO_RESPONSE = 'No response requested.';
const REMINDER_PREFIX = '<system-reminder>';

type Json = Record<string, unknown>;

interface ApiMessage {
  role: string;
  blocks: Json[];
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toMessage(value: unknown): ApiMessage | null {
  if (!isObject(value) || typeof value.role !== 'string') return null;
  const content = value.content;
  if (typeof content === 'string') return { role: value.role, blocks: [{ type: 'text', text: content }] };
  if (Array.isArray(content)) return { role: value.role, blocks: content.filter(isObject) };
  return { role: value.role, blocks: [] };
}

function textOf(block: Json): string | null {
  return block.type === 'text' && typeof block.text === 'string' ? block.text : null;
}

function messageText(message: ApiMessage): string {
  return message.blocks.map((b) => textOf(b) ?? '').join('');
}

function isReminder(block: Json): boolean {
  return (textOf(block) ?? '').startsWith(REMINDER_PREFIX);
}

function blockKind(role: string, block: Json): ItemKind {
  if (role === 'system') return 'system';
  switch (block.type) {
    case 'text':
      if (isReminder(block)) return 'meta';
      return role === 'assistant' ? 'assistant' : 'user';
    case 'thinking':
    case 'redacted_thinking':
      return 'reasoning';
    case 'tool_use':
    case 'server_tool_use':
      return 'tool_call';
    case 'tool_result':
      return 'tool_result';
    case 'image':
    case 'document':
      return 'user';
    default:
      return typeof block.type === 'string' && block.type.endsWith('_tool_result') ? 'tool_result' : 'meta';
  }
}

export function analyzeMessagesRequest(body: Json, probe: string): RebuiltContext {
  const raw = Array.isArray(body.messages) ? body.messages : [];
  const messages = raw.map(toMessage);
  let probeAt = messages.length;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m && m.role === 'user' && messageText(m).includes(probe)) {
      probeAt = i;
      break;
    }
  }
  let transcriptEnd = probeAt;
  const before = messages[transcriptEnd - 1];
  if (before && before.role === 'assistant' && messageText(before).trim() === CLAUDE_SYNTHETIC_NO_RESPONSE) transcriptEnd -= 1;

  const kinds = new KindTally();
  const ledger = new ToolLedger();
  const kept: Json[] = [];
  const addedBlocks: unknown[] = [];
  let addedUnits = 0;
  let keptUnits = 0;
  for (let i = 0; i < transcriptEnd; i += 1) {
    const message = messages[i];
    if (!message) continue;
    const keepBlocks: Json[] = [];
    let opening = i === 0 && message.role === 'user';
    for (const block of message.blocks) {
      const clientContext = opening && isReminder(block);
      if (!clientContext) opening = false;
      if (clientContext || (message.role === 'user' && textOf(block)?.trim() === CLAUDE_SYNTHETIC_CONTINUE)) {
        addedBlocks.push(block);
        addedUnits += 1;
        continue;
      }
      keepBlocks.push(block);
      kinds.add(blockKind(message.role, block), jsonBytes(block));
      keptUnits += 1;
      if (message.role === 'assistant' && block.type === 'tool_use' && typeof block.id === 'string') ledger.call(block.id);
      if (message.role === 'user' && block.type === 'tool_result' && typeof block.tool_use_id === 'string') ledger.result(block.tool_use_id);
    }
    if (keepBlocks.length > 0) kept.push({ role: message.role, content: keepBlocks });
  }
  const addedMessages = raw.slice(transcriptEnd);
  for (const m of messages.slice(transcriptEnd)) addedUnits += m?.blocks.length ?? 0;
  const addedBytes = jsonBytes(addedMessages) + (addedBlocks.length > 0 ? jsonBytes(addedBlocks) : 0);
  const bytes = kept.length > 0 ? jsonBytes(kept) : 0;
  const totalBytes = jsonBytes(raw);
  return {
    api: 'anthropic_messages',
    messages: kept.length,
    units: keptUnits,
    by_kind: kinds.toJSON(),
    ...ledger.summary(),
    bytes,
    est_tokens: tokensOfBytes(bytes),
    client_added: {
      messages: addedMessages.length,
      units: addedUnits,
      bytes: addedBytes,
      est_tokens: tokensOfBytes(addedBytes),
      synthetic_tool_results: 0,
    },
    total_messages: raw.length,
    total_bytes: totalBytes,
    total_est_tokens: tokensOfBytes(totalBytes),
    instructions_bytes: jsonBytes(body.system),
    tools_offered: Array.isArray(body.tools) ? body.tools.length : 0,
  };
}
