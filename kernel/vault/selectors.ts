/**
 * Turning what a user typed into snapshots: full ids, unique id prefixes, and session selectors
 * (a session-id prefix or a path) matched against the index.
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../errors.js';
import { badSha, snapshotNotFound } from './errors.js';
import { readIndex } from './index-file.js';
import { manifestOfEntry } from './indexed-manifest.js';
import type { VaultLayout } from './layout.js';
import { namesIn } from './private-fs.js';
import { ambiguousSession, checkSelector, looksLikePath } from '../sessions/selector.js';
import { readableReceipts } from '../publish/receipt.js';

const HEX64 = /^[0-9a-f]{64}$/;

/** A full snapshot id (64 hex, any case), returned lowercase. */
export function parseFullSha(input: string, what = 'snapshot id'): string {
  const value = input.toLowerCase();
  // A narrow terminal cuts the ids in history's table; JSON never does.
  const where = 'gobstopper history <session> --json and gobstopper vault --json print full ids, as sha256';
  if (!/^[0-9a-f]*$/.test(value)) throw badSha(what, input, `a full 64-character hex sha256 (${where})`);
  if (value.length !== 64) throw badSha(what, input, `a full sha256: it has ${value.length} hex characters, 64 are required (${where})`);
  return value;
}

/**
 * From this many hex characters, a target that could name a session or a snapshot (show, undo) is
 * read as a snapshot id: shorter words are session id prefixes, so a typo never picks a snapshot.
 */
export const SNAPSHOT_TARGET_MIN_HEX = 16;

/** A target `show` and `undo` read as a snapshot id rather than a session. */
export function looksLikeSnapshotId(target: string): boolean {
  return isHexPrefix(target) && target.length >= SNAPSHOT_TARGET_MIN_HEX;
}

/**
 * A hex word longer than any id names no session and no snapshot: said as the length it has,
 * where show and undo would otherwise look for a session of that name.
 */
export function refuseOverlongSnapshotId(target: string, what = 'snapshot id'): void {
  if (/^[0-9a-fA-F]{65,}$/.test(target)) throw badSha(what, target, `a snapshot id or prefix: it has ${target.length} hex characters, a full id has 64`);
}

export function isHexPrefix(input: string): boolean {
  return /^[0-9a-fA-F]{1,64}$/.test(input);
}

/** Every manifest id stored in the vault (indexed or not). */
export async function listManifestIds(layout: VaultLayout): Promise<string[]> {
  return (await namesIn(layout.manifests)).filter((name) => HEX64.test(name));
}

/**
 * The snapshot id for a full sha256 that may instead be the archived source's own digest (a
 * receipt's `snapshot_sha256`, the original's field, holds that): the same bytes always make the
 * same snapshot, so the digest names exactly one. Returned unchanged when nothing archived has it.
 */
export async function snapshotIdFor(layout: VaultLayout, sha: string): Promise<string> {
  if ((await listManifestIds(layout)).includes(sha)) return sha;
  return (await indexedSnapshot(layout, (e) => e.sha256 === sha || e.source_sha256 === sha)) ?? (await retainedSnapshot(layout, sha)) ?? sha;
}

/**
 * The retained copy of a fork whose bytes have digest `digest` (its receipt's output_sha256, the
 * source sha256 show prints for it): no index line names it, yet the same bytes make one snapshot.
 * A receipt that cannot be read is left to the commands that report it.
 */
async function retainedSnapshot(layout: VaultLayout, digest: string): Promise<string | null> {
  const receipts = await readableReceipts(layout).catch(() => []);
  return receipts.find((r) => r.output_sha256 === digest)?.output_manifest_sha256 ?? null;
}

/**
 * The snapshot of the first index line `matches` accepts, its manifest checked: a line whose
 * manifest is gone is damage to report as such, since `vault` lists that snapshot and "no such
 * snapshot" would contradict it. A damaged index fails closed, as every read of it does.
 */
async function indexedSnapshot(layout: VaultLayout, matches: (e: VaultEntry) => boolean): Promise<string | null> {
  const named = (await readIndex(layout)).find(matches);
  if (named === undefined) return null;
  await manifestOfEntry(layout, named);
  return named.sha256;
}

/**
 * Fewest hex characters a snapshot prefix may have where only a snapshot is meant (diff, undo --sha):
 * one or two characters are a slip far more often than an id, and a small vault would match them.
 */
export const MIN_SHA_PREFIX = 4;

/** Refuses what cannot be a snapshot id or prefix (4–64 hex characters) before any vault is read. */
export function checkShaPrefix(input: string, what = 'snapshot'): void {
  if (!isHexPrefix(input)) {
    throw badSha(what, input, /^[0-9a-fA-F]+$/.test(input) ? `a snapshot id or prefix: it has ${input.length} hex characters, a full id has 64` : 'a hex snapshot id or prefix');
  }
  if (input.length < MIN_SHA_PREFIX) throw badSha(what, input, `a snapshot id or prefix of at least ${MIN_SHA_PREFIX} hex characters`);
}

/** How many of the snapshots an ambiguous prefix matches its message names, keeping it to one readable line. */
const MAX_NAMED_CANDIDATES = 4;

/** A unique snapshot for a 4–64 hex prefix (or a full source digest, as snapshotIdFor takes it). */
export async function resolveShaPrefix(layout: VaultLayout, input: string, what = 'snapshot'): Promise<string> {
  checkShaPrefix(input, what);
  const prefix = input.toLowerCase();
  const matches = (await listManifestIds(layout)).filter((id) => id.startsWith(prefix));
  if (matches.length === 0) {
    const named = (await indexedSnapshot(layout, (e) => e.sha256.startsWith(prefix) || (prefix.length === 64 && e.source_sha256 === prefix))) ?? (prefix.length === 64 ? await retainedSnapshot(layout, prefix) : null);
    if (named === null) throw snapshotNotFound(prefix);
    return named;
  }
  // The full ids, as an ambiguous session prefix lists its sessions: a script can pick one.
  if (matches.length > 1) {
    const candidates = [...matches].sort();
    // Named in the message too: a retained fork copy or an unindexed snapshot is in no listing to look it up in.
    const shown = candidates.slice(0, MAX_NAMED_CANDIDATES).join(', ');
    const more = candidates.length > MAX_NAMED_CANDIDATES ? `, and ${candidates.length - MAX_NAMED_CANDIDATES} more (--json lists them all)` : '';
    throw usageError('ambiguous_sha', `snapshot prefix ${prefix} matches ${matches.length} snapshots (${shown}${more}); ambiguous, use the full SHA-256`, { candidates });
  }
  return matches[0]!;
}

/** The vault reads session selectors by the same rules as the session lookup. */
export { checkSelector as checkSessionSelector, looksLikePath };

/** The paths `selector` may be recorded under: as given (absolute) and as the file system resolves its directory. */
export async function pathForms(selector: string): Promise<Set<string>> {
  const absolute = resolve(selector);
  const forms = new Set([absolute]);
  try {
    forms.add(join(await realpath(dirname(absolute)), basename(absolute)));
  } catch {
    // The session file or its directory may be gone; archived paths still match literally.
  }
  return forms;
}

/** Entries whose session id starts with `selector`, or whose path is `selector` (when it is a path). */
export async function filterBySession(entries: VaultEntry[], selector: string): Promise<VaultEntry[]> {
  checkSelector(selector);
  if (looksLikePath(selector)) {
    const forms = await pathForms(selector);
    const byPath = entries.filter((e) => forms.has(e.path));
    const absolute = resolve(selector);
    const st = await lstat(absolute).catch(() => null);
    if (byPath.length === 0 && st?.isSymbolicLink()) await refuseLinkSelector(absolute);
    // States archived before the move belong to the same history as those archived here since.
    const moved = new Set(st?.isFile() ? await movedHere(entries, absolute) : []);
    if (byPath.length > 0 || moved.size > 0) return entries.filter((e) => forms.has(e.path) || moved.has(e));
    if (selector.includes('/')) return byPath;
  }
  // Session ids are matched as plan and verify match them: without regard to case.
  const prefix = selector.toLowerCase();
  return entries.filter((e) => e.session_id.toLowerCase().startsWith(prefix));
}

/**
 * The states of a file archived at a path that is gone, now found at `absolute` (a file) under the same
 * name: the file moved (Codex moves a rollout it archives into archived_sessions/), and the name,
 * which holds the session id, says it is the same session. Matched only while the old path is gone
 * and the new one is a file, so a copy beside its original stays a session of its own, and only
 * when the name does hold the archived session's id: a hand-named file (`notes.jsonl`) says nothing
 * of whose it is.
 */
async function movedHere(entries: VaultEntry[], absolute: string): Promise<VaultEntry[]> {
  const name = basename(absolute);
  const lowered = name.toLowerCase();
  const named = entries.filter((e) => basename(e.path) === name && e.session_id.length > 0 && lowered.includes(e.session_id.toLowerCase()));
  const paths = [...new Set(named.map((e) => e.path))];
  const gone = new Set(await filterAsync(paths, async (path) => !(await exists(path))));
  return named.filter((e) => gone.has(e.path));
}

/**
 * The index records a session under the file's own path, never a link's: a link (`absolute`)
 * matches nothing, and "not archived" would deny a session the vault holds. Said as the session
 * commands say it, with the path to pass instead.
 */
async function refuseLinkSelector(absolute: string): Promise<never> {
  const target = await realpath(absolute).catch(() => null);
  throw new GobstopperError('symlink_refused', `${absolute} is a symbolic link; pass the real path${target === null ? '' : ` (${target})`}`);
}

/**
 * The entries of exactly one archived session: one provider and id. An id archived from two files
 * that both still exist (a copied project folder) is two sessions, refused as the session lookup
 * refuses them, so `history` never mixes two files' states and `undo` never restores one beside the
 * other. A path that is gone is the same session moved (Codex moves a rollout it archives into
 * archived_sessions/): its states stay in the session's history.
 */
export async function selectOneSession(entries: VaultEntry[], selector: string): Promise<VaultEntry[]> {
  const matches = await filterBySession(entries, selector);
  if (matches.length === 0) throw new GobstopperError('session_not_archived', `no archived session matches '${selector}' (gobstopper vault lists them; apply and snapshot archive a session)`);
  const exact = matches.filter((e) => e.session_id.toLowerCase() === selector.toLowerCase());
  const chosen = exact.length > 0 ? exact : matches;
  const places = await distinctSessions(chosen);
  if (places.length > 1) throw ambiguousSession(selector, places);
  return chosen;
}

/** One entry per session a user could mean: per provider and id, and per file of it that still exists. */
async function distinctSessions(entries: VaultEntry[]): Promise<VaultEntry[]> {
  const byId = new Map<string, Map<string, VaultEntry>>();
  for (const e of entries) {
    const key = `${e.provider}\0${e.session_id}`;
    const paths = byId.get(key) ?? new Map<string, VaultEntry>();
    if (!paths.has(e.path)) paths.set(e.path, e);
    byId.set(key, paths);
  }
  const out: VaultEntry[] = [];
  for (const paths of byId.values()) {
    const all = [...paths.values()];
    const present = all.length > 1 ? await filterAsync(all, (e) => exists(e.path)) : all;
    out.push(...(present.length > 1 ? present : all.slice(0, 1)));
  }
  return out;
}

const exists = (path: string) => lstat(path).then(() => true, () => false);

async function filterAsync<T>(items: T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept = await Promise.all(items.map(keep));
  return items.filter((_, i) => kept[i]);
}
