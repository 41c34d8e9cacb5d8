/**
 * The Claude Code record shapes (dialects.md §1.2–1.4): typed accessors over a parsed JSONL line,
 * the record-type vocabulary, and the structural rules a record must meet before anything else
 * trusts its fields.
 */

export type RawRecord = Record<string, unknown>;
export type Block = Record<string, unknown>;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Conversation records: the ones that form the uuid tree the client rebuilds context from. */
export const CONVERSATION_TYPES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'attachment']);

/**
 * System subtypes that are written for the terminal UI and never sent to the model. Unknown and
 * command-output subtypes (local_command) are counted: over-estimating context is the safe side.
 */
export const UI_ONLY_SYSTEM_SUBTYPES: ReadonlySet<string> = new Set([
  'compact_boundary',
  'turn_duration',
  'stop_hook_summary',
  'api_error',
  'api_refusal',
  'model_refusal_fallback',
  'session_start',
  'informational',
  'error',
]);

export const COMPACT_BOUNDARY = 'compact_boundary';
export const LAST_PROMPT = 'last-prompt';

export function message(r: RawRecord): RawRecord | null {
  return isObject(r.message) ? r.message : null;
}

/** `message.content` when it is a string or an array, else null. */
export function content(r: RawRecord): string | unknown[] | null {
  const m = message(r);
  if (!m) return null;
  const c = m.content;
  return typeof c === 'string' || Array.isArray(c) ? c : null;
}

export function blockType(b: Block): string | null {
  return typeof b.type === 'string' ? b.type : null;
}

export function isCompactBoundary(r: RawRecord): boolean {
  return r.type === 'system' && r.subtype === COMPACT_BOUNDARY;
}

const ID_MAX_CHARS = 256;

/** A usable record or tool id: a non-empty string of at most 256 characters without control characters. */
export function isValidId(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > ID_MAX_CHARS) return false;
  // A loop, not a regex: this runs several times for every record of a 100,000-record file.
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

/**
 * What is structurally wrong with a parsed record, as a one-line reason without content, or null.
 * These are the fields the live-branch computation and every rewrite depend on; a wrong type there
 * would make any answer a guess.
 */
export function structuralProblem(r: RawRecord): string | null {
  if (typeof r.type !== 'string' || r.type.length === 0) return 'has no string "type"';
  if ('uuid' in r && r.uuid !== null && !isValidId(r.uuid)) return '"uuid" is not a valid id string';
  if ('parentUuid' in r && r.parentUuid !== null && !isValidId(r.parentUuid)) return '"parentUuid" is neither null nor a valid id string';
  if ('sessionId' in r && typeof r.sessionId !== 'string') return '"sessionId" is not a string';
  if ('isSidechain' in r && typeof r.isSidechain !== 'boolean') return '"isSidechain" is not a boolean';
  const t = r.type;
  if (t === 'user' || t === 'assistant') {
    // Follows "line N" in the message: "line 9 is an assistant record whose ...".
    const what = t === 'user' ? 'is a user record' : 'is an assistant record';
    if (!isObject(r.message)) return `${what} whose "message" is not an object`;
    const c = r.message.content;
    if (typeof c !== 'string' && !Array.isArray(c)) return `${what} whose "message.content" is neither a string nor an array`;
    if (t === 'assistant' && 'id' in r.message && r.message.id !== null && typeof r.message.id !== 'string') return '"message.id" is not a string';
  }
  if (t === LAST_PROMPT && 'leafUuid' in r && r.leafUuid !== null && typeof r.leafUuid !== 'string') return '"leafUuid" is not a string';
  return null;
}

/**
 * What is wrong inside a record's content blocks, or null. Such a block cannot pair (the client
 * drops it), but the record around it is still readable, so this is a finding, not a refusal.
 */
export function contentProblem(r: RawRecord): string | null {
  const c = content(r);
  if (!Array.isArray(c)) return null;
  for (const b of c) {
    if (!isObject(b)) return 'has a content block that is not an object';
    if (b.type === 'tool_use' && !isValidId(b.id)) return 'has a tool_use block without a valid "id"';
    if (b.type === 'tool_result' && !isValidId(b.tool_use_id)) return 'has a tool_result block without a valid "tool_use_id"';
  }
  return null;
}

/** Signs that a record belongs to another provider's format (dialects.md §0 sniffing). */
export function foreignProviderSignal(r: RawRecord): boolean {
  if ('payload' in r && ('ordinal' in r || r.type === 'session_meta')) return true;
  if (r.type === 'session_meta' && 'main_chain_id' in r) return true;
  if (r.type === 'message_node' && 'node_id' in r) return true;
  return false;
}

/** Signs that a record is Claude Code's: a session id key or the uuid/message envelope. */
export function claudeSignal(r: RawRecord): boolean {
  if (foreignProviderSignal(r)) return false;
  return 'sessionId' in r || 'session_id' in r || ('uuid' in r && 'parentUuid' in r) || (r.type === 'summary' && 'leafUuid' in r);
}
