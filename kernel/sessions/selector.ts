/**
 * Resolving what a user typed for `<session>`: a path to a transcript, a full session id, or a
 * unique id prefix. Ambiguity is an error that lists the candidates.
 */
import { readFileSync, lstatSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type * as T from '../../schemas/generated/types.js';
import { readPrefix } from '../../sdk/jsonl.js';
import { MAX_UNREADABLE } from '../../sdk/unreadable.js';
import { GobstopperError, usageError } from '../errors.js';
import { encodingHintOf } from './encoding-hint.js';
import type { ProviderHomes, ProviderPort } from './provider-port.js';
import { missingStoresNote, type SearchedStore } from './missing-stores.js';
import { unresumableKind } from '../policy/context.js';
import { shellWord } from '../text/shell-word.js';

export interface ResolvedSession {
  session: T.SessionHandle;
  /** Discovery's tail read, when the session was found by id. */
  discovered: T.DiscoveredSession | null;
}

const MAX_SELECTOR_BYTES = 4096;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0');
const MAX_LISTED_CANDIDATES = 10;

export function checkSelector(selector: string): void {
  if (selector.length === 0) throw usageError('bad_selector', 'session selector is empty');
  if (Buffer.byteLength(selector) > MAX_SELECTOR_BYTES) throw usageError('bad_selector', `session selector is longer than ${MAX_SELECTOR_BYTES} bytes`);
  // No session id holds one; a path may (a directory a client named after a project's), and watch
  // passes the paths discovery found. NUL ends a path in the system call, so no path holds it either.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(selector) && (!looksLikePath(selector) || selector.includes('\u0000'))) {
    throw usageError('bad_selector', 'session selector contains control characters');
  }
}

/** A selector that names a file rather than a session id: it has a slash, a .jsonl ending or a leading dot. */
export function looksLikePath(selector: string): boolean {
  return selector.includes('/') || selector.endsWith('.jsonl') || selector.startsWith('.');
}

/** Finds which provider owns a transcript file. */
export async function resolvePath(path: string, providers: ProviderPort[]): Promise<ResolvedSession> {
  const absolute = resolve(path);
  let st;
  try {
    st = lstatSync(absolute);
  } catch (error) {
    // A directory on the way that cannot be entered hides the file; saying it is missing would send
    // the user looking for a file that is there.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new GobstopperError('session_unreadable', `cannot reach ${absolute}: permission denied on a directory on the way; check that you can enter every directory up to it (${code})`);
    }
    // A name that is not UTF-8 reaches the program with U+FFFD in place of its bytes, and that name
    // opens nothing: "no such file" would deny a file the user can see.
    if (code === 'ENOENT' && absolute.includes('\uFFFD')) {
      throw new GobstopperError('session_unreadable', `cannot open ${absolute}: a folder or file name in the path is not valid UTF-8, which gobstopper cannot open (rename it)`);
    }
    throw new GobstopperError('session_not_found', `no such file: ${absolute}`);
  }
  if (st.isSymbolicLink()) throw new GobstopperError('symlink_refused', `${absolute} is a symbolic link; pass the real path`);
  if (!st.isFile()) throw new GobstopperError('not_a_transcript', `${absolute} is not a regular file`);
  if (hasSqliteMagic(absolute)) throw new GobstopperError('not_a_transcript', `${absolute} is a SQLite store, not a transcript`);
  // An empty session (created, never written) has nothing to compact and nothing to identify it by.
  if (st.size === 0 || (st.size <= 4096 && readFileSync(absolute, 'latin1').trim() === '')) {
    throw new GobstopperError('empty_transcript', `${absolute} is empty: it holds no records yet`);
  }
  const real = realpathSync(absolute);
  const answers = await Promise.all(providers.map((provider) => provider.identify({ path: real })));
  const matches = answers.flatMap((a) => (a.matches && a.session ? [a.session] : []));
  if (matches.length === 0) {
    const hint = encodingHintOf(real);
    throw new GobstopperError('unknown_provider', `${real} is not a transcript any installed provider recognises (${providers.map((p) => p.id).join(', ')})${hint ? `: ${hint}` : ''}`);
  }
  if (matches.length > 1) {
    throw new GobstopperError('ambiguous_provider', `${real} is claimed by several providers: ${matches.map((m) => m.provider).join(', ')}`);
  }
  return { session: matches[0]!, discovered: null };
}

function hasSqliteMagic(path: string): boolean {
  return readPrefix(path, SQLITE_MAGIC.length).equals(SQLITE_MAGIC);
}

/** What every provider can see: its sessions, and the transcript files it found but could not read. */
export interface Discovered {
  sessions: T.DiscoveredSession[];
  unreadable: T.UnreadableTranscript[];
  /** A provider listed as many unreadable files as the protocol takes: there may be more. */
  unreadableCapped: boolean;
  /** The folders each provider looked in, as far as it said. */
  searched: SearchedStore[];
}

/** Every session every provider can see (all ages, sub-agent files excluded). */
export async function discoverAll(providers: ProviderPort[], homes: ProviderHomes, options: { maxAgeSecs?: number | null; includeSubagents?: boolean } = {}): Promise<Discovered> {
  const results = await Promise.all(
    providers.map((provider) =>
      provider.discover({
        home: homes[provider.id] ?? null,
        include_subagents: options.includeSubagents ?? false,
        max_age_secs: options.maxAgeSecs ?? null,
      }),
    ),
  );
  // A provider that lists one file twice (a plugin's slip) still has one session there: listed
  // twice, detect would show it twice and an id would be "ambiguous" between a file and itself.
  const seen = new Set<string>();
  const sessions = results
    .flatMap((r) => r.sessions)
    .filter((s) => {
      const key = `${s.session.provider}\u0000${s.session.path}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return {
    sessions,
    unreadable: results.flatMap((r) => r.unreadable ?? []),
    unreadableCapped: results.some((r) => (r.unreadable?.length ?? 0) >= MAX_UNREADABLE),
    searched: results.flatMap((r, k) => (r.searched ?? []).map((f) => ({ provider: providers[k]!.id, ...f }))),
  };
}

/** "2 transcript files could not be read (…/a.jsonl: permission denied, …)": why a lookup may have missed. */
export function unreadableSummary({ unreadable, unreadableCapped }: Pick<Discovered, 'unreadable' | 'unreadableCapped'>): string {
  const shown = unreadable.slice(0, 2).map((u) => `${u.path}: ${u.reason}`);
  const more = unreadable.length > 2 ? ', …' : '';
  const count = `${unreadableCapped ? 'at least ' : ''}${unreadable.length}`;
  // A provider names a folder it could not search with a trailing slash.
  const folders = unreadable.filter((u) => u.path.endsWith('/')).length;
  const one = unreadable.length === 1 && !unreadableCapped;
  const what = one ? (folders === 1 ? 'folder' : 'transcript file') : folders > 0 ? 'transcript files or folders' : 'transcript files';
  return `${count} ${what} could not be read (${shown.join(', ')}${more})`;
}

/** Resolves a selector: a path, a full id, or a unique id prefix. */
export async function resolveSession(selector: string, providers: ProviderPort[], homes: ProviderHomes = {}): Promise<ResolvedSession> {
  checkSelector(selector);
  if (looksLikePath(selector)) return resolvePath(selector, providers);
  const discovered = await discoverAll(providers, homes);
  const sessions = discovered.sessions.filter((s) => (s.session.kind ?? 'session') === 'session');
  const exact = sessions.filter((s) => s.session.session_id === selector);
  const prefixed = exact.length > 0 ? exact : sessions.filter((s) => s.session.session_id.startsWith(selector));
  // Session ids are UUIDs, which are case-blind: `7D3F` finds `7d3f…` when nothing matches as typed.
  const lower = selector.toLowerCase();
  const matches = prefixed.length > 0 ? prefixed : sessions.filter((s) => s.session.session_id.toLowerCase().startsWith(lower));
  if (matches.length === 1) return { session: matches[0]!.session, discovered: matches[0]! };
  if (matches.length === 0) {
    // A bare file name in the current directory is still a path.
    try {
      if (lstatSync(selector).isFile()) return resolvePath(selector, providers);
    } catch {
      /* not a file either */
    }
    const other = await unresumableNamed(selector, discovered, providers, homes);
    if (other !== null) {
      const what = unresumableKind(other.kind);
      throw new GobstopperError('not_a_session', `'${selector}' names ${what} at ${other.path}, not a session the client can resume; gobstopper verify ${shellWord(other.path)} says what it holds`, {
        details: { session_kind: other.kind ?? null, path: other.path },
      });
    }
    const { unreadable } = discovered;
    // Nothing found anywhere, and a home that does not exist: that is the likeliest why. With
    // sessions elsewhere, a client the user does not run would be named for nothing.
    const missing = discovered.sessions.length === 0 ? missingStoresNote(discovered.searched) : null;
    if (missing !== null) throw new GobstopperError('session_not_found', `no session matching '${selector}': ${missing}`);
    // Every age was searched, so the listing that shows what there is to match is detect's --all one.
    if (unreadable.length === 0) throw new GobstopperError('session_not_found', `no session matching '${selector}' (gobstopper detect --all lists the sessions there are)`);
    throw new GobstopperError('session_not_found', `no session matching '${selector}'; ${unreadableSummary(discovered)}`, { details: { unreadable } });
  }
  throw ambiguousSession(selector, matches.map((m) => m.session));
}

/**
 * The sub-agent transcript or composite a selector names when it names no session: the id is
 * there, and saying so beats a "no session matching" that sends the user looking elsewhere.
 * Sub-agent files are listed only now, so a lookup that finds its session never pays for them.
 */
async function unresumableNamed(selector: string, discovered: Discovered, providers: ProviderPort[], homes: ProviderHomes): Promise<T.SessionHandle | null> {
  const lower = selector.toLowerCase();
  const named = (list: T.DiscoveredSession[]) => list.find((s) => (s.session.kind ?? 'session') !== 'session' && s.session.session_id.toLowerCase().startsWith(lower))?.session ?? null;
  return named(discovered.sessions) ?? named((await discoverAll(providers, homes, { includeSubagents: true })).sessions);
}

/** One session a selector could mean: what tells two files of one id apart is the path. */
export type SessionCandidate = Pick<T.SessionHandle, 'provider' | 'session_id' | 'path'>;

/**
 * The refusal of a selector that names several sessions, given alike by the commands that read a
 * session's file (apply, plan) and those that read its archived states (history, undo, show).
 */
export function ambiguousSession(selector: string, candidates: readonly SessionCandidate[]): GobstopperError {
  const listed = candidates
    .slice(0, MAX_LISTED_CANDIDATES)
    .map((c) => `${c.provider} ${c.session_id} at ${c.path}`)
    .join('; ');
  const more = candidates.length > MAX_LISTED_CANDIDATES ? `; and ${candidates.length - MAX_LISTED_CANDIDATES} more` : '';
  // What to do comes first: the list after it may be cut on a narrow terminal. One id in several
  // places (a copied project directory) cannot be told apart by a longer prefix.
  const oneId = candidates.every((c) => c.session_id === candidates[0]!.session_id);
  const todo = oneId ? 'name it by its path' : 'use a longer prefix or a path';
  // How it was asked cannot pick one: a usage error (exit 2), as an ambiguous snapshot prefix is.
  return usageError('ambiguous_session', `'${selector}' matches ${candidates.length} sessions; ${todo}: ${listed}${more}`, {
    candidates: candidates.map((c) => ({ provider: c.provider, session_id: c.session_id, path: c.path })),
  });
}
