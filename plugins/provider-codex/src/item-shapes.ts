/**
 * Which response items the client supports (dialects.md §2.3, §2.6): the item types it knows, and
 * for the types whose fields it reads, the shape it reads them in. An item outside that is kept on
 * disk but is not what the model gets back on resume. The rules are the reference's, loosened
 * where real rollouts show the client writing more: string `custom_tool_call_output`s (0.47-0.104),
 * a tool output that is one content block (0.146), and the item types seen in real files. Call ids
 * are judged by invalid_call_id, not here. Reasons never hold content.
 */
import { isObject, type Json, type JsonObject } from './records.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'tool_search_call',
  'tool_search_output',
  'web_search_call',
  'image_generation_call',
  'ghost_snapshot',
  'agent_message',
  'compaction',
  'context_compaction',
  'compaction_trigger',
  'configuration_update',
]);

const MESSAGE_ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'developer']);
const MESSAGE_BLOCKS: ReadonlySet<string> = new Set(['input_text', 'output_text', 'input_image']);
const OUTPUT_BLOCKS: ReadonlySet<string> = new Set(['input_text', 'input_image']);

function isBlockOf(block: Json, types: ReadonlySet<string>): boolean {
  if (!isObject(block) || typeof block.type !== 'string' || !types.has(block.type)) return false;
  return block.type === 'input_image' || typeof block.text === 'string';
}

function isBlocks(value: Json | undefined, types: ReadonlySet<string>): boolean {
  if (!Array.isArray(value)) return false;
  for (const block of value) if (!isBlockOf(block, types)) return false;
  return true;
}

/** Why the client does not support this item (after "response item on line N"), or null when it does. */
export function unsupportedReason(payload: JsonObject, type: string): string | null {
  if (!KNOWN_TYPES.has(type)) return 'is of a type the client does not know';
  switch (type) {
    case 'message':
      if (typeof payload.role !== 'string' || !MESSAGE_ROLES.has(payload.role)) return 'is a message with a role the client does not know';
      if (typeof payload.content !== 'string' && !isBlocks(payload.content, MESSAGE_BLOCKS)) return 'is a message whose content is neither text nor text and image blocks';
      return null;
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const output = payload.output;
      if (typeof output === 'string' || isBlocks(output, OUTPUT_BLOCKS) || (output !== undefined && isBlockOf(output, OUTPUT_BLOCKS))) return null;
      return 'is a tool output whose output is neither text nor text and image blocks';
    }
    case 'reasoning':
      return Array.isArray(payload.summary) ? null : 'is a reasoning item without a summary array';
    case 'agent_message':
      return typeof payload.author === 'string' && typeof payload.recipient === 'string' ? null : 'is an agent message without an author and a recipient';
    default:
      return null;
  }
}
