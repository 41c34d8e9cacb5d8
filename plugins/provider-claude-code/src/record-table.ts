/**
 * What the provider keeps of each physical record after its line is parsed, stored by column: the
 * tree links, tool ids, numbers and a bounded label and summary per line. No object per record
 * survives the line it came from: numbers live in typed arrays, strings in one array per field,
 * so a 100,000-record session costs a few columns, not 100,000 objects for the collector to move.
 */
import type { ContextComponents, ContextReason, ItemKind } from '../../../schemas/generated/types.js';

/** How a physical line was read. */
export type LineState = 'ok' | 'blank' | 'invalid_json' | 'not_object' | 'invalid_record' | 'invalid_utf8' | 'oversized';

const STATES: readonly LineState[] = ['ok', 'blank', 'invalid_json', 'not_object', 'invalid_record', 'invalid_utf8', 'oversized'];
const KINDS: readonly ItemKind[] = ['meta', 'system', 'user', 'assistant', 'tool_call', 'tool_result', 'reasoning'];
const STATE_CODE = new Map(STATES.map((s, i) => [s, i]));
const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));

export const FLAG_SIDECHAIN = 1;
/** The record reaches the model when it is on the live branch. */
export const FLAG_COUNTED = 2;
/** A user record made only of tool_result blocks. */
export const FLAG_RESULT_ONLY = 4;
export const FLAG_COMPACT_BOUNDARY = 8;

/** Why an assistant record's usage cannot be trusted, with what could be read. */
export interface UsageProblem {
  reason: ContextReason;
  components: ContextComponents | null;
}

function grow<T extends Float64Array | Uint32Array | Int32Array | Uint8Array>(a: T, size: number): T {
  const next = new (a.constructor as new (n: number) => T)(size);
  next.set(a);
  return next;
}

export class RecordTable {
  length = 0;
  private capacity: number;
  /** Bytes of the line without its newline. */
  bytes: Float64Array;
  /** Bytes of what the client sends to the model for a counted record (sent-bytes.ts). */
  sentBytes: Float64Array;
  private stateCodes: Uint8Array;
  private kindCodes: Uint8Array;
  flags: Uint8Array;
  /** Number of the API response (records sharing `message.id` share it); -1 when none. */
  response: Int32Array;
  elidableBytes: Float64Array;
  elidableParts: Uint32Array;
  /** input + cache_read + cache_creation + output of an assistant record's usage; -1 when none. */
  usageContext: Float64Array;
  /** input + cache_read + cache_creation. */
  usageInput: Float64Array;
  usageCached: Float64Array;
  type: Array<string | null> = [];
  uuid: Array<string | null> = [];
  parentUuid: Array<string | null> = [];
  label: string[] = [];
  summary: Array<string | null> = [];
  payloadSha256: Array<string | null> = [];
  /** tool_use ids of an assistant record; the ids a user record's tool_result blocks answer. */
  toolUseIds: Array<string[] | null> = [];
  toolResultIds: Array<string[] | null> = [];
  model: Array<string | null> = [];
  /** `leafUuid` of each last-prompt record, by line ('' when present but unusable). */
  leafUuid = new Map<number, string>();
  /** Assistant records whose usage is malformed. */
  usageProblems = new Map<number, UsageProblem>();

  constructor(capacity = 1024) {
    this.capacity = capacity;
    this.bytes = new Float64Array(capacity);
    this.sentBytes = new Float64Array(capacity);
    this.stateCodes = new Uint8Array(capacity);
    this.kindCodes = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.response = new Int32Array(capacity);
    this.elidableBytes = new Float64Array(capacity);
    this.elidableParts = new Uint32Array(capacity);
    this.usageContext = new Float64Array(capacity);
    this.usageInput = new Float64Array(capacity);
    this.usageCached = new Float64Array(capacity);
  }

  /** Appends a row for a line read as `state`, with nothing known yet; returns its index. */
  add(bytes: number, state: LineState): number {
    const i = this.length;
    if (i === this.capacity) this.enlarge();
    this.bytes[i] = bytes;
    this.sentBytes[i] = 0;
    this.stateCodes[i] = STATE_CODE.get(state)!;
    this.kindCodes[i] = 0;
    this.response[i] = -1;
    this.usageContext[i] = -1;
    this.type.push(null);
    this.uuid.push(null);
    this.parentUuid.push(null);
    this.label.push('meta');
    this.summary.push(null);
    this.payloadSha256.push(null);
    this.toolUseIds.push(null);
    this.toolResultIds.push(null);
    this.model.push(null);
    this.length = i + 1;
    return i;
  }

  private enlarge(): void {
    const size = this.capacity * 2;
    this.bytes = grow(this.bytes, size);
    this.sentBytes = grow(this.sentBytes, size);
    this.stateCodes = grow(this.stateCodes, size);
    this.kindCodes = grow(this.kindCodes, size);
    this.flags = grow(this.flags, size);
    this.response = grow(this.response, size);
    this.elidableBytes = grow(this.elidableBytes, size);
    this.elidableParts = grow(this.elidableParts, size);
    this.usageContext = grow(this.usageContext, size);
    this.usageInput = grow(this.usageInput, size);
    this.usageCached = grow(this.usageCached, size);
    this.capacity = size;
  }

  state(i: number): LineState {
    return STATES[this.stateCodes[i]!]!;
  }

  ok(i: number): boolean {
    return this.stateCodes[i] === 0;
  }

  kind(i: number): ItemKind {
    return KINDS[this.kindCodes[i]!]!;
  }

  setKind(i: number, kind: ItemKind): void {
    this.kindCodes[i] = KIND_CODE.get(kind)!;
  }

  has(i: number, flag: number): boolean {
    return (this.flags[i]! & flag) !== 0;
  }

  /** A readable record with a uuid: part of the conversation tree. */
  linked(i: number): boolean {
    return this.stateCodes[i] === 0 && this.uuid[i] !== null;
  }

  /** A user or assistant record. */
  message(i: number): boolean {
    const t = this.type[i];
    return t === 'user' || t === 'assistant';
  }
}
