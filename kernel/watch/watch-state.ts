/**
 * What a watch remembers between passes, per transcript: the file as it was when a decision was
 * made (size, mtime, inode) and the policy it was made under, the decision, and when a compaction of it was last published. A file
 * unchanged since a final decision is not read again; `min_interval_secs` counts from the last
 * compaction. The state is a cache of decisions, not a record anyone needs: a state file that
 * cannot be read is reported and replaced, never a reason to stop watching (a directory in its
 * place, which cannot be replaced, is refused before a pass runs), and one that cannot be saved
 * is a warning (state-save.ts).
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GobstopperError } from '../errors.js';
import { dataDir, type PathEnv } from '../paths.js';
import { ensurePrivateDir, replacePrivateFile } from '../vault/private-fs.js';

export const WATCH_STATE_SCHEMA = 'gobstopper/watch-state-v1';
/** Decisions older than this are made again even for an unchanged file (config may have changed), except a compaction. */
export const DECISION_TTL_SECS = 86_400;
/** At most this many transcripts are remembered; the oldest decisions go first. */
const MAX_ENTRIES = 10_000;
/** A state file larger than this is not read (the original's cap too). */
const MAX_STATE_BYTES = 4 * 1024 * 1024;

/** The file a decision was made about; any change to it makes the decision stale. */
export interface Fingerprint {
  bytes: number;
  mtime_ms: number;
  ino: number;
}

export interface WatchEntry {
  provider: string;
  session_id: string;
  fingerprint: Fingerprint;
  /** Digest of the policy the decision was made under: a config edit makes it stale too. */
  policy: string;
  /** What the last pass that looked at the file decided (a WatchDecision outcome). */
  outcome: string;
  /** Unix seconds of that decision. */
  decided_at: number;
  /** Unix seconds of the last compaction of this file a watch published. */
  applied_at?: number;
}

export interface WatchState {
  path: string;
  entries: Map<string, WatchEntry>;
  /** Why the stored state was not used, when it was not. */
  discarded: string | null;
  /** Keys of the loose [sessions] tables this watch has warned of (loose-tables.ts); never saved. */
  looseTablesSaid: Set<string>;
  /** Triggers this watch has said never fire (never-fires.ts); never saved. */
  neverFiresSaid: Set<string>;
  /** Why this watch found nothing to watch when it said so last (missing client homes, an empty discovery window), while it lasts; never saved. */
  nothingToWatchSaid: string | null;
  /** The code of the failure to save this state the watch last warned of (state-save.ts), while it lasts; never saved. */
  saveFailureSaid: string | null;
  /** The warning about unreadable receipts this watch said last (publications.ts), while it lasts; never saved. */
  receiptsSaid: string | null;
  /** The warning about transcripts and folders it could not read that this watch said last, while it lasts; never saved. */
  unreadableSaid: string | null;
  /** The sessions modified ahead of the clock this watch said last (their paths), while they last; never saved. */
  aheadSaid: string | null;
}

/** `all`, or the providers watched, so two watches of different providers keep apart. */
export function watchScope(providers: readonly string[] | undefined): string {
  return providers && providers.length > 0 ? [...new Set(providers)].sort().join('+') : 'all';
}

export function watchStatePath(env: PathEnv, scope: string): string {
  return join(dataDir(env), `watch-state-${scope}.json`);
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return a.bytes === b.bytes && a.mtime_ms === b.mtime_ms && a.ino === b.ino;
}

export async function fingerprintOf(path: string): Promise<Fingerprint | null> {
  try {
    const st = await lstat(path);
    return st.isFile() ? { bytes: st.size, mtime_ms: Math.trunc(st.mtimeMs), ino: st.ino } : null;
  } catch {
    return null;
  }
}

export async function loadWatchState(path: string, nowSecs: number): Promise<WatchState> {
  const fresh = (discarded: string | null): WatchState => ({ path, entries: new Map(), discarded, looseTablesSaid: new Set(), neverFiresSaid: new Set(), nothingToWatchSaid: null, saveFailureSaid: null, receiptsSaid: null, unreadableSaid: null, aheadSaid: null });
  let text: string;
  try {
    const st = await lstat(path);
    // Anything else is replaced when the state is saved, but a directory cannot be: found only
    // then, the forks the pass had published went unreported.
    if (st.isDirectory()) throw new GobstopperError('watch_state_blocked', `${path} is a directory where the watch keeps its state; move it aside`, { details: { file: path } });
    if (!st.isFile()) return fresh(`${path} is not a regular file`);
    if (st.size > MAX_STATE_BYTES) return fresh(`${path} is over ${MAX_STATE_BYTES} bytes`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof GobstopperError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fresh(null);
    return fresh(`${path} could not be read (${(error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fresh(`${path} is not valid JSON`);
  }
  const body = parsed as { schema?: unknown; entries?: unknown };
  if (body === null || typeof body !== 'object' || body.schema !== WATCH_STATE_SCHEMA || typeof body.entries !== 'object' || body.entries === null || Array.isArray(body.entries)) {
    return fresh(`${path} is not a ${WATCH_STATE_SCHEMA} file`);
  }
  const entries = new Map<string, WatchEntry>();
  for (const [key, value] of Object.entries(body.entries as Record<string, unknown>)) {
    const entry = asEntry(value);
    // Stamped in the future, an entry's age cannot be told (triage would not trust it either).
    const future = entry !== null && (entry.decided_at > nowSecs || (entry.applied_at ?? 0) > nowSecs);
    // A compaction stands as long as its file is unchanged (triage.ts says why); forgetLapsed drops it
    // once discovery no longer lists the file.
    if (entry && !future && (entry.outcome === 'compacted' || nowSecs - entry.decided_at <= DECISION_TTL_SECS)) entries.set(key, entry);
  }
  return { ...fresh(null), entries };
}

/**
 * Forgets decisions older than a day about files the pass did not list (gone, or out of the discovery
 * window): only a compaction is kept past a day, and only while its file is still there to settle.
 */
export function forgetLapsed(state: WatchState, listed: ReadonlySet<string>, nowSecs: number): void {
  for (const [key, entry] of state.entries) if (nowSecs - entry.decided_at > DECISION_TTL_SECS && !listed.has(key)) state.entries.delete(key);
}

export async function saveWatchState(state: WatchState): Promise<void> {
  const kept = [...state.entries].sort((a, b) => b[1].decided_at - a[1].decided_at).slice(0, MAX_ENTRIES);
  const body = { schema: WATCH_STATE_SCHEMA, entries: Object.fromEntries(kept) };
  await ensurePrivateDir(join(state.path, '..'));
  await replacePrivateFile(state.path, Buffer.from(JSON.stringify(body) + '\n'));
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** An entry read back, or null for anything not written by saveWatchState. */
function asEntry(value: unknown): WatchEntry | null {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const f = v.fingerprint as Record<string, unknown> | null | undefined;
  if (typeof v.provider !== 'string' || typeof v.session_id !== 'string' || typeof v.policy !== 'string' || typeof v.outcome !== 'string' || !isCount(v.decided_at)) return null;
  if (f === null || typeof f !== 'object' || !isCount(f.bytes) || !isCount(f.mtime_ms) || !isCount(f.ino)) return null;
  if (v.applied_at !== undefined && !isCount(v.applied_at)) return null;
  return {
    provider: v.provider,
    session_id: v.session_id,
    fingerprint: { bytes: f.bytes, mtime_ms: f.mtime_ms, ino: f.ino },
    policy: v.policy,
    outcome: v.outcome,
    decided_at: v.decided_at,
    ...(v.applied_at !== undefined ? { applied_at: v.applied_at as number } : {}),
  };
}
