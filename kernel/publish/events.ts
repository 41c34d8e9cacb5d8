/**
 * The compaction-events log `<data>/events.jsonl` (gobstopper/compaction-events-v1): a best-effort
 * observation log of numbers, closed codes and digests. Writing validates every event (an invalid
 * one is refused, not written) and never fails the command that reports it: problems come back as
 * a warning. The log rotates to `events.1.jsonl` past 8 MiB; readers take the older generation first.
 */
import { constants as fsConstants } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { validateCompactionEvent } from '../../schemas/generated/validators.js';
import type { CompactionEvent, TokenObservation } from '../../schemas/generated/types.js';
import { eventsLogPath, type PathEnv } from '../paths.js';
import { FileLock } from '../vault/lock.js';
import { checkPrivateFile, ensurePrivateDir, FileTooLargeError, readPrivateFile } from '../vault/private-fs.js';
import { MIB } from '../../sdk/limits.js';
import { unreadableReason } from '../../sdk/unreadable.js';
import { isBlankLine } from '../../sdk/jsonl.js';

export type { CompactionEvent, TokenObservation };

export const EVENTS_SCHEMA = 'gobstopper/compaction-events-v1';
export const ROTATE_BYTES = 8 * MIB;
export const MAX_LOG_BYTES = 128 * MIB;
export const MAX_EVENT_LINE_BYTES = 16 * 1024;
const EVENTS_LOCK_WAIT_MS = 2000;

export function rotatedLogPath(live: string): string {
  return join(dirname(live), 'events.1.jsonl');
}

function observationProblem(o: TokenObservation, name: string): string | null {
  if ((o.context_state === 'reported') !== (o.context_tokens !== undefined)) return `${name}.context_tokens must be present exactly when context_state is reported`;
  const full = o.lifetime_scope === 'full';
  const hasInput = o.lifetime_input_tokens !== undefined;
  const hasCached = o.lifetime_cached_tokens !== undefined;
  if (full && !(hasInput && hasCached)) return `${name}: lifetime_scope full needs lifetime_input_tokens and lifetime_cached_tokens`;
  if (!full && (hasInput || hasCached)) return `${name}: lifetime counts are only recorded with lifetime_scope full`;
  if (full && o.lifetime_cached_tokens! > o.lifetime_input_tokens!) return `${name}: lifetime_cached_tokens exceeds lifetime_input_tokens`;
  return null;
}

/** Why an event must not be written (or read back), or null. */
export function eventProblem(value: unknown): string | null {
  if (!validateCompactionEvent(value)) {
    const first = validateCompactionEvent.errors?.[0];
    return first ? `${first.instancePath || 'event'} ${first.message ?? 'is invalid'}` : 'does not match the event schema';
  }
  const e = value as CompactionEvent;
  if (e.est_reclaimed_tokens !== Math.max(0, e.context_tokens_before - e.context_tokens_after)) return 'est_reclaimed_tokens must equal context_tokens_before - context_tokens_after (or 0)';
  if (e.retention_total !== undefined && (e.retention_retained! > e.retention_total || e.retention_lexical! > e.retention_total)) {
    return 'retention_retained and retention_lexical must not exceed retention_total';
  }
  for (const [name, o] of [['before_observation', e.before_observation], ['after_observation', e.after_observation]] as const) {
    const problem = o ? observationProblem(o, name) : null;
    if (problem) return problem;
  }
  return null;
}

export interface AppendResult {
  written: boolean;
  /** Why the event was not written, or what went wrong beside writing it; the caller prints it and carries on. */
  warning?: string;
}

export interface EventLogOptions {
  /** Overrides `<data>/events.jsonl`. */
  path?: string;
  env?: PathEnv;
}

/** Appends `line`; returns why the log could not be rotated first, when it could not (the line is still written). */
async function appendLine(live: string, line: Buffer): Promise<string | null> {
  const flags = fsConstants.O_RDWR | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
  let handle = await open(live, flags, 0o600);
  let unrotated: string | null = null;
  try {
    let st = await handle.stat();
    checkPrivateFile(live, st);
    if (st.size >= ROTATE_BYTES) {
      const rotated = rotatedLogPath(live);
      // A rotation that fails (a directory where the older generation goes) must not cost the event:
      // it goes into the live log, and the warning says what is in the way.
      const moved = await rename(live, rotated).then(
        () => true,
        (error: unknown) => {
          unrotated = `the events log could not be rotated to ${rotated} (${unreadableReason(error)}; move that aside), so it grows past ${ROTATE_BYTES / MIB} MiB`;
          return false;
        },
      );
      if (moved) {
        await handle.close();
        handle = await open(live, flags, 0o600);
        st = await handle.stat();
        checkPrivateFile(live, st);
      }
    }
    // A torn last line (a crash mid-write) must not swallow this event too: end it first.
    if (st.size > 0) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, st.size - 1);
      if (last[0] !== 0x0a) line = Buffer.concat([Buffer.from('\n'), line]);
    }
    let offset = 0;
    while (offset < line.length) offset += (await handle.write(line, offset, line.length - offset, null)).bytesWritten;
  } finally {
    await handle.close();
  }
  return unrotated;
}

/** Validates and appends one event. Never throws: a failure is returned as a warning. */
export async function appendEvent(event: CompactionEvent, options: EventLogOptions = {}): Promise<AppendResult> {
  const problem = eventProblem(event);
  if (problem) return { written: false, warning: `event not recorded: it violates the event schema (${problem})` };
  const line = Buffer.from(JSON.stringify(event) + '\n', 'utf8');
  if (line.length > MAX_EVENT_LINE_BYTES) return { written: false, warning: `event not recorded: it is longer than ${MAX_EVENT_LINE_BYTES} bytes` };
  const live = options.path ?? eventsLogPath(options.env ?? process.env);
  try {
    await ensurePrivateDir(dirname(live));
    const lock = await FileLock.acquire(`${live}.lock`, { waitMs: EVENTS_LOCK_WAIT_MS, what: 'the events log' });
    let unrotated: string | null;
    try {
      unrotated = await appendLine(live, line);
    } finally {
      await lock.release();
    }
    return unrotated === null ? { written: true } : { written: true, warning: unrotated };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { written: false, warning: `event not recorded: ${message}` };
  }
}

export interface ReadEventsResult {
  events: CompactionEvent[];
  /** Over-long, unparseable or invalid lines (blank ones are not counted). */
  skipped: number;
  /** Log files that exist but could not be read (unsafe, oversized, unreadable), and why. */
  unreadable: Array<{ file: string; reason: string }>;
}

function parseLog(data: Buffer, into: ReadEventsResult): void {
  let start = 0;
  while (start < data.length) {
    let nl = data.indexOf(0x0a, start);
    if (nl === -1) nl = data.length;
    const line = data.subarray(start, nl);
    start = nl + 1;
    // A blank line (an editor's trailing newline) holds no event and loses none.
    if (isBlankLine(line)) continue;
    if (line.length > MAX_EVENT_LINE_BYTES) {
      into.skipped += 1;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line.toString('utf8'));
    } catch {
      into.skipped += 1;
      continue;
    }
    if (eventProblem(value)) into.skipped += 1;
    else into.events.push(value as CompactionEvent);
  }
}

/** An event of a transcript compaction that was applied: what adaptive back-off, the watch's rate limit and bench's chart count. */
export function isAppliedCompaction(e: CompactionEvent): boolean {
  return e.outcome === 'applied' && e.action === 'transcript_compact';
}

/** Whether the log holds an `applied` event for the fork whose retained bytes are `outputManifest`. */
export async function hasAppliedEvent(outputManifest: string, options: EventLogOptions = {}): Promise<boolean> {
  const { events } = await readEvents(options);
  return events.some((e) => e.outcome === 'applied' && e.snapshot_after_sha256 === outputManifest);
}

/** Why a log could not be read, in words: the size limit, the system's refusal, or gobstopper's own check. */
function whyUnreadable(error: unknown, file: string): string {
  if (error instanceof FileTooLargeError) return `it is over ${MAX_LOG_BYTES} bytes`;
  if (/^E[A-Z]+$/.test(String((error as NodeJS.ErrnoException | null)?.code ?? ''))) return unreadableReason(error);
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
}

/**
 * Both generations, older first. A missing log is empty; an unsafe or oversized one is listed in
 * `unreadable`, for the caller to judge (planning reads past it; `events` refuses).
 */
export async function readEvents(options: EventLogOptions = {}): Promise<ReadEventsResult> {
  const live = options.path ?? eventsLogPath(options.env ?? process.env);
  const result: ReadEventsResult = { events: [], skipped: 0, unreadable: [] };
  for (const file of [rotatedLogPath(live), live]) {
    let data: Buffer | null;
    try {
      data = await readPrivateFile(file, MAX_LOG_BYTES);
    } catch (error) {
      result.unreadable.push({ file, reason: whyUnreadable(error, file) });
      continue;
    }
    if (data) parseLog(data, result);
  }
  return result;
}
