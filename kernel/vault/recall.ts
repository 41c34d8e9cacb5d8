/**
 * `recall`: state cards (the digests compactions leave behind) found anywhere in archived
 * snapshots, ranked by how often the query occurs in their fields. A card is any decoded JSON
 * string value starting with the state-card marker, whatever the provider's record shape, in a
 * record whose bytes spell the marker literally (as every client's JSON writer does). A snapshot's
 * cards come from its card file when it has a usable one, and from reading it otherwise; both give
 * the same answer.
 */
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DigestBlock, RecallRow, VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../errors.js';
import { systemErrorCode } from '../filesystem-codes.js';
import { errorMessage } from '../filesystem-message.js';
import { publishedEntry, readableReceipts } from '../publish/receipt.js';
import { readIndex } from './index-file.js';
import { cardFileOf, writeCardFile, type IndexedCard } from './card-file.js';
import { indexedCards, readSnapshotCards } from './card-index.js';
import { withSharedCustody } from './custody.js';
import { LockBusyError } from './lock.js';
import { checkPrivateDir, ensurePrivateDir } from './private-fs.js';
import type { LoadedManifest } from './manifest.js';
import { countOccurrences } from './json-text.js';
import { vaultExists, type VaultLayout } from './layout.js';
import { checkSessionSelector, resolveShaPrefix } from './selectors.js';
import { quotedFlagNumber } from '../text/numbers.js';

export const DEFAULT_RECALL_LIMIT = 20;
export const MAX_RECALL_LIMIT = 100;
const MAX_RECALL_QUERY_BYTES = 1024;

export type { RecallRow };

export interface RecallRequest {
  query?: string;
  limit?: number;
  /** Only sessions whose id starts with this. */
  session?: string;
  /** Only the snapshot this names (a unique prefix of at least 4 hex characters, or a full id). */
  sha?: string;
}

function cardFields(digest: DigestBlock): string[] {
  const fields: string[] = [];
  for (const single of [digest.goal, digest.summary, digest.current_work, digest.context]) if (single) fields.push(single);
  for (const list of [digest.concepts, digest.files_touched, digest.decisions, digest.errors, digest.open_tasks]) if (list) fields.push(...list);
  return fields;
}

/** Case-insensitive occurrences of `query` across every field of the card. */
export function scoreCard(digest: DigestBlock, query: string): number {
  const needle = query.toLowerCase();
  let score = 0;
  for (const field of cardFields(digest)) score += countOccurrences(field.toLowerCase(), needle);
  return score;
}

function checkRequest(request: RecallRequest): { query: string | undefined; limit: number } {
  const limit = request.limit ?? DEFAULT_RECALL_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RECALL_LIMIT) throw usageError('invalid_limit', `--limit must be a whole number from 1 to ${MAX_RECALL_LIMIT}, got ${quotedFlagNumber(limit, 1, MAX_RECALL_LIMIT)}`);
  // A query that is given must say something: an empty one would quietly mean "every card".
  if (request.query !== undefined && request.query.trim() === '') throw usageError('invalid_query', '--query is empty; give a phrase to look for, or leave it out to list every card');
  const query = request.query;
  if (query !== undefined && Buffer.byteLength(query) > MAX_RECALL_QUERY_BYTES) throw usageError('invalid_query', `--query must be at most ${MAX_RECALL_QUERY_BYTES} bytes`);
  if (request.session !== undefined) checkSessionSelector(request.session);
  return { query, limit };
}

interface Found {
  row: RecallRow;
  order: number;
}

/** The best `limit` cards, and how many matched in all: a listing cut at --limit says so. */
export interface RecallAnswer {
  cards: RecallRow[];
  found: number;
}

export async function recallCards(
  layout: VaultLayout,
  request: RecallRequest = {},
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = () => undefined,
): Promise<RecallAnswer> {
  const { query, limit } = checkRequest(request);
  // A snapshot asked for by id that is not there is an error, not an empty answer.
  const only = request.sha === undefined ? null : await resolveShaPrefix(layout, request.sha);
  if (!(await vaultExists(layout))) return { cards: [], found: 0 };
  // Newest entry per snapshot labels it; newest snapshots are read first so a card repeated in
  // later archived states of the same session is reported from its newest one.
  const newest = new Map<string, VaultEntry>();
  // A published fork's own bytes are retained too (without an index entry): its card is found the
  // moment apply has written it, not only once the fork is archived.
  // Receipts only add the forks' own cards: a damaged one costs its fork's, not the other forks'
  // nor the answer, and the caller is told what is missing from it.
  const receipts = await readableReceipts(layout, (error) => {
    warn(`${(error as Error).message}; the state cards of the fork it published are left out of this answer`);
  }).catch((error: unknown) => {
    warn(`${(error as Error).message}; the state cards of published forks are left out of this answer`);
    return [];
  });
  const published = receipts.filter((r) => r.completed).map(publishedEntry);
  const entries = [...(await readIndex(layout)), ...published].sort((a, b) => a.ts - b.ts);
  // The index line says whose session a snapshot holds; without one there is nothing to label its
  // cards with, and an empty answer would say the snapshot holds none.
  if (only !== null && !entries.some((e) => e.sha256 === only)) {
    throw new GobstopperError('snapshot_not_indexed', `snapshot ${only.slice(0, 16)} has no index line, so recall cannot tell whose session it holds; gobstopper show ${only} reads it`, {
      details: { sha256: only },
    });
  }
  for (const entry of entries.reverse()) {
    if (request.session !== undefined && !entry.session_id.toLowerCase().startsWith(request.session.toLowerCase())) continue;
    if (only !== null && entry.sha256 !== only) continue;
    if (!newest.has(entry.sha256)) newest.set(entry.sha256, entry);
  }
  const useCardFiles = await cardFilesUsable(layout);
  let filling = useCardFiles;
  const presentChunks = new Set<string>();
  const seen = new Set<string>();
  const found: Found[] = [];
  for (const entry of newest.values()) {
    // A snapshot's cards count only once all of it has been read back and verified, or its card
    // file read and every chunk found in place.
    const cards: Array<{ key: string; row: RecallRow }> = [];
    const add = (recordIndex: number, sha: string, digest: DigestBlock) => {
      const score = query === undefined ? 0 : scoreCard(digest, query);
      if (query !== undefined && score === 0) return;
      const key = `${entry.provider}\0${entry.session_id}\0${sha}`;
      cards.push({ key, row: { snapshot_sha: entry.sha256, ts: entry.ts, provider: entry.provider, session_id: entry.session_id, record_index: recordIndex, score, digest } });
    };
    try {
      let cards = useCardFiles ? await indexedCards(layout, entry.sha256, env, presentChunks) : null;
      if (cards === null) {
        const read = await readSnapshotCards(layout, entry.sha256, env);
        cards = read.cards;
        if (filling) filling = await fillCardFile(layout, entry.sha256, read.loaded, cards);
      }
      for (const c of cards) add(c.record_index, c.card_sha256, c.digest);
    } catch (error) {
      // One damaged snapshot costs its own cards, not every session's; asked for by id, it is the answer.
      const why = only === null ? whyLeftOut(layout, entry.sha256, error) : null;
      if (why === null) throw error;
      warn(`snapshot ${entry.sha256.slice(0, 16)} of ${entry.provider} ${entry.session_id} is left out: ${why}`);
      continue;
    }
    for (const { key, row } of cards) {
      if (seen.has(key)) continue;
      seen.add(key);
      found.push({ row, order: found.length });
    }
  }
  found.sort((a, b) => b.row.score - a.row.score || b.row.ts - a.row.ts || a.order - b.order);
  return { cards: found.slice(0, limit).map((f) => f.row), found: found.length };
}

/**
 * Card files are read and written only in a private directory of ours, made here when a vault
 * archived before card files has none; without one every snapshot is read instead.
 */
async function cardFilesUsable(layout: VaultLayout): Promise<boolean> {
  try {
    if (!(await checkPrivateDir(layout.cards))) await ensurePrivateDir(layout.cards);
    return true;
  } catch {
    return false;
  }
}

/** How long recall waits behind a prune before leaving a card file unwritten: it is only a saving. */
const FILL_CUSTODY_WAIT_MS = 1000;

/**
 * A snapshot recall had to read whole (stored before card files, or its card file unusable) gets
 * the card file it lacked, from the cards this read just verified, so the next recall need not
 * read it. Written in a snapshotter's custody, and only while the manifest is still stored, so that
 * a prune that removed the snapshot meanwhile is not left an orphan card file. Best effort: the file
 * only ever saves work, and a write left undone costs the next recall this same read. False when a
 * prune holds the vault: the rest of this recall writes none rather than wait behind it again.
 */
async function fillCardFile(layout: VaultLayout, sha: string, loaded: LoadedManifest, cards: IndexedCard[]): Promise<boolean> {
  const card = cardFileOf({ manifestSha256: sha, sourceSha256: loaded.manifest.source_sha256, bytes: loaded.manifest.bytes }, cards);
  try {
    await withSharedCustody(
      layout,
      async () => {
        if (await manifestStored(layout, sha)) await writeCardFile(layout, card);
      },
      FILL_CUSTODY_WAIT_MS,
    );
  } catch (error) {
    return !(error instanceof LockBusyError);
  }
  return true;
}

async function manifestStored(layout: VaultLayout, sha: string): Promise<boolean> {
  return lstat(join(layout.manifests, sha)).then(
    (st) => st.isFile(),
    () => false,
  );
}

/**
 * Why one snapshot's cards cannot be read, when that is the snapshot's own trouble: damaged, its
 * manifest gone, one of its own files unsafe to read (a link or a directory in a chunk's place), or
 * a file the system would not read. null for anything else (the vault's own directories among it),
 * which stops the answer.
 */
function whyLeftOut(layout: VaultLayout, sha256: string, error: unknown): string | null {
  if (error instanceof GobstopperError) {
    if (error.code === 'vault_damaged') return error.message;
    // Archived under a higher GOBSTOPPER_MAX_TRANSCRIPT_BYTES than is set now: intact, and the
    // other snapshots' cards are still the answer.
    if (error.code === 'transcript_too_large') return error.message;
    // A manifest moved aside (as a damaged one's repair says) leaves its line naming nothing.
    if (error.code === 'snapshot_not_found') return `its manifest is not in the vault (restore manifests/${sha256} from a backup)`;
    const file = (error.details as { file?: unknown } | undefined)?.file;
    const ownFile = typeof file === 'string' && (dirname(file) === layout.chunks || dirname(file) === layout.manifests);
    return error.code === 'vault_insecure' && ownFile ? error.message : null;
  }
  return systemErrorCode(error) !== null ? errorMessage(error) : null;
}