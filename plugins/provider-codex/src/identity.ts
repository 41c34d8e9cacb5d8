/**
 * Who a rollout is: its `session_meta` records. The first one names the thread; later ones with
 * other ids mean the file mixes threads. Shared by the full parse and the head-only reads.
 */
import type { SessionKind } from '../../../sdk/index.js';
import { Code } from './findings.js';
import type { FindingList } from './findings.js';
import { HISTORY_MODES, isObject, type Json, type JsonObject } from './records.js';

export interface SessionMetaInfo {
  line: number;
  id: string | null;
  /** `payload.session_id`, present in newer builds beside `payload.id`. */
  sessionIdField: string | null;
  cwd: string | null;
  historyMode: string | null;
  subagent: boolean;
  /** The thread a sub-agent belongs to, when its session_meta names one the client could resume. */
  parentThreadId: string | null;
  /** A native fork that reads its earlier history from the parent's file at resume time. */
  historyBase: boolean;
  /** The thread whose rollout a native fork reads, when its history_base names one. */
  historyBaseThreadId: string | null;
}

/**
 * The types the client's reader requires of the session_meta fields a rollout carries, as Codex
 * 0.171 was seen to enforce them (docs/design.md): with any of these present and of another type it
 * cannot read the record, says the file "does not start with session metadata", and does not resume
 * the thread. Fields it does not read (`instructions`) and absent fields are not judged here.
 */
const isString = (v: Json) => typeof v === 'string';
const stringOrNull = (v: Json) => v === null || typeof v === 'string';
const GIT_FIELDS = ['commit_hash', 'branch', 'repository_url'];
const META_FIELD_TYPES: [field: string, type: string, accepts: (v: Json) => boolean][] = [
  ['timestamp', 'a string', isString],
  ['cwd', 'a string', isString],
  ['originator', 'a string', isString],
  ['cli_version', 'a string', isString],
  ['source', 'a string or an object with the single key subagent', (v) => isString(v) || (isObject(v) && Object.keys(v).length === 1 && Object.hasOwn(v, 'subagent'))],
  ['model_provider', 'a string or null', stringOrNull],
  ['base_instructions', 'an object with a string text, or null', (v) => v === null || (isObject(v) && typeof v.text === 'string')],
  ['git', 'an object whose commit_hash, branch and repository_url are strings or null, or null', (v) => v === null || (isObject(v) && GIT_FIELDS.every((k) => v[k] === undefined || stringOrNull(v[k]!)))],
];

/**
 * The session_meta fields the client cannot read the record without, as Codex 0.171 was seen to
 * refuse it (docs/design.md): with any of these absent it says the file "does not start with session
 * metadata" and does not resume the thread, whatever else the record holds. `session_id` does not
 * stand in for `id`. Every other field (`source`, `model_provider`, `git`, `history_mode`, ...) may
 * be absent.
 */
const REQUIRED_META_FIELDS = ['id', 'timestamp', 'cwd', 'originator', 'cli_version'];

/** The required session_meta fields the payload lacks, in the order the client writes them. */
function missingMetaFields(payload: JsonObject): string[] {
  return REQUIRED_META_FIELDS.filter((field) => !Object.hasOwn(payload, field));
}

/** The session_meta fields present with a type the client cannot read, each with the type it needs. */
function mistypedMetaFields(payload: JsonObject): { field: string; type: string }[] {
  return META_FIELD_TYPES.filter(([field, , accepts]) => Object.hasOwn(payload, field) && !accepts(payload[field]!)).map(([field, type]) => ({ field, type }));
}

const idString = (v: Json | undefined) => (typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : null);

/** A thread id fit to print in a command: what the client names its rollouts with. */
const threadId = (v: Json | undefined) => (typeof v === 'string' && /^[0-9A-Za-z-]{1,128}$/.test(v) ? v : null);

/** The parent a sub-agent is resumed through: `parent_thread_id`, else the one its spawn names. */
function parentThreadOf(payload: JsonObject, source: Json | undefined): string | null {
  const spawn = isObject(source) && isObject(source.subagent) ? source.subagent.thread_spawn : undefined;
  return threadId(payload.parent_thread_id) ?? (isObject(spawn) ? threadId(spawn.parent_thread_id) : null);
}

export function readSessionMeta(line: number, payload: JsonObject): SessionMetaInfo {
  const source = payload.source;
  return {
    line,
    id: idString(payload.id) ?? idString(payload.session_id),
    sessionIdField: idString(payload.session_id),
    cwd: typeof payload.cwd === 'string' && payload.cwd.length <= 4096 ? payload.cwd : null,
    historyMode: payload.history_mode === undefined || payload.history_mode === null ? null : String(payload.history_mode),
    subagent: isObject(source) && source.subagent !== undefined,
    parentThreadId: parentThreadOf(payload, source),
    historyBase: isObject(payload.history_base),
    historyBaseThreadId: isObject(payload.history_base) ? threadId(payload.history_base.thread_id) : null,
  };
}

export class SessionIdentity {
  first: SessionMetaInfo | null = null;
  /**
   * Why the client cannot read the first session_meta although it is there (a field it needs is
   * missing or of the wrong type); it then answers as if the rollout had none ("does not start with
   * session metadata").
   */
  firstUnreadable: string | null = null;
  private readonly foreignIds = new Set<string>();
  private metaCount = 0;
  invalidHistoryMode = false;

  /** `firstRecord`: this is the first parseable record of the file. */
  observe(line: number, payload: Json | undefined, firstRecord: boolean, findings: FindingList): void {
    this.metaCount += 1;
    if (!isObject(payload)) {
      findings.add('error', Code.invalidSessionMeta, `session_meta on line ${line + 1} has no payload object`, line);
      return;
    }
    const info = readSessionMeta(line, payload);
    if (this.first === null) {
      this.first = info;
      if (!firstRecord) findings.add('error', Code.sessionMetaNotFirst, `the first session_meta is on line ${line + 1}; the client expects it first`, line);
      const unreadable = [
        ...missingMetaFields(payload).map((field) => `session_meta on line ${line + 1} lacks the ${field} field the client needs to read it`),
        // Only the id field counts: the client does not read session_id in its place.
        ...(Object.hasOwn(payload, 'id') && idString(payload.id) === null ? [`session_meta on line ${line + 1} has no string id`] : []),
        ...mistypedMetaFields(payload).map(({ field, type }) => `session_meta on line ${line + 1} has a ${field} value of a type the client cannot read: it must be ${type}`),
      ];
      for (const message of unreadable) findings.add('error', Code.invalidSessionMeta, message, line);
      this.firstUnreadable = unreadable[0] ?? null;
      if (info.historyMode !== null && !HISTORY_MODES.has(info.historyMode)) {
        this.invalidHistoryMode = true;
        findings.add('error', Code.invalidHistoryMode, `session_meta on line ${line + 1} has a history_mode the client rejects (expected legacy or paginated)`, line);
      }
      if (info.subagent) {
        // Without the parent's id the user has no way to the thread they can resume.
        const parent = info.parentThreadId === null ? 'its parent' : `its parent: codex resume ${info.parentThreadId}`;
        findings.add('warning', Code.subagentThread, `this is a sub-agent thread; the client resumes it only through ${parent}`, line);
      }
      if (info.historyBase) {
        // The parent's file must stay as it is for this thread to resume whole: say which it is.
        const parent = info.historyBaseThreadId === null ? 'the parent rollout' : `the rollout of thread ${info.historyBaseThreadId}`;
        findings.add('warning', Code.dependsOnParentRollout, `this native fork reads its earlier history from ${parent} at resume time`, line);
      }
      return;
    }
    if (info.id !== null && info.id !== this.first.id) {
      this.foreignIds.add(info.id);
      findings.add('warning', Code.multipleSessionMeta, `session_meta on line ${line + 1} names another thread than line ${this.first.line + 1}`, line);
    }
  }

  get paginated(): boolean {
    return this.first?.historyMode === 'paginated';
  }

  /**
   * How many threads the session_meta records name, when that makes the file a collection of
   * several threads' records; 0 otherwise. One other thread is not enough: a fork may carry a copy
   * of its parent's meta record.
   */
  get mixedThreads(): number {
    return this.foreignIds.size >= 2 ? this.foreignIds.size + 1 : 0;
  }

  /** Records of several threads, or a mode the client rejects: shapes collected, not a session. */
  kind(): SessionKind {
    if (this.invalidHistoryMode || this.mixedThreads > 0) return 'composite';
    if (this.first?.subagent) return 'subagent';
    return 'session';
  }

  get sessionMetaCount(): number {
    return this.metaCount;
  }
}
