/**
 * The Codex rollout vocabulary: record envelope types, response item types, and how calls and their
 * outputs link. Everything here is read from parsed JSON without trusting any field's type.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Envelope `type` values the client writes. Anything else is bookkeeping we pass through. */
export const RecordType = {
  sessionMeta: 'session_meta',
  responseItem: 'response_item',
  compacted: 'compacted',
  eventMsg: 'event_msg',
  turnContext: 'turn_context',
  tokenUsageRecord: 'token_usage_record',
} as const;

/** A call and the output type that answers it: outputs pair only within their own family. */
export type ToolFamily = 'function' | 'custom' | 'tool_search';

const CALL_FAMILIES: Record<string, ToolFamily> = {
  function_call: 'function',
  local_shell_call: 'function',
  custom_tool_call: 'custom',
  tool_search_call: 'tool_search',
};

const OUTPUT_FAMILIES: Record<string, ToolFamily> = {
  function_call_output: 'function',
  custom_tool_call_output: 'custom',
  tool_search_output: 'tool_search',
};

export function callFamily(payloadType: string): ToolFamily | undefined {
  return Object.hasOwn(CALL_FAMILIES, payloadType) ? CALL_FAMILIES[payloadType] : undefined;
}

export function outputFamily(payloadType: string): ToolFamily | undefined {
  return Object.hasOwn(OUTPUT_FAMILIES, payloadType) ? OUTPUT_FAMILIES[payloadType] : undefined;
}

/** Output records whose `output` field carries the payload a stub may replace. */
export function hasElidableOutputField(payloadType: string): boolean {
  return payloadType === 'function_call_output' || payloadType === 'custom_tool_call_output';
}

/** Self-contained calls that have no separate output record. */
export const STANDALONE_CALLS: ReadonlySet<string> = new Set(['web_search_call', 'image_generation_call']);

/** History items the client keeps on disk but never sends to the model. */
export const NOT_SENT_TO_MODEL: ReadonlySet<string> = new Set(['ghost_snapshot']);

const MAX_CALL_ID_CHARS = 256;

/** The id linking a call and its output: a non-empty string of at most 256 characters, no control characters. */
export function callIdOf(payload: JsonObject): string | null {
  const raw = typeof payload.call_id === 'string' ? payload.call_id : typeof payload.tool_call_id === 'string' ? payload.tool_call_id : null;
  if (raw === null || raw.length === 0 || raw.length > MAX_CALL_ID_CHARS) return null;
  if (/[\u0000-\u001f\u007f]/.test(raw)) return null;
  return raw;
}

/** The tool name a call record carries, for labels. */
export function toolNameOf(payload: JsonObject, payloadType: string): string {
  if (payloadType === 'local_shell_call') return 'local_shell';
  if (payloadType === 'tool_search_call') return 'tool_search';
  if (payloadType === 'web_search_call') return 'web_search';
  if (payloadType === 'image_generation_call') return 'image_generation';
  const name = typeof payload.name === 'string' ? payload.name : '';
  const namespace = typeof payload.namespace === 'string' && payload.namespace.length > 0 ? `${payload.namespace}.` : '';
  return `${namespace}${name}`;
}

/** Leading markers of the context the client injects as user messages (environment, instructions). */
const PREAMBLE_PREFIXES = [
  '<environment_context>',
  '<user_instructions>',
  '# AGENTS.md instructions',
  '<permissions instructions>',
  '<skills_instructions>',
  '<INSTRUCTIONS>',
  '<collaboration_mode>',
];

export function isPreambleText(text: string): boolean {
  const head = text.trimStart();
  return PREAMBLE_PREFIXES.some((prefix) => head.startsWith(prefix));
}

/**
 * Markers of the user messages the client writes itself in the middle of a conversation: a turn
 * the user interrupted, a shell command they ran with `!`, a sub-agent's report. They are sent like
 * any message, but the client does not count them as the start of a user turn, so a rollback of N
 * turns reaches back past them to the user's own messages.
 */
const CONTEXTUAL_USER_PREFIXES = ['<turn_aborted>', '<user_shell_command>', '<subagent_notification>'];

export function isContextualUserText(text: string): boolean {
  const head = text.trimStart().slice(0, 32).toLowerCase();
  return CONTEXTUAL_USER_PREFIXES.some((prefix) => head.startsWith(prefix));
}

const TEXT_BLOCK_TYPES: ReadonlySet<string> = new Set(['input_text', 'output_text', 'text', 'summary_text']);

export function isTextBlock(block: Json): block is JsonObject & { text: string } {
  return isObject(block) && typeof block.type === 'string' && TEXT_BLOCK_TYPES.has(block.type) && typeof block.text === 'string';
}

/** First text of a message `content` (a string, or an array of content blocks). */
export function firstText(content: Json | undefined): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  for (const block of content) if (isTextBlock(block)) return block.text;
  return null;
}

/** history_mode values the client accepts; anything else makes it refuse the rollout. */
export const HISTORY_MODES: ReadonlySet<string> = new Set(['legacy', 'paginated']);

/**
 * A `compacted` payload the client can load with its replacement history: a history made of typed
 * items. Anything else but a summary-only compaction (below) fails to deserialize, so the client
 * skips the record and the window does not move.
 */
export function isReadableCompaction(payload: Json | undefined): payload is JsonObject & { replacement_history: Array<JsonObject & { type: string }> } {
  return isObject(payload) && Array.isArray(payload.replacement_history) && payload.replacement_history.every((e) => isObject(e) && typeof e.type === 'string');
}

/**
 * A compaction as older clients wrote it: the summary `message` and no replacement history (absent
 * or null). The client still loads it and starts a new window there, rebuilt from the user messages
 * before it followed by the summary.
 */
export function isSummaryCompaction(payload: Json | undefined): payload is JsonObject & { message: string } {
  return isObject(payload) && typeof payload.message === 'string' && (payload.replacement_history === undefined || payload.replacement_history === null);
}

/** Why the client cannot load a `compacted` payload that is neither form above. */
export function unreadableCompactionReason(payload: Json | undefined): string {
  const history = isObject(payload) ? payload.replacement_history : undefined;
  if (history === undefined || history === null) return 'has neither a summary message string nor a replacement_history';
  return 'has a replacement_history that is not an array of typed items';
}
