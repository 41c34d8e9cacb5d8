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

/** parentLine of a record that names no parent. */
export const NO_PARENT = -1;
/** parentLine of a record whose parent was not among the records read before it. */
export const PARENT_UNKNOWN = -3;

/** Why an assistant record's usage cannot be trusted, with what could be read. */
export interface UsageProblem {
  reason: ContextReason;
  components: ContextComponents | null;
}

/**
 * A span of a table's rows as plain columns, for moving rows read on another thread: typed arrays
 * of their own (their buffers can be transferred) and the line-keyed maps as entries.
 */
export interface TableColumns {
  length: number;
  bytes: Float64Array;
  sentBytes: Float64Array;
  states: Uint8Array;
  kinds: Uint8Array;
  flags: Uint8Array;
  response: Int32Array;
  parentLine: Int32Array;
  uuidHash: Int32Array;
  parentHash: Int32Array;
  elidableBytes: Float64Array;
  elidableParts: Uint32Array;
  stringPayloadBlock: Uint32Array;
  usageContext: Float64Array;
  usageInput: Float64Array;
  usageCached: Float64Array;
  type: Array<string | null>;
  uuid: Array<string | null>;
  parentUuid: Array<string | null>;
  label: string[];
  summary: Array<string | null>;
  payloadSha256: Array<string | null>;
  toolUseIds: Array<string[] | null>;
  toolResultIds: Array<string[] | null>;
  model: Array<string | null>;
  leafUuid: Array<[number, string]>;
  usageProblems: Array<[number, UsageProblem]>;
}

/** The typed-array buffers of `c`, to transfer instead of copying. */
export function columnBuffers(c: TableColumns): ArrayBuffer[] {
  const arrays = [c.bytes, c.sentBytes, c.states, c.kinds, c.flags, c.response, c.parentLine, c.uuidHash, c.parentHash, c.elidableBytes, c.elidableParts, c.stringPayloadBlock, c.usageContext, c.usageInput, c.usageCached];
  return arrays.map((a) => a.buffer as ArrayBuffer);
}

function appendStrings<T>(into: T[], from: readonly T[]): void {
  for (let i = 0; i < from.length; i += 1) into.push(from[i]!);
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
  /**
   * Line of the record holding `parentUuid` among those read before this one, NO_PARENT, or
   * PARENT_UNKNOWN: a head start for the live branch, which trusts it only when no uuid repeats.
   */
  parentLine: Int32Array;
  /** uuid-index.ts idHash of `uuid` and `parentUuid`, for a scan that notes uuids once all rows are read. */
  uuidHash: Int32Array;
  parentHash: Int32Array;
  elidableBytes: Float64Array;
  elidableParts: Uint32Array;
  /**
   * 1 + the `message.content` index of the record's one elidable part when that part is a plain
   * string; 0 otherwise. What a render needs to edit the line without parsing it again.
   */
  stringPayloadBlock: Uint32Array;
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
    this.parentLine = new Int32Array(capacity);
    this.uuidHash = new Int32Array(capacity);
    this.parentHash = new Int32Array(capacity);
    this.elidableBytes = new Float64Array(capacity);
    this.elidableParts = new Uint32Array(capacity);
    this.stringPayloadBlock = new Uint32Array(capacity);
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
    this.parentLine[i] = PARENT_UNKNOWN;
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

  private enlarge(atLeast = 0): void {
    const size = Math.max(this.capacity * 2, atLeast);
    this.bytes = grow(this.bytes, size);
    this.sentBytes = grow(this.sentBytes, size);
    this.stateCodes = grow(this.stateCodes, size);
    this.kindCodes = grow(this.kindCodes, size);
    this.flags = grow(this.flags, size);
    this.response = grow(this.response, size);
    this.parentLine = grow(this.parentLine, size);
    this.uuidHash = grow(this.uuidHash, size);
    this.parentHash = grow(this.parentHash, size);
    this.elidableBytes = grow(this.elidableBytes, size);
    this.elidableParts = grow(this.elidableParts, size);
    this.stringPayloadBlock = grow(this.stringPayloadBlock, size);
    this.usageContext = grow(this.usageContext, size);
    this.usageInput = grow(this.usageInput, size);
    this.usageCached = grow(this.usageCached, size);
    this.capacity = size;
  }

  /**
   * Rows [from, to) as columns of their own (copies: the table may go on growing), with the maps'
   * line keys made relative to `from`.
   */
  columns(from = 0, to = this.length): TableColumns {
    const span = <T>(map: Map<number, T>): Array<[number, T]> => {
      const out: Array<[number, T]> = [];
      for (const [line, value] of map) if (line >= from && line < to) out.push([line - from, value]);
      return out;
    };
    return {
      length: to - from,
      bytes: this.bytes.slice(from, to),
      sentBytes: this.sentBytes.slice(from, to),
      states: this.stateCodes.slice(from, to),
      kinds: this.kindCodes.slice(from, to),
      flags: this.flags.slice(from, to),
      response: this.response.slice(from, to),
      parentLine: this.parentLine.slice(from, to),
      uuidHash: this.uuidHash.slice(from, to),
      parentHash: this.parentHash.slice(from, to),
      elidableBytes: this.elidableBytes.slice(from, to),
      elidableParts: this.elidableParts.slice(from, to),
      stringPayloadBlock: this.stringPayloadBlock.slice(from, to),
      usageContext: this.usageContext.slice(from, to),
      usageInput: this.usageInput.slice(from, to),
      usageCached: this.usageCached.slice(from, to),
      type: this.type.slice(from, to),
      uuid: this.uuid.slice(from, to),
      parentUuid: this.parentUuid.slice(from, to),
      label: this.label.slice(from, to),
      summary: this.summary.slice(from, to),
      payloadSha256: this.payloadSha256.slice(from, to),
      toolUseIds: this.toolUseIds.slice(from, to),
      toolResultIds: this.toolResultIds.slice(from, to),
      model: this.model.slice(from, to),
      leafUuid: span(this.leafUuid),
      usageProblems: span(this.usageProblems),
    };
  }

  /**
   * Appends rows read from the lines that follow this table's last line; the maps' line keys are
   * shifted by the current length. Returns that offset.
   */
  append(c: TableColumns): number {
    const at = this.length;
    const n = at + c.length;
    if (this.capacity < n) this.enlarge(n);
    this.bytes.set(c.bytes, at);
    this.sentBytes.set(c.sentBytes, at);
    this.stateCodes.set(c.states, at);
    this.kindCodes.set(c.kinds, at);
    this.flags.set(c.flags, at);
    this.response.set(c.response, at);
    this.parentLine.set(c.parentLine, at);
    this.uuidHash.set(c.uuidHash, at);
    this.parentHash.set(c.parentHash, at);
    this.elidableBytes.set(c.elidableBytes, at);
    this.elidableParts.set(c.elidableParts, at);
    this.stringPayloadBlock.set(c.stringPayloadBlock, at);
    this.usageContext.set(c.usageContext, at);
    this.usageInput.set(c.usageInput, at);
    this.usageCached.set(c.usageCached, at);
    appendStrings(this.type, c.type);
    appendStrings(this.uuid, c.uuid);
    appendStrings(this.parentUuid, c.parentUuid);
    appendStrings(this.label, c.label);
    appendStrings(this.summary, c.summary);
    appendStrings(this.payloadSha256, c.payloadSha256);
    appendStrings(this.toolUseIds, c.toolUseIds);
    appendStrings(this.toolResultIds, c.toolResultIds);
    appendStrings(this.model, c.model);
    for (const [line, leaf] of c.leafUuid) this.leafUuid.set(at + line, leaf);
    for (const [line, problem] of c.usageProblems) this.usageProblems.set(at + line, problem);
    this.length = n;
    return at;
  }

  /**
   * Appends row `i` of `from` as a read without detail would have left it: its line state, tree
   * links, tool ids, kind, flags and response number, and nothing only items need (labels,
   * summaries, usage, payload measures). Its parent is found again when the rows are indexed.
   * `bytes` is the line's length when it is not the source line's (a fork's new session id).
   */
  addTreeRowOf(from: RecordTable, i: number, bytes = from.bytes[i]!): number {
    const row = this.add(bytes, from.state(i));
    this.kindCodes[row] = from.kindCodes[i]!;
    this.flags[row] = from.flags[i]!;
    this.response[row] = from.response[i]!;
    this.uuidHash[row] = from.uuidHash[i]!;
    this.parentHash[row] = from.parentHash[i]!;
    this.type[row] = from.type[i]!;
    this.uuid[row] = from.uuid[i]!;
    const parent = from.parentUuid[i]!;
    this.parentUuid[row] = parent;
    // A string parentUuid is looked up when the rows are indexed (uuid-index.ts); any other has none.
    this.parentLine[row] = parent === null ? NO_PARENT : PARENT_UNKNOWN;
    this.toolUseIds[row] = from.toolUseIds[i]!;
    this.toolResultIds[row] = from.toolResultIds[i]!;
    const leaf = from.leafUuid.get(i);
    if (leaf !== undefined) this.leafUuid.set(row, leaf);
    return row;
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
