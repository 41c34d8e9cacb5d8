/**
 * The state cards of a snapshot: collected from the records a CardScanner found once the snapshot
 * is stored (or from every record, reading a snapshot whole), and read back by recall from the card
 * file instead of the snapshot's bytes.
 */
import { createHash } from 'node:crypto';
import { parseStateCard } from '../../sdk/state-card.js';
import { cardFileOf, usableCardFile, writeCardFile, type FullCardFileClaim, type IndexedCard } from './card-file.js';
import { MARKER_BYTES, type CardLine } from './card-scan.js';
import { checkChunkPresent, readChunk } from './chunks.js';
import { forEachStringValue, parseJsonLine } from './json-text.js';
import type { VaultLayout } from './layout.js';
import { CHUNK_BYTES } from './limits.js';
import { chunkLength, loadManifest, type LoadedManifest } from './manifest.js';
import type { WriteAll } from './private-fs.js';
import { forEachRecord } from './records.js';

function cardSha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/**
 * The state cards of one record, in the order recall has always visited them, added to `into`. A
 * record that does not spell the marker literally holds none (the rule recall keeps either way).
 */
export function cardsInRecord(recordIndex: number, bytes: Buffer, into: IndexedCard[]): void {
  if (!bytes.includes(MARKER_BYTES)) return;
  const parsed = parseJsonLine(bytes);
  if (parsed === undefined) return;
  forEachStringValue(parsed, (value) => {
    const digest = parseStateCard(value);
    if (digest) into.push({ record_index: recordIndex, card_sha256: cardSha256(value), digest });
  });
}

/** Bytes [start, end) of the source a card scan ran over. */
export type ReadSpan = (start: number, end: number) => Promise<Buffer>;

export async function collectCards(lines: readonly CardLine[], read: ReadSpan): Promise<IndexedCard[]> {
  const cards: IndexedCard[] = [];
  for (const line of lines) cardsInRecord(line.recordIndex, await read(line.start, line.end), cards);
  return cards;
}

/** The cards of snapshot `sha` read from all of its bytes (each chunk verified as it is read), and its manifest. */
export async function readSnapshotCards(layout: VaultLayout, sha: string, env: NodeJS.ProcessEnv): Promise<{ cards: IndexedCard[]; loaded: LoadedManifest }> {
  const cards: IndexedCard[] = [];
  const { loaded } = await forEachRecord(layout, sha, ({ index, bytes }) => cardsInRecord(index, bytes, cards), env);
  return { cards, loaded };
}

/**
 * Reads spans of a stored snapshot from its chunks, each verified against its name as any read of
 * the vault is. Spans come in order, so the chunk last read is kept for the next one.
 */
export function chunkSpanReader(layout: VaultLayout, chunks: readonly string[], bytes: number): ReadSpan {
  let held = -1;
  let buffer: Buffer | null = null;
  let chunk: Buffer = Buffer.alloc(0);
  return async (start, end) => {
    const out = Buffer.allocUnsafe(end - start);
    for (let at = start; at < end; ) {
      const i = Math.floor(at / CHUNK_BYTES);
      if (i !== held) {
        buffer ??= Buffer.allocUnsafe(CHUNK_BYTES);
        chunk = await readChunk(layout.chunks, chunks[i]!, chunkLength(bytes, i), buffer);
        held = i;
      }
      const from = at - i * CHUNK_BYTES;
      const take = Math.min(end - at, chunk.length - from);
      chunk.copy(out, at - start, from, from + take);
      at += take;
    }
    return out;
  };
}

export interface StoredBytes {
  manifestSha256: string;
  sourceSha256: string;
  bytes: number;
  chunks: readonly string[];
}

/**
 * Writes the card file of a snapshot just stored and read back, from the records its scan found.
 * A valid one already there (the same bytes archived before) is kept: it holds the same cards.
 */
export async function indexStoredCards(layout: VaultLayout, stored: StoredBytes, lines: readonly CardLine[], writeAll?: WriteAll): Promise<void> {
  const claim: FullCardFileClaim = { manifestSha256: stored.manifestSha256, sourceSha256: stored.sourceSha256, bytes: stored.bytes };
  if ((await usableCardFile(layout, claim)) !== null) return;
  const cards = await collectCards(lines, chunkSpanReader(layout, stored.chunks, stored.bytes));
  await writeCardFile(layout, cardFileOf(claim, cards), writeAll);
}

/**
 * The cards of snapshot `sha` from its card file, or null when there is none to trust (recall then
 * reads the snapshot). The snapshot must still be there to be reported from: its manifest is loaded
 * and each chunk checked to be in place at its size, so a missing or cut chunk, or a manifest moved
 * aside, throws what reading it would. `present` remembers chunks already checked.
 */
export async function indexedCards(layout: VaultLayout, sha: string, env: NodeJS.ProcessEnv, present: Set<string>): Promise<IndexedCard[] | null> {
  const card = await usableCardFile(layout, { manifestSha256: sha });
  if (card === null) return null;
  const { manifest } = await loadManifest(layout, sha, env);
  if (manifest.source_sha256 !== card.source_sha256 || manifest.bytes !== card.bytes) return null;
  for (const [i, chunk] of manifest.chunks.entries()) {
    const length = chunkLength(manifest.bytes, i);
    const key = `${chunk}:${length}`;
    if (present.has(key)) continue;
    await checkChunkPresent(layout.chunks, chunk, length);
    present.add(key);
  }
  return card.cards;
}
