/**
 * One streaming pass over a rollout: every physical line becomes one item, and the same pass
 * collects usage, identity, envelope invariants and call pairing. Each line is decoded and parsed
 * once; record objects are dropped as soon as their metadata is taken. An item sent to the model
 * costs ceil(bytes/4) of what the client sends for it (sent-bytes.ts), at least 1; a long tool
 * output costs what is left of it once the client cuts it (output-truncation.ts).
 *
 * The live window is the newest `compacted` record's replacement history plus everything after
 * it. Which compaction is newest is known only at the end, so items are built as if live and the
 * ones behind the window are zeroed when the pass finishes.
 */
import { decodeUtf8, estimateTokens, isBlankLine, readJsonl, type Finding, type JsonlRecord, type JsonlSummary, type TranscriptItem, type UsageSample } from '../../../sdk/index.js';
import { Code, FindingList } from './findings.js';
import { SessionIdentity } from './identity.js';
import { describeResponseItem, type CallSeen, type ItemDescription } from './items.js';
import { unsupportedReason } from './item-shapes.js';
import { EnvelopeChecker } from './ordinals.js';
import { ToolPairing } from './pairing.js';
import { isEligible, payloadSha256 } from './payload.js';
import { RecordType, isObject, isReadableCompaction, isSummaryCompaction, unreadableCompactionReason, type Json, type JsonObject } from './records.js';
import { historySentBytes, payloadSentBytes } from './sent-bytes.js';
import { DEFAULT_OUTPUT_TOKEN_LIMIT, keptOutputBytes, policyTokenLimit, sentAfterTruncation } from './output-truncation.js';
import { beginsWithBom } from './missing-meta.js';
import { parseRolloutName } from './rollout-name.js';
import { Rollbacks } from './rollbacks.js';
import { CHARS_PER_TOKEN } from '../../../sdk/tokens.js';
import { sanitizeLabel } from './text.js';
import { UsageTracker, usageFacts } from './usage.js';

export interface ScanResult {
  summary: JsonlSummary;
  items: TranscriptItem[];
  recordTypes: Record<string, number>;
  findings: Finding[];
  usage: UsageSample;
  identity: SessionIdentity;
  /** Some record had the Codex envelope (`type` + `payload` object). */
  codexLike: boolean;
  /** Line of the newest compaction; items before it are not live. */
  windowStart: number | null;
  ambiguous: boolean;
}

const RECORD_TYPE_MAX = 64;
/** The client keeps the newest user messages up to 20,000 tokens when it rebuilds a window from a summary. */
const CARRIED_USER_MESSAGE_BYTES = 20_000 * CHARS_PER_TOKEN;

const jsonBytes = (value: Json) => Buffer.byteLength(JSON.stringify(value), 'utf8');

export class RolloutScanner {
  readonly items: TranscriptItem[] = [];
  readonly recordTypes: Record<string, number> = Object.create(null) as Record<string, number>;
  readonly findings = new FindingList();
  readonly identity = new SessionIdentity();
  readonly usage = new UsageTracker();
  private readonly envelope = new EnvelopeChecker(this.findings);
  private pairing = new ToolPairing();
  private readonly calls = new Map<string, CallSeen>();
  private windowStart: number | null = null;
  private pendingBadLine: number | null = null;
  private readonly recordTypeNames = new Map<string, Map<string, string>>();
  private codexLike = false;
  /** The newest `turn_context.truncation_policy`, as a token budget. */
  private outputTokenLimit: number | null = null;
  /** Tool outputs sent to the model, to be cut to the budget known once the pass ends. */
  private readonly outputs: { item: TranscriptItem; sentBytes: number; outputBytes: number }[] = [];
  /**
   * Unsupported items in the live window so far. Only the window is resumed, so a readable
   * compaction drops those before it; what is left is reported when the pass ends.
   */
  private unsupportedInWindow: Finding[] = [];
  /** Bytes of the user messages in the window so far: a summary-only compaction carries them over. */
  private userMessageBytes = 0;
  private readonly rollbacks = new Rollbacks();

  /**
   * `detail: false` (verify) keeps what findings need (pairing, identity, envelope, the window)
   * and builds no items: no summaries, payload hashes or token estimates.
   */
  constructor(
    private readonly path: string,
    private readonly detail = true,
  ) {}

  readonly onRecord = (record: JsonlRecord): void => {
    const line = record.index;
    if (this.pendingBadLine !== null) {
      this.findings.add('error', Code.invalidJson, `line ${this.pendingBadLine + 1} is not valid JSON; the client skips it`, this.pendingBadLine);
      this.pendingBadLine = null;
    }
    if (isBlankLine(record.bytes)) {
      this.meta(line, 'blank', null);
      this.findings.add('warning', Code.blankLine, `line ${line + 1} is blank`, line);
      return;
    }
    let text: string;
    try {
      text = decodeUtf8(record.bytes, line);
    } catch (error) {
      // An unterminated final line cut inside a character is a torn write, not a bad file.
      if (record.terminated) {
        // A parse has no reading of such a file and refuses it; a verify says what is wrong with
        // it and goes on judging the other lines, as it does for every other broken line.
        if (this.detail) throw error;
        this.findings.add('error', Code.invalidUtf8, `line ${line + 1} is not valid UTF-8; the client cannot read the file`, line);
        return;
      }
      this.meta(line, 'invalid_json', null);
      this.pendingBadLine = line;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.meta(line, 'invalid_json', null);
      this.pendingBadLine = line;
      return;
    }
    if (!isObject(value) || typeof value.type !== 'string') {
      this.meta(line, 'invalid_record', null);
      this.findings.add('error', Code.invalidRecord, `line ${line + 1} is not a JSON object with a string type`, line);
      return;
    }
    this.record(line, record.bytes, value as JsonObject & { type: string });
  };

  private record(line: number, bytes: Buffer, value: JsonObject & { type: string }): void {
    const type = value.type;
    const payload = value.payload;
    if (isObject(payload)) this.codexLike = true;
    const subtype = isObject(payload) && typeof payload.type === 'string' && (type === RecordType.responseItem || type === RecordType.eventMsg) ? payload.type : null;
    const recordType = this.recordTypeName(type, subtype);
    this.recordTypes[recordType] = (this.recordTypes[recordType] ?? 0) + 1;

    if (type === RecordType.sessionMeta) this.identity.observe(line, payload, line === 0, this.findings);
    if (type === RecordType.turnContext && isObject(payload)) this.outputTokenLimit = policyTokenLimit(payload.truncation_policy) ?? this.outputTokenLimit;
    this.envelope.observe(line, type, Object.hasOwn(value, 'ordinal'), value.ordinal, value.timestamp, this.identity.paginated);

    if (type === RecordType.responseItem) {
      this.responseItem(line, bytes, payload, recordType);
      return;
    }
    if (type === RecordType.compacted) {
      this.compacted(line, bytes, payload, recordType);
      return;
    }
    if (subtype === 'thread_rolled_back' && type === RecordType.eventMsg && this.detail) this.rollbacks.rolledBack(line, (payload as JsonObject).num_turns);
    this.usage.apply(usageFacts(type, payload));
    this.meta(line, recordType, recordType);
  }

  /** `type` or `type:payload.type`, cached: a rollout uses a few dozen combinations. */
  private recordTypeName(type: string, subtype: string | null): string {
    let bySubtype = this.recordTypeNames.get(type);
    if (bySubtype === undefined) {
      bySubtype = new Map();
      // Bounded: a file of made-up record types must not grow the cache without end.
      if (this.recordTypeNames.size < 256) this.recordTypeNames.set(type, bySubtype);
    }
    const key = subtype ?? '';
    let name = bySubtype.get(key);
    if (name === undefined) {
      name = sanitizeLabel(subtype === null ? type : `${type}:${subtype}`, 'record').slice(0, RECORD_TYPE_MAX);
      if (bySubtype.size < 256) bySubtype.set(key, name);
    }
    return name;
  }

  private responseItem(line: number, bytes: Buffer, payload: Json | undefined, recordType: string): void {
    if (!isObject(payload) || typeof payload.type !== 'string') {
      this.findings.add('error', Code.invalidResponseItem, `response_item on line ${line + 1} has no payload object with a string type`, line);
      this.meta(line, 'response_item', recordType);
      return;
    }
    const unsupported = unsupportedReason(payload, payload.type);
    if (unsupported !== null) {
      this.unsupportedInWindow.push({ severity: 'warning', code: Code.unsupportedResponseItem, message: `response_item on line ${line + 1} ${unsupported}: an item the client does not support`, line_index: line });
    }
    const d = describeResponseItem(payload, payload.type, this.calls, this.detail);
    this.link(d, line);
    if (!this.detail) return;
    const sentBytes = d.sentToModel ? payloadSentBytes(bytes, payload) : 0;
    if (d.userTurn) {
      this.userMessageBytes += sentBytes;
      this.rollbacks.turnStarted(line);
    }
    const item: TranscriptItem = { line_index: line, kind: d.kind, est_tokens: d.sentToModel ? estimateTokens(sentBytes) : 0, label: d.label, record_type: recordType };
    if (d.summary) item.summary = d.summary;
    if (d.link?.id) item.tool_use_ids = [d.link.id];
    if (d.output) {
      if (d.sentToModel) this.outputs.push({ item, sentBytes, outputBytes: d.output.bytes });
      item.payload_sha256 = payloadSha256(d.output);
      if (isEligible(d.output)) {
        item.elidable_bytes = d.output.bytes;
        item.elidable_parts = 1;
      }
    }
    this.items.push(item);
  }

  private compacted(line: number, bytes: Buffer, payload: Json | undefined, recordType: string): void {
    if (isSummaryCompaction(payload)) {
      this.summaryCompaction(line, payload, recordType);
      return;
    }
    if (!isReadableCompaction(payload)) {
      // The client cannot read it as a compaction, so it does not reset the window either.
      this.findings.add('error', Code.malformedCompacted, `compacted record on line ${line + 1} ${unreadableCompactionReason(payload)}`, line);
      this.meta(line, 'compacted', recordType);
      return;
    }
    this.startWindow(line, payload);
    this.userMessageBytes = 0;
    let elidableBytes = 0;
    let parts = 0;
    // The client sends each call and output of the history as its own item, as if it had just
    // happened, so a prediction of what it sends counts them; an output whose call is nowhere in the
    // history (the client pairs them across it, in any order) is dropped, and not counted.
    const replayed = { tool_calls: 0, tool_results: 0 };
    const calls = new Set<string>();
    const outputs: string[] = [];
    const history = payload.replacement_history;
    let unsupported = 0;
    for (const entry of history) {
      if (unsupportedReason(entry, entry.type) !== null) unsupported += 1;
      const d = describeResponseItem(entry, entry.type, this.calls, this.detail);
      this.link(d, line);
      if (d.userTurn && this.detail) this.userMessageBytes += jsonBytes(entry);
      if (d.link?.role === 'call') {
        replayed.tool_calls += 1;
        if (d.link.id !== null) calls.add(d.link.id);
      } else if (d.link?.id != null) {
        outputs.push(d.link.id);
      }
      if (isEligible(d.output)) {
        elidableBytes += d.output.bytes;
        parts += 1;
      }
    }
    if (unsupported > 0) {
      const message = `compacted record on line ${line + 1} holds ${unsupported} replacement history item(s) of a type or shape the client does not support`;
      this.unsupportedInWindow.push({ severity: 'warning', code: Code.unsupportedResponseItem, message, line_index: line });
    }
    if (!this.detail) return;
    const item: TranscriptItem = {
      line_index: line,
      kind: parts > 0 ? 'tool_result' : 'system',
      est_tokens: estimateTokens(historySentBytes(bytes, history)),
      label: 'compacted',
      record_type: recordType,
      summary: `compaction: ${history.length} history items, ${parts} elidable outputs`,
    };
    if (parts > 0) {
      item.elidable_bytes = elidableBytes;
      item.elidable_parts = parts;
    }
    for (const id of outputs) if (calls.has(id)) replayed.tool_results += 1;
    if (replayed.tool_calls + replayed.tool_results > 0) item.replayed = replayed;
    this.items.push(item);
  }

  /**
   * A compaction without a replacement history: the client rebuilds the window from the user
   * messages before it (the newest of them, up to its budget) and the summary, so nothing else
   * before it is sent again.
   */
  private summaryCompaction(line: number, payload: JsonObject & { message: string }, recordType: string): void {
    this.startWindow(line, payload);
    if (!this.detail) return;
    this.userMessageBytes = Math.min(this.userMessageBytes, CARRIED_USER_MESSAGE_BYTES);
    this.items.push({
      line_index: line,
      kind: 'system',
      est_tokens: estimateTokens(this.userMessageBytes + Buffer.byteLength(payload.message, 'utf8')),
      label: 'compacted',
      record_type: recordType,
      summary: 'compaction: a summary, no history items',
    });
  }

  /** What every compaction the client loads does: the items before it leave the context. */
  private startWindow(line: number, payload: JsonObject): void {
    this.windowStart = line;
    this.rollbacks.windowStarted();
    this.pairing = new ToolPairing();
    this.unsupportedInWindow = [];
    this.usage.apply(usageFacts(RecordType.compacted, payload));
  }

  private link(d: ItemDescription, line: number): void {
    if (d.link) {
      if (d.link.id === null) {
        this.findings.add('error', Code.invalidCallId, `tool ${d.link.role} on line ${line + 1} has no usable call_id`, line);
      } else if (d.link.role === 'call') {
        this.pairing.call(d.link.id, d.link.family, line);
      } else {
        this.pairing.output(d.link.id, d.link.family, line);
      }
    }
    if (d.userTurn) this.pairing.userTurn();
  }

  private meta(line: number, label: string, recordType: string | null): void {
    if (!this.detail) return;
    const item: TranscriptItem = { line_index: line, kind: 'meta', est_tokens: 0, label };
    if (recordType !== null) item.record_type = recordType;
    this.items.push(item);
  }

  finish(summary: JsonlSummary): ScanResult {
    if (this.pendingBadLine !== null) {
      this.findings.add('warning', Code.tornFinalLine, `the final line (${this.pendingBadLine + 1}) is not valid JSON; a write may have been cut off`, this.pendingBadLine);
      this.pendingBadLine = null;
    }
    this.envelope.finish();
    this.findings.addAll(this.pairing.finish());
    this.findings.addAll(this.unsupportedInWindow);
    const kept = keptOutputBytes(this.outputTokenLimit ?? DEFAULT_OUTPUT_TOKEN_LIMIT);
    for (const o of this.outputs) if (o.outputBytes > kept) o.item.est_tokens = estimateTokens(sentAfterTruncation(o.sentBytes, o.outputBytes, kept));
    const first = this.identity.first;
    // Named as Claude names its composites. A history_mode the client rejects has its own error.
    const threads = this.identity.mixedThreads;
    if (threads > 0) this.findings.add('error', Code.compositeFile, `session_meta records name ${threads} threads: a collection of several threads' records, not a session`, null);
    if (first === null) {
      if (this.codexLike) {
        const why = beginsWithBom(this.path) ? ' (its first line begins with a UTF-8 byte-order mark)' : '';
        this.findings.add('error', Code.missingSessionMeta, `no session_meta record${why}: the client cannot identify this thread`, null);
      }
    } else {
      const name = parseRolloutName(this.path);
      if (name === null) {
        this.findings.add('info', Code.fileNameWithoutId, 'the file name does not carry a thread id, so the client cannot find it by id', null);
      } else if (first.id !== null && name.id !== first.id) {
        this.findings.add('error', Code.fileNameIdMismatch, `the file name's id differs from session_meta's id on line ${first.line + 1}; the client refuses to resume`, first.line);
      }
    }
    const ambiguous = this.pairing.ambiguous;
    if (this.windowStart !== null || ambiguous) {
      const end = ambiguous ? this.items.length : this.windowStart!;
      for (let i = 0; i < this.items.length && this.items[i]!.line_index < end; i += 1) dropFromContext(this.items[i]!);
    }
    this.rollbacks.dropFrom(this.items, dropFromContext);
    if (ambiguous) this.usage.markAmbiguous();
    return {
      summary,
      items: this.items,
      recordTypes: this.recordTypes,
      findings: this.findings.toArray(),
      usage: this.usage.sample(),
      identity: this.identity,
      codexLike: this.codexLike,
      windowStart: this.windowStart,
      ambiguous,
    };
  }
}

function dropFromContext(item: TranscriptItem): void {
  item.est_tokens = 0;
  delete item.elidable_bytes;
  delete item.elidable_parts;
  delete item.replayed;
}

export interface ScanLimits {
  maxBytes: number;
  maxRecords: number;
  /** Lines longer than this are refused before they are held whole. */
  maxLineBytes: number;
  /** false: not hashed; the summary's sha256 is ''. Default true. */
  hash?: boolean;
}

export async function scanRollout(path: string, limits: ScanLimits, detail = true): Promise<ScanResult> {
  const scanner = new RolloutScanner(path, detail);
  const summary = await readJsonl(path, limits, scanner.onRecord);
  return scanner.finish(summary);
}
