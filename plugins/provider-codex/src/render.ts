/**
 * provider/render: the candidate rollout, written only into the host's staging file, in one
 * streaming read bound to the source's hash. Lines keep their count and order; a line is parsed
 * only when an edit may change it (an elision, a fork's session_meta), and then only the members
 * that change are written anew (member-splice.ts); every other line is copied byte for byte after a
 * look at its envelope (raw bytes, no parse). A state card is
 * appended as a user message in the shape the client keeps: a real timestamp, and on rollouts that
 * number their records the next ordinal.
 */
import { closeSync, constants as fsConstants, openSync, readSync } from 'node:fs';
import {
  MAX_DIGEST_BYTES,
  StagingWriter,
  decodeUtf8,
  digestTextBytes,
  endsWithCr,
  invalidInput,
  isBlankLine,
  readJsonl,
  renderStateCard,
  sourceChanged,
  type DigestBlock,
  type Edit,
  type JsonlRecord,
  type ProviderRenderParams,
  type ProviderRenderResult,
} from '../../../sdk/index.js';
import { elideRecord, type StubFor } from './elide.js';
import { readRawEnvelope } from './envelope-bytes.js';
import { rewrittenLine, type MemberChange } from './member-splice.js';
import { missingSessionMetaMessage } from './missing-meta.js';
import { RecordType, isObject, type JsonObject } from './records.js';
import { isValidNewSessionId } from './rollout-name.js';
import { absolutePath, readStable, resolveLimits, toPluginError } from './source.js';

interface RenderPlan {
  stubs: Map<number, StubFor>;
  digest: DigestBlock | null;
}

const ONE_LINE = /^[^\r\n]*$/;

function templateStub(template: string): StubFor {
  return (bytes) => template.replaceAll('{bytes}', String(bytes)).replaceAll('{kind}', 'tool output');
}

/** Reads the edits; control-plane edits (provider_compact, cache_edit) change no bytes. */
function readPlan(edits: Edit[]): RenderPlan {
  const stubs = new Map<number, StubFor>();
  let digest: DigestBlock | null = null;
  for (const edit of edits) {
    if (edit.op === 'elide') {
      if (!ONE_LINE.test(edit.stub_template)) throw invalidInput('stub_template must be one line');
      for (const line of edit.line_indexes) {
        if (stubs.has(line)) throw invalidInput(`line ${line} is elided twice`);
        const own = edit.per_item_stubs?.[String(line)];
        if (own !== undefined && !ONE_LINE.test(own)) throw invalidInput(`the stub for line ${line} must be one line`);
        stubs.set(line, own !== undefined ? () => own : templateStub(edit.stub_template));
      }
    } else if (edit.op === 'inject_digest') {
      if (digest !== null) throw invalidInput('a plan may inject one state card');
      if (digestTextBytes(edit.digest) > MAX_DIGEST_BYTES) throw invalidInput(`the state card is over ${MAX_DIGEST_BYTES} bytes`);
      digest = edit.digest;
    }
  }
  return { stubs, digest };
}

function isoTimestamp(now: string): string {
  const at = new Date(now);
  if (Number.isNaN(at.getTime())) throw invalidInput('now must be an ISO-8601 time');
  return at.toISOString();
}

/** What the pass learns while copying, for the append at the end. */
class CopyState {
  sourceId: string | null = null;
  paginated = false;
  sawOrdinal = false;
  lastOrdinal: number | null = null;
  sawSessionMeta = false;
  /** The last line ended in CRLF: lines the render appends do too. */
  lastLineCr = false;
  /** Where the last line lies in the source, and whether it parsed (null: copied without a parse). */
  lastOffset = 0;
  lastLength = 0;
  lastParsed: boolean | null = null;
  elided = 0;
  readonly seenTargets = new Set<number>();
}

function rewriteSessionIds(payload: JsonObject, sourceId: string | null, newId: string, first: boolean, changes: MemberChange[]): void {
  // Only the thread's own meta records move to the new id; a copied parent meta keeps its id.
  const own = first || payload.id === sourceId || payload.session_id === sourceId;
  if (!own) return;
  for (const key of ['id', 'session_id'] as const) {
    if (typeof payload[key] !== 'string') continue;
    payload[key] = newId;
    changes.push({ path: ['payload', key], value: newId });
  }
}

export async function render(params: ProviderRenderParams): Promise<ProviderRenderResult> {
  const plan = readPlan(params.edits);
  const timestamp = plan.digest ? isoTimestamp(params.now) : null;
  const newId = params.new_session_id ?? null;
  if (newId !== null && !isValidNewSessionId(newId)) throw invalidInput('new_session_id must be 1-128 letters, digits or dashes');
  const path = absolutePath(params.path);
  const limits = resolveLimits({});

  let writer: StagingWriter;
  try {
    writer = new StagingWriter(params.staging_path);
  } catch (error) {
    throw invalidInput(`staging path refused: ${(error as Error).message}`);
  }
  const state = new CopyState();
  let recordCount = 0;

  const onRecord = (record: JsonlRecord) => {
    recordCount += 1;
    // A re-serialized line keeps its own line ending (a CRLF file stays CRLF where it is rewritten).
    const cr = endsWithCr(record.bytes);
    state.lastLineCr = cr;
    state.lastOffset = record.offset;
    state.lastLength = record.bytes.length;
    state.lastParsed = null;
    const stub = plan.stubs.get(record.index);
    // A card is appended after the last line, so that line must end with a newline.
    const newline = record.terminated || plan.digest !== null;
    let value: unknown;
    let parsed = false;
    if (stub === undefined && record.bytes.length > 0) {
      // A copied line is not parsed: its envelope says all the append needs, unless it is a
      // session_meta record (the fork moves those to the new id) or the walk cannot follow it.
      const envelope = readRawEnvelope(record.bytes);
      if (envelope !== null && !envelope.sessionMeta) {
        observeOrdinal(state, envelope.hasOrdinal, envelope.ordinal);
        writer.writeRecord(record.bytes, newline);
        return;
      }
    }
    if (record.bytes.length > 0) {
      try {
        value = JSON.parse(decodeUtf8(record.bytes, record.index));
        parsed = true;
      } catch {
        parsed = false;
      }
      state.lastParsed = parsed || isBlankLine(record.bytes);
    }
    const changes: MemberChange[] = [];
    if (parsed && isObject(value)) observeAndRewrite(value, state, newId, changes);
    if (stub) {
      state.seenTargets.add(record.index);
      const outcome = parsed ? elideRecord(value, stub, changes) : 'not_elidable';
      if (outcome === 'not_elidable') throw invalidInput(`line ${record.index} holds no tool output a stub can replace`);
      if (outcome === 'elided') state.elided += 1;
    }
    const bytes = changes.length > 0 ? rewrittenLine(record.bytes, value as JsonObject, changes, cr) : record.bytes;
    writer.writeRecord(bytes, newline);
  };

  try {
    const { result: summary } = await readStable(path, () => readJsonl(path, limits, onRecord), (s) => s.bytes);
    if (summary.sha256 !== params.source_sha256) throw sourceChanged(`${path} no longer has the sha256 the plan was made for`);
    const missing = [...plan.stubs.keys()].filter((line) => !state.seenTargets.has(line));
    if (missing.length > 0) throw invalidInput(`line ${missing[0]} is past the end of the rollout (${recordCount} records)`);
    if (newId !== null && !state.sawSessionMeta) throw invalidInput(missingSessionMetaMessage(path));
    let appended = 0;
    if (plan.digest && timestamp) {
      // A final line that is not JSON is a torn write, with its newline or without; after a card it
      // would be a broken line in the middle of the file, which the client skips as an error.
      if (!finalLineParses(path, state)) throw invalidInput(`the final line (${recordCount}) is torn; refusing to append after it`);
      writer.writeRecord(JSON.stringify(digestRecord(renderStateCard(plan.digest), timestamp, state)) + (state.lastLineCr ? '\r' : ''), true);
      appended += 1;
    }
    const out = writer.finish();
    return { ...out, elided_records: state.elided, appended_records: appended };
  } catch (error) {
    writer.abort();
    throw toPluginError(error, path);
  }
}

/**
 * Whether the source's last line is JSON (or blank: a blank line is a warning wherever it stands).
 * A line copied without a parse is read back by its place in the file, which the read just hashed.
 */
function finalLineParses(path: string, state: CopyState): boolean {
  if (state.lastParsed !== null) return state.lastParsed;
  const bytes = Buffer.alloc(state.lastLength);
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    if (readSync(fd, bytes, 0, bytes.length, state.lastOffset) !== bytes.length) return false;
  } finally {
    closeSync(fd);
  }
  if (isBlankLine(bytes)) return true;
  try {
    JSON.parse(decodeUtf8(bytes, 0));
    return true;
  } catch {
    return false;
  }
}

/** Keeps the highest ordinal seen, and whether any record has one. */
function observeOrdinal(state: CopyState, hasOrdinal: boolean, ordinal: unknown): void {
  if (!hasOrdinal) return;
  state.sawOrdinal = true;
  if (typeof ordinal === 'number' && Number.isSafeInteger(ordinal) && ordinal >= 0 && (state.lastOrdinal === null || ordinal > state.lastOrdinal)) state.lastOrdinal = ordinal;
}

/** Tracks identity and ordinals, and moves the thread's meta records to the new id (listed in `changes`). */
function observeAndRewrite(value: JsonObject, state: CopyState, newId: string | null, changes: MemberChange[]): void {
  observeOrdinal(state, Object.hasOwn(value, 'ordinal'), value.ordinal);
  if (value.type !== RecordType.sessionMeta || !isObject(value.payload)) return;
  const payload = value.payload;
  const first = !state.sawSessionMeta;
  if (first) {
    state.sawSessionMeta = true;
    state.sourceId = typeof payload.id === 'string' ? payload.id : typeof payload.session_id === 'string' ? payload.session_id : null;
    state.paginated = payload.history_mode === 'paginated';
  }
  if (newId !== null) rewriteSessionIds(payload, state.sourceId, newId, first, changes);
}

/** The card as a user message; numbered after the last record when the rollout numbers records. */
function digestRecord(card: string, timestamp: string, state: CopyState): JsonObject {
  const payload: JsonObject = { type: 'message', role: 'user', content: [{ type: 'input_text', text: card }] };
  if (state.paginated || state.sawOrdinal) {
    return { timestamp, ordinal: (state.lastOrdinal ?? -1) + 1, type: RecordType.responseItem, payload };
  }
  return { timestamp, type: RecordType.responseItem, payload };
}
