/** `detect`: every session the providers can see, newest first, from tail reads only. */
import type * as T from '../../schemas/generated/types.js';
import { HOT_SECS } from '../../sdk/limits.js';
import { formatAge } from '../text/human.js';
import type { ProviderHomes, ProviderPort } from './provider-port.js';
import { discoverAll } from './selector.js';
import type { SearchedStore } from './missing-stores.js';

export function isActive(mtimeMs: number, now = Date.now()): boolean {
  return now - mtimeMs <= HOT_SECS * 1000;
}

export function toDetectRow(found: T.DiscoveredSession, now = Date.now()): T.DetectRow {
  const { session, usage } = found;
  const mtime = session.mtime_ms ?? now;
  const reported = usage?.context_state === 'reported' && !usage.context_reason;
  const estimated = found.estimated_context_tokens ?? null;
  const lifetimeKnown = usage && usage.lifetime_scope !== 'absent';
  return {
    provider: session.provider,
    session_id: session.session_id,
    path: session.path,
    cwd: session.cwd ?? null,
    title: session.title ?? null,
    active: isActive(mtime, now),
    age_secs: Math.max(0, Math.round((now - mtime) / 1000)),
    bytes: session.bytes ?? 0,
    context_tokens: reported ? usage!.context_tokens : estimated,
    context_basis: reported ? 'reported' : estimated !== null ? 'estimated' : 'unknown',
    context_state: usage?.context_state ?? 'absent',
    model: usage?.model ?? null,
    model_context_window: usage?.model_context_window ?? null,
    lifetime_input_tokens: lifetimeKnown ? usage!.lifetime_input_tokens : null,
    lifetime_cached_tokens: lifetimeKnown ? usage!.lifetime_cached_tokens : null,
    lifetime_scope: usage?.lifetime_scope ?? 'absent',
  };
}

export interface DetectedSessions {
  rows: T.DetectRow[];
  /** Paths of the transcripts found but not listed, newest first: composites and sub-agent threads, which no client resumes as sessions. */
  unlisted: string[];
  /** Transcript files found but not read, and whether a provider listed as many as it may. */
  unreadable: T.UnreadableTranscript[];
  unreadableCapped: boolean;
  /** The folders each provider looked in, as far as it said. */
  searched: SearchedStore[];
  /** Listed sessions whose files were modified later than now by this machine's clock, most ahead first. */
  ahead: { path: string; secs: number }[];
}

/**
 * A file's timestamp may run a little ahead of the clock read just after (a network file system's
 * server); past this it was set by another clock or by hand, and the session reads as live until then.
 */
const AHEAD_SLACK_MS = 60_000;

/** The sessions `ahead` names, as detect and watch name them: each reads as live until the clock catches up. */
export function aheadSummary(ahead: DetectedSessions['ahead']): string {
  const more = ahead.length > 1 ? ` and ${ahead.length - 1} more` : '';
  const count = `${ahead.length} session${ahead.length === 1 ? '' : 's'}`;
  return `${count} modified later than this machine's clock says it is now (${ahead[0]!.path}, ${formatAge(ahead[0]!.secs)} ahead${more})`;
}

/** `maxAgeSecs`: only sessions updated this recently; null lists every session. */
export async function detectSessions(providers: ProviderPort[], homes: ProviderHomes, options: { maxAgeSecs: number | null; now?: number }): Promise<DetectedSessions> {
  const now = options.now ?? Date.now();
  // Sub-agent threads are asked for too, so the count of transcripts not listed includes them.
  const { sessions: found, unreadable, unreadableCapped, searched } = await discoverAll(providers, homes, { maxAgeSecs: options.maxAgeSecs, includeSubagents: true });
  const sessions = found.filter((f) => (f.session.kind ?? 'session') === 'session');
  const rows = sessions.map((f) => toDetectRow(f, now)).sort((a, b) => a.age_secs - b.age_secs || a.session_id.localeCompare(b.session_id));
  const unlisted = found
    .filter((f) => (f.session.kind ?? 'session') !== 'session')
    .sort((a, b) => (b.session.mtime_ms ?? 0) - (a.session.mtime_ms ?? 0) || a.session.path.localeCompare(b.session.path))
    .map((f) => f.session.path);
  const ahead = sessions
    .filter((f) => (f.session.mtime_ms ?? now) - now > AHEAD_SLACK_MS)
    .map((f) => ({ path: f.session.path, secs: Math.round((f.session.mtime_ms! - now) / 1000) }))
    .sort((a, b) => b.secs - a.secs || a.path.localeCompare(b.path));
  return { rows, unlisted, unreadable, unreadableCapped, searched, ahead };
}
